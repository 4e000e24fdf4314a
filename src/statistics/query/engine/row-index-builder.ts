import { BinaryCopyWriter } from '../../../db/binary-copy.js';
import { RowIds, RowIndex, type Codes, type FacetColumn, type IndicatorColumn, type RowIndexParts } from './row-index.js';
import { nextTurn } from '../../../event-loop.js';

/** The narrowest codes array for a dictionary of `distinct` values. */
function codesFor(distinct: number, size: number): Codes {
  return distinct <= 256 ? new Uint8Array(size) : distinct <= 65536 ? new Uint16Array(size) : new Int32Array(size);
}

/** A column of ids as dictionary codes (the dictionary ascending). */
function dictionaryEncode(values: Int32Array): FacetColumn {
  const seen = new Set<number>();
  for (let p = 0; p < values.length; p++) seen.add(values[p]!);
  const dictionary = Int32Array.from([...seen].sort((a, b) => a - b));
  const codeOf = new Map<number, number>();
  dictionary.forEach((id, code) => codeOf.set(id, code));
  const codes = codesFor(dictionary.length, values.length);
  let previous = NaN;
  let previousCode = 0;
  for (let p = 0; p < values.length; p++) {
    const v = values[p]!;
    // Neighbouring rows mostly share their ids.
    if (v !== previous) {
      previous = v;
      previousCode = codeOf.get(v)!;
    }
    codes[p] = previousCode;
  }
  return { dictionary, codes };
}

/**
 * The number a text of at most 15 digits prints as exactly (`String(n) === text`: no sign but `-`, no leading zero,
 * not `-0`), else undefined. Most indicator cells are such counts, and this is what `String(Number(text)) === text`
 * decides for them without making a string per cell (a 5M-row version's index build: 15 million of them).
 */
