/**
 * The import's collector of a data file's rows: columns of file-local ids as the file is read, made into the query
 * engine's RowIndex once the final ids are known (and, for the SQL engine's tests, the row table's COPY).
 */
import { BinaryCopyWriter } from '../../db/binary-copy.js';
import { nextTurn } from '../../event-loop.js';
import {
  ascendingDictionary,
  CHUNK_BITS,
  CHUNK_ROWS,
  codesFor,
  IndicatorBuilder,
  RowIds,
  RowIndex,
  type FacetColumn,
  type IndicatorColumn,
} from '../query/engine/index.js';

/**
 * A column of ids from 0 collected by row before its length is known, in fixed chunks (no copy as it grows), two bytes
 * a row until an id needs more (local ids are mostly few: 5,000,000 rows of eight columns hold 80 MB, not 160).
 */
class ChunkedIds {
  private chunks: Array<Uint16Array | Int32Array> = [];
  private wide = false;
  private first = -1;
  /** Whether two rows hold different ids. */
  varies = false;
  /** The largest id set. */
  max = 0;

  set(row: number, value: number): void {
    if (value !== this.first) {
      if (this.first === -1) this.first = value;
      else this.varies = true;
      if (value > this.max) this.max = value;
    }
    if (value > 0xffff && !this.wide) this.widen();
    const k = row >>> CHUNK_BITS;
    const chunk =
      this.chunks[k] ?? (this.chunks[k] = this.wide ? new Int32Array(CHUNK_ROWS) : new Uint16Array(CHUNK_ROWS));
    chunk[row & (CHUNK_ROWS - 1)] = value;
  }

  get(row: number): number {
    return this.chunks[row >>> CHUNK_BITS]![row & (CHUNK_ROWS - 1)]!;
  }

  /** Which ids the first `rows` rows hold: `held[id]` is 1 for each. */
  held(rows: number): Uint8Array {
    const held = new Uint8Array(this.max + 1);
    for (let k = 0; k < this.chunks.length; k++) {
      const chunk = this.chunks[k]!;
      const end = Math.min(CHUNK_ROWS, rows - k * CHUNK_ROWS);
      for (let i = 0; i < end; i++) held[chunk[i]!] = 1;
    }
    return held;
  }

  release(): void {
    this.chunks = [];
  }

  private widen(): void {
    this.wide = true;
    this.chunks = this.chunks.map((chunk) => Int32Array.from(chunk));
  }
}

/** What a RowIndexCollector's file-local ids stand for, once the import knows it. */
export interface CollectedRowMeaning {
  /** Each row's id, by row as collected; without it, the row's place in the collection from 1 (file order). */
  rowIds?: Int32Array;
  /** Final time period id by local id - 1. */
  timePeriodIds: ArrayLike<number>;
  /** Level code by local id - 1. */
  levelCodes: readonly string[];
  /** Per facet column, the final id by local id - 1; local id 0 (no location or option in the row) stays 0. */
  facetIds: ReadonlyMap<string, ArrayLike<number | undefined>>;
  /** The columns in the order the index keeps them: the order a build from the rows gives them. */
  facetOrder: readonly string[];
  indicatorOrder: readonly string[];
}

/** The final id of a local facet id: 0 (no location or option in the row) stays 0, as does a local id without one. */
function finalFacetId(finalIds: ArrayLike<number | undefined>, local: number): number {
  return local === 0 ? 0 : (finalIds[local - 1] ?? 0);
}

/**
 * A facet column in position order as the index holds it: the final ids its rows hold, ascending (the dictionary),
 * and each position's code in it. What `dictionaryEncode` makes of the column's final ids, but the dictionary comes
 * from the few local ids the rows hold, and each position's code from one array lookup by its local id: no column
 * of final ids is made and no set is built over the rows (a 5M-row import made a 20 MB array and a pass of set
 * insertions per column).
 */
function facetInPositionOrder(
  locals: ChunkedIds,
  finalIds: ArrayLike<number | undefined>,
  rowAt: Int32Array,
): FacetColumn {
  const n = rowAt.length;
  const held = locals.held(n);
  const finalOfLocal = new Int32Array(held.length);
  const finals = new Set<number>();
  for (let local = 0; local < held.length; local++) {
    if (!held[local]) continue;
    finalOfLocal[local] = finalFacetId(finalIds, local);
    finals.add(finalOfLocal[local]!);
  }
  const { dictionary, codeOf } = ascendingDictionary(finals);
  const codeOfLocal = finalOfLocal.map((id, local) => (held[local] ? codeOf.get(id)! : 0));
  const codes = codesFor(dictionary.length, n);
  for (let p = 0; p < n; p++) codes[p] = codeOfLocal[locals.get(rowAt[p]!)]!;
  return { dictionary, codes };
}