function canonicalInteger(text: string): number | undefined {
  const length = text.length;
  const negative = length > 0 && text.charCodeAt(0) === 45; // '-'
  const start = negative ? 1 : 0;
  const digits = length - start;
  if (digits < 1 || digits > 15) return undefined;
  const first = text.charCodeAt(start) - 48;
  if (first < 0 || first > 9 || (first === 0 && (digits > 1 || negative))) return undefined;
  let value = first;
  for (let i = start + 1; i < length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

/** Rows per chunk of a column collected before its length is known. */
const CHUNK_BITS = 16;
const CHUNK_ROWS = 1 << CHUNK_BITS;

/**
 * The number a plain decimal text (digits, a point, digits) prints as exactly (`String(n) === text`), else undefined:
 * at most 15 significant digits, no leading zero but the one before the point, none trailing, and not below 1e-6
 * (printed with an exponent). The quotient of its digits by a power of ten is exact to the nearest double, as parsing
 * it is, and 15 digits print back as they were. Decimal indicators (percentages) are a third of a 5M-row file's cells;
 * `String(Number(text))` made a string for each of them.
 */
export function canonicalDecimal(text: string): number | undefined {
  const length = text.length;
  const negative = length > 0 && text.charCodeAt(0) === 45; // '-'
  let i = negative ? 1 : 0;
  let mantissa = 0;
  let digits = 0;
  if (text.charCodeAt(i) === 48) {
    i++; // '0' before the point, and nothing else there
  } else {
    for (; i < length; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) break;
      mantissa = mantissa * 10 + digit;
      digits++;
    }
    if (digits === 0) return undefined;
  }
  if (i >= length || text.charCodeAt(i) !== 46) return undefined; // '.'
  const fractionStart = ++i;
  let leadingZeros = 0;
  for (; i < length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    if (mantissa === 0 && digit === 0) leadingZeros++;
    else {
      mantissa = mantissa * 10 + digit;
      digits++;
    }
  }
  const decimals = length - fractionStart;
  if (decimals === 0 || mantissa === 0 || digits > 15 || leadingZeros > 5 || text.charCodeAt(length - 1) === 48) return undefined;
  const value = mantissa / 10 ** decimals;
  return negative ? -value : value;
}

/**
 * Collects one indicator column's raw texts by row: a text that is the printing of its number (`String(n)`) is kept
 * as the number, any other text (a symbol such as `x`, `1.50`, a blank) as an exception by row. The numbers are held
 * in chunks, so a column can grow without its length known (the import collects it while reading the file).
 */
class IndicatorBuilder {
  private readonly chunks: Float64Array[] = [];
  private readonly textRows: number[] = [];
  private readonly textCodes: number[] = [];
  private readonly texts: string[] = [];
  private readonly textCode = new Map<string, number>();
  /** Most decimals of a number's text, -1 once a text needs the exponent form (then kept as Float64). */
  private decimals = 0;
  private maxAbs = 0;

  add(row: number, raw: string): void {
    const number = canonicalInteger(raw) ?? this.printedNumber(raw);
    if (number !== undefined) {
      const chunk = this.chunks[row >>> CHUNK_BITS] ?? (this.chunks[row >>> CHUNK_BITS] = new Float64Array(CHUNK_ROWS));
      chunk[row & (CHUNK_ROWS - 1)] = number;
      const abs = Math.abs(number);
      if (abs > this.maxAbs) this.maxAbs = abs;
      return;
    }
    let code = this.textCode.get(raw);
    if (code === undefined) {
      code = this.texts.push(raw) - 1;
      this.textCode.set(raw, code);
    }
    this.textRows.push(row);
    this.textCodes.push(code);
  }

  /** Whether row `row` holds a number (whose printing is its text), not an exception. */
  holdsNumber(row: number): boolean {
    const flags = this.exceptionFlags ?? (this.exceptionFlags = this.flagExceptions());
    return (flags[row >>> 3]! & (1 << (row & 7))) === 0;
  }

  /** Row `row`'s number; 0 for an exception. */
  numberAt(row: number): number {
    return this.chunks[row >>> CHUNK_BITS]?.[row & (CHUNK_ROWS - 1)] ?? 0;
  }

  /** The text of a row that holds no number (`holdsNumber` false): its exception, as it was added. */
  exceptionAt(row: number): string {
    // Exceptions were added in row order: find this one by bisection.
    let lo = 0;
    let hi = this.textRows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.textRows[mid]! < row) lo = mid + 1;
      else hi = mid;
    }
    return this.texts[this.textCodes[lo]!]!;
  }

  private exceptionFlags: Uint8Array | undefined;

  private flagExceptions(): Uint8Array {
    const last = this.textRows.at(-1) ?? 0;
    const flags = new Uint8Array((last >>> 3) + 1);
    for (const row of this.textRows) flags[row >>> 3]! |= 1 << (row & 7);
    return flags;
  }

  /** The number `raw` is the printing of (`String(n) === raw`), noting its decimals; else undefined. */
  private printedNumber(raw: string): number | undefined {
    if (raw === '') return undefined;
    const decimal = canonicalDecimal(raw);
    if (decimal !== undefined) {
      if (this.decimals >= 0) this.decimals = Math.max(this.decimals, raw.length - raw.indexOf('.') - 1);
      return decimal;
    }
    const number = Number(raw);
    if (String(number) !== raw) return undefined;
    if (this.decimals >= 0 && !Number.isInteger(number)) {
      if (raw.includes('e')) this.decimals = -1;
      else this.decimals = Math.max(this.decimals, raw.length - raw.indexOf('.') - 1);
    }
    return number;
  }

  /**
   * The column of `size` rows (position p holding row `rowAt[p]` when given, else row p), its numbers as Int32 `m` with
   * `m / 10^scale` the number when every number fits (then `String(m / 10^scale)` is its text again: the division
   * gives the double nearest the decimal, as parsing did). Texts are numbered by first appearance in position order.
   */
  finish(size: number, rowAt?: Int32Array): IndicatorColumn {
    const scale = this.decimals;
    const exceptions = this.exceptions(size, rowAt);
    const numberAt = (p: number) => this.numberAt(rowAt ? rowAt[p]! : p);
    if (scale < 0 || scale > 9 || this.maxAbs * 10 ** scale >= 2 ** 31) {
      const values = new Float64Array(size);
      for (let p = 0; p < size; p++) values[p] = numberAt(p);
      return { values, scale: 0, ...exceptions };
    }
    const values = new Int32Array(size);
    const factor = 10 ** scale;
    for (let p = 0; p < size; p++) values[p] = Math.round(numberAt(p) * factor);
    return { values, scale, ...exceptions };
  }

  /** The exceptions by position, ascending, their texts numbered again by first appearance in that order. */
  private exceptions(size: number, rowAt: Int32Array | undefined): Pick<IndicatorColumn, 'textPositions' | 'textCodes' | 'texts'> {
    const count = this.textRows.length;
    if (!rowAt || count === 0) return { textPositions: Int32Array.from(this.textRows), textCodes: Uint32Array.from(this.textCodes), texts: this.texts };
    // A row's exception by row, then read in position order (one pass; no comparison sort of up to millions).
    const exceptionOfRow = new Int32Array(size).fill(-1);
    for (let e = 0; e < count; e++) exceptionOfRow[this.textRows[e]!] = e;
    const textPositions = new Int32Array(count);
    const textCodes = new Uint32Array(count);
    const texts: string[] = [];
    const renumbered = new Map<number, number>();
    let k = 0;
    for (let p = 0; p < size; p++) {
      const e = exceptionOfRow[rowAt[p]!]!;
      if (e < 0) continue;
      const old = this.textCodes[e]!;
      let code = renumbered.get(old);
      if (code === undefined) {
        code = texts.push(this.texts[old]!) - 1;
        renumbered.set(old, code);
      }
      textPositions[k] = p;
      textCodes[k++] = code;
    }
    return { textPositions, textCodes, texts };
  }
}

/**
 * Makes a RowIndex from rows given in position order (the default result order: time period descending, then row
 * id): each facet column is collected as ids and dictionary-coded at the end, each indicator column compacted.
 */