/**
 * Collects rows in any order with file-local ids (the import, as it reads the file) and makes the RowIndex once the
 * final ids are known: the same index, to the byte once stored, that a RowIndexBuilder makes from the row table in
 * default result order (time period newest first, then row id), without reading the rows back from the database.
 */
export class RowIndexCollector {
  private readonly timePeriods = new ChunkedIds();
  private readonly levels = new ChunkedIds();
  private readonly facets: ChunkedIds[];
  private readonly indicators: IndicatorBuilder[];
  private count = 0;

  constructor(
    private readonly facetColumns: readonly string[],
    private readonly indicatorColumns: readonly string[],
  ) {
    this.facets = facetColumns.map(() => new ChunkedIds());
    this.indicators = indicatorColumns.map(() => new IndicatorBuilder());
  }

  get rows(): number {
    return this.count;
  }

  /** The next row: its local time period and level ids (from 1), local facet ids (0: none) and indicator texts, in the collector's column order. */
  add(timePeriod: number, level: number, facets: ArrayLike<number>, indicators: ArrayLike<string>): void {
    const row = this.count++;
    this.timePeriods.set(row, timePeriod);
    this.levels.set(row, level);
    for (let c = 0; c < this.facets.length; c++) this.facets[c]!.set(row, facets[c]!);
    for (let c = 0; c < this.indicators.length; c++) this.indicators[c]!.add(row, indicators[c]!);
  }

  /**
   * The facet columns, and `geographic_level`, whose rows do not all hold the same id (a column that does matches
   * every row or none of any criterion on it).
   */
  varyingColumns(): string[] {
    return [
      ...(this.levels.varies ? ['geographic_level'] : []),
      ...this.facetColumns.filter((_, c) => this.facets[c]!.varies),
    ];
  }

  /** A row's local id in a facet column (row orders that depend on the locations are computed from these). */
  localId(column: string, row: number): number {
    const c = this.facetColumns.indexOf(column);
    if (c < 0) throw new Error(`No collected column ${column}`);
    return this.facets[c]!.get(row);
  }

  /**
   * The index. Gives way to the event loop between columns (the import sends the row table's statements meanwhile)
   * and lets go of each collected column once it is made.
   */
  async finish(meaning: CollectedRowMeaning, rowAt = this.defaultOrder(meaning)): Promise<RowIndex> {
    const n = this.count;
    // The largest columns first, each let go of once made: what is held at once stays near the collected columns.
    const facets = new Map<string, FacetColumn>();
    for (const column of meaning.facetOrder) {
      const c = this.facetColumns.indexOf(column);
      const finalIds = meaning.facetIds.get(column);
      if (c < 0 || !finalIds) throw new Error(`No collected column ${column}`);
      const locals = this.facets[c]!;
      facets.set(column, facetInPositionOrder(locals, finalIds, rowAt));
      locals.release();
      await nextTurn();
    }
    const indicators = new Map<string, IndicatorColumn>();
    for (const column of meaning.indicatorOrder) {
      const c = this.indicatorColumns.indexOf(column);
      if (c < 0) throw new Error(`No collected column ${column}`);
      indicators.set(column, this.indicators[c]!.finish(n, rowAt));
      this.indicators[c] = new IndicatorBuilder();
      await nextTurn();
    }

    const ids = new Int32Array(n);
    for (let p = 0; p < n; p++) ids[p] = this.rowId(meaning, rowAt[p]!);
    const timePeriodIds: number[] = [];
    const starts: number[] = [];
    for (let p = 0; p < n; p++) {
      const id = this.timePeriodId(meaning, rowAt[p]!);
      if (id !== timePeriodIds.at(-1)) {
        timePeriodIds.push(id);
        starts.push(p);
      }
    }
    this.timePeriods.release();
    const timePeriodStarts = Int32Array.from([...starts, n]);
    // Level codes numbered by first appearance in position order, as the builder numbers them.
    const levelCodes: string[] = [];
    const codeOfLocal = new Map<number, number>();
    const levels = new Uint8Array(n);
    for (let p = 0; p < n; p++) {
      const local = this.levels.get(rowAt[p]!);
      let code = codeOfLocal.get(local);
      if (code === undefined) {
        if (levelCodes.length === 256) throw new Error('More than 256 geographic levels');
        code = levelCodes.push(meaning.levelCodes[local - 1]!) - 1;
        codeOfLocal.set(local, code);
      }
      levels[p] = code;
    }
    this.levels.release();
    return new RowIndex({
      ids: RowIds.of(ids, timePeriodStarts),
      timePeriodIds: Int32Array.from(timePeriodIds),
      timePeriodStarts,
      levelCodes,
      levels,
      facets,
      indicators,
    });
  }

  /**
   * The rows as the row table's binary COPY (id, time_period_id, geographic_level, then the collector's facet and
   * indicator columns), in position order with their final ids, each indicator cell the text the file had.
   */
  *rowTableCopy(
    meaning: Omit<CollectedRowMeaning, 'facetOrder' | 'indicatorOrder'>,
    rowAt: Int32Array,
  ): Generator<Buffer> {
    const writer = new BinaryCopyWriter();
    const facetCount = this.facetColumns.length;
    const fields = 3 + facetCount + this.indicators.length;
    const finalIds = this.facetColumns.map((column) => {
      const ids = meaning.facetIds.get(column);
      if (!ids) throw new Error(`No final ids for ${column}`);
      return ids;
    });
    const texts = new Array<string>(this.indicators.length);
    const ascii = new Array<boolean>(this.indicators.length);
    // The printings of small whole numbers (most cells are counts), made once each.
    const printed: string[] = [];
    for (let p = 0; p < rowAt.length; p++) {
      const r = rowAt[p]!;
      const level = meaning.levelCodes[this.levels.get(r) - 1]!;
      let bytes = 8 * (2 + facetCount) + 4 + level.length;
      for (let c = 0; c < texts.length; c++) {
        const indicator = this.indicators[c]!;
        ascii[c] = indicator.holdsNumber(r);
        if (ascii[c]) {
          const number = indicator.numberAt(r);
          texts[c] =
            number >= 0 && number < 65536 && Number.isInteger(number)
              ? (printed[number] ??= String(number))
              : String(number);
        } else texts[c] = indicator.exceptionAt(r);
        bytes += 4 + 3 * texts[c]!.length;
      }
      const full = writer.tuple(fields, bytes);
      if (full) yield full;
      writer.int4(this.rowId(meaning, r));
      writer.int4(this.timePeriodId(meaning, r));
      writer.asciiText(level);
      for (let c = 0; c < facetCount; c++) writer.int4(finalFacetId(finalIds[c]!, this.facets[c]!.get(r)));
      for (let c = 0; c < texts.length; c++) {
        if (ascii[c]) writer.asciiText(texts[c]!);
        else writer.text(texts[c]!);
      }
    }
    yield* writer.end();
  }

  /** Row `row`'s id: as given, else its place in the collection from 1. */
  private rowId(meaning: Pick<CollectedRowMeaning, 'rowIds'>, row: number): number {
    return meaning.rowIds ? meaning.rowIds[row]! : row + 1;
  }

  /** Row `row`'s final time period id. */
  private timePeriodId(meaning: Pick<CollectedRowMeaning, 'timePeriodIds'>, row: number): number {
    return meaning.timePeriodIds[this.timePeriods.get(row) - 1]!;
  }

  /** The rows in default result order: `rowAt[p]` is the row at position p (time period newest first, then id). */
  defaultOrder(meaning: Pick<CollectedRowMeaning, 'rowIds' | 'timePeriodIds'>): Int32Array {
    const n = this.count;
    const { rowIds } = meaning;
    // Rows by ascending id: in collection order unless ids were given.
    const byId = rowIds
      ? Int32Array.from({ length: n }, (_, r) => r).sort((a, b) => rowIds[a]! - rowIds[b]!)
      : undefined;
    // A stable counting sort by time period, newest (highest id) first.
    const locals = meaning.timePeriodIds.length;
    const rank = new Int32Array(locals);
    Array.from({ length: locals }, (_, l) => l)
      .sort((a, b) => meaning.timePeriodIds[b]! - meaning.timePeriodIds[a]!)
      .forEach((local, k) => (rank[local] = k));
    const next = new Int32Array(locals + 1);
    for (let r = 0; r < n; r++) next[rank[this.timePeriods.get(r) - 1]! + 1]!++;
    for (let k = 1; k <= locals; k++) next[k]! += next[k - 1]!;
    const rowAt = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const r = byId ? byId[i]! : i;
      rowAt[next[rank[this.timePeriods.get(r) - 1]!]!++] = r;
    }
    return rowAt;
  }
}