export class RowIndexBuilder {
  private ids: Int32Array;
  private levels: Uint8Array;
  private readonly levelCodes: string[] = [];
  private readonly facetValues: Int32Array[];
  private readonly indicators: IndicatorBuilder[];
  private readonly timePeriodIds: number[] = [];
  private readonly timePeriodStarts: number[] = [];
  private position = 0;

  constructor(
    readonly size: number,
    private readonly facetColumns: readonly string[],
    private readonly indicatorColumns: readonly string[],
  ) {
    this.ids = new Int32Array(size);
    this.levels = new Uint8Array(size);
    this.facetValues = facetColumns.map(() => new Int32Array(size));
    this.indicators = indicatorColumns.map(() => new IndicatorBuilder());
  }

  get rows(): number {
    return this.position;
  }

  /** The next row: its id, time period id (never above the previous row's), level code, facet ids and indicator texts in the builder's column order. */
  add(id: number, timePeriodId: number, levelCode: string, facets: ArrayLike<number>, indicators: ArrayLike<string>): void {
    const p = this.position++;
    if (p >= this.size) throw new Error('More rows than the row index was made for');
    this.ids[p] = id;
    const lastPeriod = this.timePeriodIds.at(-1);
    if (lastPeriod !== timePeriodId) {
      if (lastPeriod !== undefined && timePeriodId > lastPeriod) throw new Error('Rows must come in time period descending order');
      this.timePeriodIds.push(timePeriodId);
      this.timePeriodStarts.push(p);
    }
    let level = this.levelCodes.indexOf(levelCode);
    if (level < 0) {
      if (this.levelCodes.length === 256) throw new Error('More than 256 geographic levels');
      level = this.levelCodes.push(levelCode) - 1;
    }
    this.levels[p] = level;
    for (let c = 0; c < this.facetValues.length; c++) this.facetValues[c]![p] = facets[c]!;
    for (let c = 0; c < this.indicators.length; c++) this.indicators[c]!.add(p, indicators[c]!);
  }

  /**
   * The index. The builder lets go of each collected column as soon as it is made compact, and of all of them at the
   * end, so that what is done with the index next (the import deflates and stores it) does not hold both: 260 MB of
   * Int32 and Float64 columns at 5,000,000 rows.
   */
  finish(): RowIndex {
    if (this.position !== this.size) throw new Error(`The row index was made for ${this.size} rows but got ${this.position}`);
    const timePeriodStarts = Int32Array.from([...this.timePeriodStarts, this.size]);
    const facets = new Map<string, FacetColumn>();
    this.facetColumns.forEach((column, c) => {
      facets.set(column, dictionaryEncode(this.facetValues[c]!));
      this.facetValues[c] = new Int32Array(0);
    });
    const indicators = new Map<string, IndicatorColumn>();
    this.indicatorColumns.forEach((column, c) => {
      indicators.set(column, this.indicators[c]!.finish(this.size));
      this.indicators[c] = new IndicatorBuilder();
    });
    const parts: RowIndexParts = {
      ids: RowIds.of(this.ids, timePeriodStarts),
      timePeriodIds: Int32Array.from(this.timePeriodIds),
      timePeriodStarts,
      levelCodes: this.levelCodes,
      levels: this.levels,
      facets,
      indicators,
    };
    this.ids = new Int32Array(0);
    this.levels = new Uint8Array(0);
    return new RowIndex(parts);
  }
}

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

  set(row: number, value: number): void {
    if (value !== this.first) {
      if (this.first === -1) this.first = value;
      else this.varies = true;
    }
    if (value > 0xffff && !this.wide) this.widen();
    const k = row >>> CHUNK_BITS;
    const chunk = this.chunks[k] ?? (this.chunks[k] = this.wide ? new Int32Array(CHUNK_ROWS) : new Uint16Array(CHUNK_ROWS));
    chunk[row & (CHUNK_ROWS - 1)] = value;
  }

  get(row: number): number {
    return this.chunks[row >>> CHUNK_BITS]![row & (CHUNK_ROWS - 1)]!;
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
    return [...(this.levels.varies ? ['geographic_level'] : []), ...this.facetColumns.filter((_, c) => this.facets[c]!.varies)];
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
      const values = new Int32Array(n);
      for (let p = 0; p < n; p++) values[p] = finalFacetId(finalIds, locals.get(rowAt[p]!));
      locals.release();
      facets.set(column, dictionaryEncode(values));
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
  *rowTableCopy(meaning: Omit<CollectedRowMeaning, 'facetOrder' | 'indicatorOrder'>, rowAt: Int32Array): Generator<Buffer> {
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
          texts[c] = number >= 0 && number < 65536 && Number.isInteger(number) ? (printed[number] ??= String(number)) : String(number);
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
    const byId = rowIds ? Int32Array.from({ length: n }, (_, r) => r).sort((a, b) => rowIds[a]! - rowIds[b]!) : undefined;
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
