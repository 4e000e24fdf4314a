/**
 * The cold path: a query answered from a version's stored row index (storage/engine-form.ts) while that index is not
 * in memory (beyond QUERY_INDEX_MEMORY_MB, or still loading), reading only the slices of SLICE_ROWS positions the
 * query needs: the slices of the columns its criteria and sorts name over the time periods it asks for (all of them
 * when it does not narrow them), counted and paged by a RowIndex made of just those; then, for the page's positions
 * only, the slices of every column the response shows. No index is kept: what a query reads is bounded by the
 * version's size and dropped with the response (docs/architecture.md, "Statistics query engine").
 */
import { promisify } from 'node:util';
import { constants as zlibConstants, inflateRaw, inflateRawSync, type ZlibOptions } from 'node:zlib';
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { withPooledClient, type Executor } from '../../../../db/database.js';
import type { RowIndexPart } from '../../../tables.js';
import { readRowIndexChunks } from '../../../storage/engine-form-repository.js';
import type { PageRows } from '../page-rows.js';
import type { Predicate, SortKey } from '../resolve.js';
import {
  binarySearch,
  indicatorTextOf,
  isDefaultOrder,
  lowerBound,
  periodIndexAt,
  RowIds,
  RowIndex,
  type Codes,
  type FacetColumn,
  type IndicatorColumn,
} from '../index/row-index.js';
import {
  checkChecksum,
  CorruptEngineFormError,
  exceptionsLayout,
  needsRebuild,
  pieceChunks,
  PRESENCE_BYTES,
  readHeader,
  sumIdDifferences,
  type FacetsHeader,
  type ValuesHeader,
} from '../../../storage/engine-form.js';

const inflate = promisify<Buffer, ZlibOptions, Buffer>(inflateRaw);
/** A slice ends in a full flush, not the stream's end: inflated as far as it goes. */
const SLICE_INFLATE: ZlibOptions = { finishFlush: zlibConstants.Z_SYNC_FLUSH };

type Width = 1 | 2 | 4 | 8;
type ElementArray = Uint8Array | Uint16Array | Int32Array | Float64Array;

/** One stored piece: where its chunks are, and the width of its first array's elements (one per position). */
interface PieceRef {
  part: RowIndexPart;
  first: number;
  count: number;
  sliceBytes: number;
  width: Width;
  /** CRC-32 of each of its slices, inflated. */
  checksums: number[];
}

type IndicatorPiece = PieceRef & ValuesHeader['indicators'][number];

/** The slices read for one query, inflated, by part and chunk number. */
type Slices = Map<string, Buffer>;
const sliceKey = (part: RowIndexPart, chunk: number) => `${part}:${chunk}`;

/** Every chunk of `piece` holding its bytes `from` … `to - 1`. */
function chunksOf(piece: PieceRef, from: number, to: number): number[] {
  const chunks: number[] = [];
  if (to <= from) return chunks;
  const last = Math.min(piece.count - 1, Math.floor((to - 1) / piece.sliceBytes));
  for (let s = Math.floor(from / piece.sliceBytes); s <= last; s++) chunks.push(piece.first + s);
  return chunks;
}

/** Bytes `from` … `to - 1` of a piece, out of its read slices (a view when one slice holds them, else a copy). */
function bytesOf(slices: Slices, piece: PieceRef, from: number, to: number): Buffer {
  const parts: Buffer[] = [];
  for (const chunk of chunksOf(piece, from, to)) {
    const slice = slices.get(sliceKey(piece.part, chunk));
    if (!slice) throw new Error(`Stored row index slice ${chunk} of ${piece.part} was not read`);
    const start = (chunk - piece.first) * piece.sliceBytes;
    parts.push(slice.subarray(Math.max(0, from - start), Math.min(slice.length, to - start)));
  }
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  if (bytes.length !== to - from) throw new Error('A stored row index slice is shorter than its header says');
  // Typed arrays need their element alignment.
  return bytes.byteOffset % 8 === 0 ? bytes : Buffer.from(bytes);
}

/** A view of bytes as elements of a width: eight-byte ones are the float indicator values. */
function arrayOf(bytes: Buffer, width: Width): ElementArray {
  const count = bytes.length / width;
  if (width === 1) return new Uint8Array(bytes.buffer, bytes.byteOffset, count);
  if (width === 2) return new Uint16Array(bytes.buffer, bytes.byteOffset, count);
  if (width === 8) return new Float64Array(bytes.buffer, bytes.byteOffset, count);
  return new Int32Array(bytes.buffer, bytes.byteOffset, count);
}

const presenceOf = (base64: string) => new Uint8Array(Buffer.from(base64, 'base64'));

/** The slices of a query that may match (ascending) and what of them it reads (see StoredColumns.readCandidates). */
interface CandidateColumns {
  candidates: number[];
  /** The level, location and filter columns the predicate and the sorts name. */
  columns: Set<string>;
  sortedIndicators: string[];
  /** Whether the row ids are needed: not in the default order. */
  needsIds: boolean;
}

/** Candidate slices end to end (see StoredColumns.compactSlices). */
interface CompactSlices {
  candidates: number[];
  /** A slice's positions in the version: from, to (exclusive). */
  rangeOf: (slice: number) => readonly [number, number];
  /** Positions in all. */
  size: number;
  /** The version's position of compact position `c`. */
  positionOf: (c: number) => number;
  /** A piece's first array (one element per position) over the candidate slices, end to end. */
  joined: (piece: PieceRef) => ElementArray;
}

/** A version's stored row index, by its headers: reads slices of it for one query at a time. */
export class StoredColumns {
  private readonly idsPiece: PieceRef | undefined;
  private readonly levelsPiece: PieceRef;
  private readonly facetPieces = new Map<string, PieceRef & { dictionary: Int32Array; presence: Uint8Array }>();
  private readonly levelPresence: Uint8Array;
  private readonly indicatorPieces = new Map<string, IndicatorPiece>();
  private readonly timePeriodIds: Int32Array;
  private readonly timePeriodStarts: Int32Array;
  readonly rows: number;
  private readonly sliceRows: number;
  /** The stored pieces of each part in chunk order (to tell a chunk's slice size). */
  private readonly piecesByPart = new Map<RowIndexPart, PieceRef[]>();

  constructor(
    readonly rowsTable: string,
    private readonly facets: FacetsHeader,
    values: ValuesHeader,
  ) {
    this.rows = facets.rows;
    if (values.rows !== facets.rows || values.sliceRows !== facets.sliceRows)
      throw new Error(`The stored parts of ${rowsTable} do not match`);
    this.sliceRows = facets.sliceRows;

    this.timePeriodIds = Int32Array.from(facets.timePeriodIds);
    this.timePeriodStarts = Int32Array.from(facets.timePeriodStarts);
    const facetChunks = pieceChunks(facets);
    const piece = (
      part: RowIndexPart,
      i: number,
      chunks: Array<{ first: number; count: number }>,
      sliceBytes: number[],
      width: Width,
    ): PieceRef => ({
      part,
      ...chunks[i]!,
      sliceBytes: sliceBytes[i]!,
      width,
      checksums: (part === 'facets' ? facets : values).sliceChecksums[i] ?? [],
    });
    let k = 0;
    this.idsPiece = facets.periodFirstIds ? undefined : piece('facets', k++, facetChunks, facets.sliceBytes, 4);
    this.levelsPiece = piece('facets', k++, facetChunks, facets.sliceBytes, 1);
    for (const { column, dictionary, width, presence } of facets.facets) {
      this.facetPieces.set(column, {
        ...piece('facets', k++, facetChunks, facets.sliceBytes, width),
        dictionary: Int32Array.from(dictionary),
        presence: presenceOf(presence),
      });
    }
    this.levelPresence = presenceOf(facets.levelPresence);
    const valueChunks = pieceChunks(values);
    values.indicators.forEach((indicator, i) => {
      this.indicatorPieces.set(indicator.column, {
        ...piece('values', i, valueChunks, values.sliceBytes, indicator.float ? 8 : 4),
        ...indicator,
      });
    });
    for (const piece of [
      ...(this.idsPiece ? [this.idsPiece] : []),
      this.levelsPiece,
      ...this.facetPieces.values(),
      ...this.indicatorPieces.values(),
    ]) {
      const list = this.piecesByPart.get(piece.part) ?? [];
      list.push(piece);
      this.piecesByPart.set(piece.part, list);
    }
  }

  /** Whether it holds these indicator columns (a version's stored values hold all of them). */
  hasIndicators(columns: readonly string[]): boolean {
    return columns.every((c) => this.indicatorPieces.has(c));
  }

  /** The bytes of a chunk's slice once inflated, at most (a piece's last slice may be shorter). */
  private pieceOfChunk(part: RowIndexPart, chunk: number): PieceRef {
    const piece = this.piecesByPart.get(part)?.find((p) => chunk >= p.first && chunk < p.first + p.count);
    if (!piece) throw new Error(`Chunk ${chunk} of ${part} is no slice of the stored row index of ${this.rowsTable}`);
    return piece;
  }

  /** A stored slice inflated and checked against its checksum: a corrupt one is never read as data. */
  private inflateSlice(part: RowIndexPart, chunk: number, bytes: Buffer): Buffer {
    const piece = this.pieceOfChunk(part, chunk);
    let inflated: Buffer;
    try {
      inflated = inflateRawSync(bytes, { ...SLICE_INFLATE, chunkSize: Math.max(64, piece.sliceBytes) });
    } catch (error) {
      throw new CorruptEngineFormError(`Slice ${chunk} of ${part} of ${this.rowsTable} does not inflate`, {
        cause: error,
      });
    }
    checkChecksum(inflated, piece.checksums[chunk - piece.first], `slice ${chunk} of ${part} of ${this.rowsTable}`);
    return inflated;
  }

  /** Reads and inflates the slices `wanted` lists (by part) that are not read yet, in one COPY. */
  private async readSlices(client: pg.PoolClient, wanted: Map<RowIndexPart, Set<number>>, into: Slices): Promise<void> {
    const missing = new Map<RowIndexPart, number[]>();
    for (const [part, chunks] of wanted)
      missing.set(
        part,
        [...chunks].filter((c) => !into.has(sliceKey(part, c))),
      );
    const deflated = await readRowIndexChunks(client, this.rowsTable, missing);
    for (const [part, chunks] of missing) {
      for (const chunk of chunks) {
        const bytes = deflated.get(sliceKey(part, chunk));
        if (!bytes) throw new Error(`No stored row index chunk ${chunk} of ${part} for ${this.rowsTable}`);
        // On the main thread, into one buffer of the slice's size (a bigger one is kept whole behind the slice): a slice
        // inflates in well under a millisecond, and zlib's asynchronous form handed it over in 16 KB pieces, a
        // callback and a copy each (3-5 times slower here).
        into.set(sliceKey(part, chunk), this.inflateSlice(part, chunk, bytes));
      }
    }
  }

  /**
   * Count and one page of a query, on one connection (its own statement timeout; `timeoutMs` bounds it client-side):
   * the total, and the page's rows as the response writer reads them.
   */
  async query(
    db: Executor,
    timeoutMs: number,
    predicate: Predicate,
    sorts: readonly SortKey[],
    offset: number,
    limit: number,
    indicators: readonly string[],
  ): Promise<{ total: number; page: PageRows }> {
    return withPooledClient(
      db,
      timeoutMs,
      async (client) => {
        const { total, positions, slices } = await this.select(client, predicate, sorts, offset, limit);
        return { total, page: await this.pageRows(client, positions, indicators, slices) };
      },
      { ownTimeout: false },
    );
  }

  /** The rows at some positions (a page the in-memory index chose while its values are not loaded), on one connection. */
  async rowsAt(
    db: Executor,
    timeoutMs: number,
    positions: ArrayLike<number>,
    indicators: readonly string[],
  ): Promise<PageRows> {
    return withPooledClient(db, timeoutMs, (client) => this.pageRows(client, positions, indicators, new Map()), {
      ownTimeout: false,
    });
  }

  /** Whether some position of slice `slice` may match (a superset: false only when none can). */
  private mayMatch(predicate: Predicate, slice: number): boolean {
    switch (predicate.kind) {
      case 'const':
        return predicate.value;
      case 'compare':
        return this.periodsOfSlice(slice).some((id) => compares(id, predicate.op, predicate.value));
      case 'in': {
        if (predicate.negated) return true;
        if (predicate.column === 'time_period_id')
          return this.periodsOfSlice(slice).some((id) => predicate.values.some((v) => Number(v) === id));
        const { presence, codeOf } = this.presenceOf(predicate.column);
        const base = PRESENCE_BYTES * slice;
        return predicate.values.some((value) => {
          const code = codeOf(value);
          return code >= 0 && (presence[base + ((code & 255) >>> 3)]! & (1 << (code & 7))) !== 0;
        });
      }
      case 'and':
        return predicate.items.every((item) => this.mayMatch(item, slice));
      case 'or':
        return predicate.items.some((item) => this.mayMatch(item, slice));
      case 'not':
        return true;
    }
  }

  /** The time period ids with positions in a slice. */
  private periodsOfSlice(slice: number): number[] {
    const from = slice * this.sliceRows;
    const to = Math.min(this.rows, from + this.sliceRows);
    const ids: number[] = [];
    for (
      let k = periodIndexAt(this.timePeriodStarts, from);
      k < this.timePeriodIds.length && this.timePeriodStarts[k]! < to;
      k++
    )
      ids.push(this.timePeriodIds[k]!);
    return ids;
  }

  private presenceOf(column: string): { presence: Uint8Array; codeOf: (value: number | string) => number } {
    if (column === 'geographic_level')
      return { presence: this.levelPresence, codeOf: (value) => this.facets.levelCodes.indexOf(String(value)) };
    const piece = this.facetPieces.get(column);
    if (!piece) throw new Error(`The stored row index of ${this.rowsTable} has no column ${column}`);
    return { presence: piece.presence, codeOf: (value) => binarySearch(piece.dictionary, Number(value)) };
  }

  /**
   * Count and one page of a query: positions (into the whole version), as `RowIndex.select` gives them, and the
   * slices read (for `pageRows`).
   */
  private async select(
    client: pg.PoolClient,
    predicate: Predicate,
    sorts: readonly SortKey[],
    offset: number,
    limit: number,
  ): Promise<{ total: number; positions: number[]; slices: Slices }> {
    const slices: Slices = new Map();
    const matching = await this.candidatesIndex(client, predicate, sorts, slices);
    if (!matching) return { total: 0, positions: [], slices };
    const { total, positions } = matching.index.select(predicate, sorts, offset, limit);
    return { total, positions: positions.map(matching.positionOf), slices };
  }

  /**
   * Every matching position in result order, for a CSV export (4 bytes per matching row), and then its rows page by
   * page (`pageRows` positions each), each page's slices read when it is asked for.
   */
  async *matchingPages(
    db: Executor,
    timeoutMs: number,
    predicate: Predicate,
    sorts: readonly SortKey[],
    indicators: readonly string[],
    pageRows: number,
  ): AsyncGenerator<PageRows> {
    const positions = await withPooledClient(
      db,
      timeoutMs,
      async (client) => {
        const matching = await this.candidatesIndex(client, predicate, sorts, new Map());
        if (!matching) return new Int32Array(0);
        const compact = matching.index.matchingPositions(predicate, sorts);
        for (let i = 0; i < compact.length; i++) compact[i] = matching.positionOf(compact[i]!);
        return compact;
      },
      { ownTimeout: false },
    );
    for (let at = 0; at < positions.length; at += pageRows) {
      const page = positions.subarray(at, at + pageRows);
      yield await this.rowsAt(db, timeoutMs, page, indicators);
    }
  }

  /**
   * The slices that may match, ascending, with the pieces the predicate and sorts need of them read into `slices`:
   * the columns the predicate and the sorts name, the row ids unless in the default order, and the sorted indicators
   * with their text exceptions. Undefined when no slice may match.
   */
  private async readCandidates(
    client: pg.PoolClient,
    predicate: Predicate,
    sorts: readonly SortKey[],
    slices: Slices,
  ): Promise<CandidateColumns | undefined> {
    const candidates: number[] = [];
    for (let slice = 0; slice * this.sliceRows < this.rows; slice++)
      if (this.mayMatch(predicate, slice)) candidates.push(slice);
    if (candidates.length === 0) return undefined;
    const columns = new Set<string>();
    collectColumns(predicate, columns);
    const sortedIndicators = sorts.filter((sort) => sort.kind === 'indicator').map((sort) => sort.column);
    for (const sort of sorts)
      if (sort.column !== 'time_period_id' && sort.kind !== 'indicator') columns.add(sort.column);
    const needsIds = !isDefaultOrder(sorts);
    const pieces = [...columns].map((column) => this.pieceOf(column));
    if (needsIds && this.idsPiece) pieces.push(this.idsPiece);
    pieces.push(...sortedIndicators.map((column) => this.indicatorPieces.get(column)!));
    const wanted = new Map<RowIndexPart, Set<number>>();
    for (const piece of pieces) for (const slice of candidates) want(wanted, piece, slice);
    for (const column of sortedIndicators) this.wantExceptions(wanted, this.indicatorPieces.get(column)!);
    await this.readSlices(client, wanted, slices);
    return { candidates, columns, sortedIndicators, needsIds };
  }

  /**
   * The candidate slices end to end: compact position c is the version's `positionOf(c)` (every slice but the
   * version's last is whole, and the last comes last).
   */
  private compactSlices(candidates: number[], slices: Slices): CompactSlices {
    const rangeOf = (slice: number) =>
      [slice * this.sliceRows, Math.min(this.rows, (slice + 1) * this.sliceRows)] as const;
    const size = candidates.reduce((sum, slice) => sum + rangeOf(slice)[1] - rangeOf(slice)[0], 0);
    const positionOf = (c: number) =>
      candidates[Math.floor(c / this.sliceRows)]! * this.sliceRows + (c % this.sliceRows);
    const joined = (piece: PieceRef) => {
      const buffers = candidates.map((slice) =>
        bytesOf(slices, piece, rangeOf(slice)[0] * piece.width, rangeOf(slice)[1] * piece.width),
      );
      return arrayOf(buffers.length === 1 ? buffers[0]! : Buffer.concat(buffers), piece.width);
    };
    return { candidates, rangeOf, size, positionOf, joined };
  }

  /**
   * The row ids of the compact positions: in the default order none are read (it is the positions' order); else
   * the stored ids of the candidate slices, or, for a version stored without them, each period's first id onwards.
   */
  private compactIds(
    compact: CompactSlices,
    slices: Slices,
    needsIds: boolean,
    periods: { periodIds: number[]; timePeriodStarts: Int32Array },
  ): RowIds {
    const { candidates, rangeOf, size, positionOf } = compact;
    const { timePeriodStarts } = periods;
    if (!needsIds) {
      // Each period's first given as 0.
      return RowIds.ofPeriodFirsts(size, new Int32Array(periods.periodIds.length), timePeriodStarts);
    }
    if (this.idsPiece) {
      const idsPiece = this.idsPiece;
      const parts = candidates.map((slice) =>
        sumIdDifferences(
          Int32Array.from(
            arrayOf(bytesOf(slices, idsPiece, rangeOf(slice)[0] * 4, rangeOf(slice)[1] * 4), 4) as Int32Array,
          ),
          this.sliceRows,
          rangeOf(slice)[0],
        ),
      );
      const all = new Int32Array(size);
      let at = 0;
      for (const part of parts) {
        all.set(part, at);
        at += part.length;
      }
      return RowIds.of(all, timePeriodStarts);
    }
    const all = new Int32Array(size);
    const firsts = this.facets.periodFirstIds!;
    for (let p = 0; p < size; p++) {
      const position = positionOf(p);
      const k = periodIndexAt(this.timePeriodStarts, position);
      all[p] = firsts[k]! + (position - this.timePeriodStarts[k]!);
    }
    return RowIds.of(all, timePeriodStarts);
  }

  /** The sorted indicators' values over the compact positions, with their text exceptions there. */
  private compactIndicators(
    compact: CompactSlices,
    slices: Slices,
    sortedIndicators: readonly string[],
  ): Map<string, IndicatorColumn> {
    const indicators = new Map<string, IndicatorColumn>();
    for (const column of sortedIndicators) {
      const piece = this.indicatorPieces.get(column)!;
      const texts = this.exceptionsOf(slices, piece);
      // The text exceptions of the candidate slices, at their compact positions.
      const positions: number[] = [];
      const codes: number[] = [];
      let base = 0;
      for (const slice of compact.candidates) {
        const [from, to] = compact.rangeOf(slice);
        for (
          let k = lowerBound(texts.textPositions, 0, texts.textPositions.length, from);
          k < texts.textPositions.length && texts.textPositions[k]! < to;
          k++
        ) {
          positions.push(base + texts.textPositions[k]! - from);
          codes.push(texts.textCodes[k]!);
        }
        base += to - from;
      }
      indicators.set(column, {
        values: compact.joined(piece) as Int32Array | Float64Array,
        scale: piece.scale,
        texts: piece.texts,
        textPositions: Int32Array.from(positions),
        textCodes: Uint32Array.from(codes),
      });
    }
    return indicators;
  }

  /**
   * A RowIndex of the slices that may match (read into `slices`), end to end (the default order kept), with the
   * columns the predicate and sorts need; and where each of its positions is in the version. Undefined when no
   * slice may match.
   */
  private async candidatesIndex(
    client: pg.PoolClient,
    predicate: Predicate,
    sorts: readonly SortKey[],
    slices: Slices,
  ): Promise<{ index: RowIndex; positionOf: (compact: number) => number } | undefined> {
    const read = await this.readCandidates(client, predicate, sorts, slices);
    if (!read) return undefined;
    const { candidates, columns, sortedIndicators, needsIds } = read;
    const compact = this.compactSlices(candidates, slices);
    const facets = new Map<string, FacetColumn>();
    for (const column of columns) {
      if (column === 'geographic_level') continue;
      const piece = this.facetPieces.get(column)!;
      facets.set(column, { dictionary: piece.dictionary, codes: compact.joined(piece) as Codes });
    }
    const levels = columns.has('geographic_level')
      ? (compact.joined(this.levelsPiece) as Uint8Array)
      : new Uint8Array(0);
    const periods = this.compactPeriods(candidates.map(compact.rangeOf), compact.size);
    const index = new RowIndex({
      ids: this.compactIds(compact, slices, needsIds, periods),
      timePeriodIds: Int32Array.from(periods.periodIds),
      timePeriodStarts: periods.timePeriodStarts,
      levelCodes: this.facets.levelCodes,
      levels,
      facets,
      indicators: this.compactIndicators(compact, slices, sortedIndicators),
    });
    // Nothing is kept for a later query: postings or cached bitsets would cost more than the one pass they save.
    index.limitCaching(() => false);
    return { index, positionOf: compact.positionOf };
  }

  /**
   * Time periods in compact positions (the candidate slices' `ranges` end to end): each a run still (the order is
   * kept), a period cut short where slices are left out.
   */
  private compactPeriods(
    ranges: ReadonlyArray<readonly [number, number]>,
    size: number,
  ): { periodIds: number[]; timePeriodStarts: Int32Array } {
    const periodIds: number[] = [];
    const periodStarts: number[] = [];
    let c = 0;
    for (const [from, to] of ranges) {
      for (
        let k = periodIndexAt(this.timePeriodStarts, from);
        k < this.timePeriodIds.length && this.timePeriodStarts[k]! < to;
        k++
      ) {
        const start = c + Math.max(0, this.timePeriodStarts[k]! - from);
        if (periodIds.at(-1) !== this.timePeriodIds[k]) {
          periodIds.push(this.timePeriodIds[k]!);
          periodStarts.push(start);
        }
      }
      c += to - from;
    }
    periodStarts.push(size);
    return { periodIds, timePeriodStarts: Int32Array.from(periodStarts) };
  }

  /**
   * The rows at `positions` (into the whole version) as the response writer reads them: every level, location and
   * filter column and the `indicators` asked for, read slice by slice for those positions only.
   */
  private async pageRows(
    client: pg.PoolClient,
    positions: ArrayLike<number>,
    indicators: readonly string[],
    slices: Slices,
  ): Promise<PageRows> {
    const facetPieces = [...this.facetPieces.entries()];
    const indicatorPieces = indicators.map((column) => [column, this.indicatorPieces.get(column)!] as const);
    const wanted = new Map<RowIndexPart, Set<number>>();
    const touched = new Set<number>();
    for (let r = 0; r < positions.length; r++) touched.add(Math.floor(positions[r]! / this.sliceRows));
    const shown = [this.levelsPiece, ...facetPieces.map(([, p]) => p), ...indicatorPieces.map(([, p]) => p)];
    for (const slice of touched) for (const piece of shown) want(wanted, piece, slice);
    for (const [, piece] of indicatorPieces) this.wantExceptions(wanted, piece);
    if (positions.length > 0) await this.readSlices(client, wanted, slices);

    // Per column, a reader of one position: the slice holding it, as an array (made once per slice).
    const reader = (piece: PieceRef): ((position: number) => number) => {
      const arrays = new Map<number, ElementArray>();
      return (position) => {
        const start = position - (position % this.sliceRows);
        let array = arrays.get(start);
        if (!array) {
          const end = Math.min(this.rows, start + this.sliceRows);
          arrays.set(
            start,
            (array = arrayOf(bytesOf(slices, piece, start * piece.width, end * piece.width), piece.width)),
          );
        }
        return array[position - start]!;
      };
    };
    const levelAt = reader(this.levelsPiece);
    const { levelCodes } = this.facets;
    return {
      count: positions.length,
      timePeriodId: (r) => this.timePeriodIds[periodIndexAt(this.timePeriodStarts, positions[r]!)]!,
      levelCode: (r) => levelCodes[levelAt(positions[r]!)]!,
      idsOf: (column) => {
        const piece = this.facetPieces.get(column);
        if (!piece) return () => 0;
        const codeAt = reader(piece);
        return (r) => piece.dictionary[codeAt(positions[r]!)]!;
      },
      textsOf: (column) => {
        const piece = this.indicatorPieces.get(column);
        if (!piece || positions.length === 0) return () => '';
        const valueAt = reader(piece);
        const texts = { scale: piece.scale, texts: piece.texts, ...this.exceptionsOf(slices, piece) };
        return (r) => indicatorTextOf(texts, positions[r]!, valueAt(positions[r]!));
      },
    };
  }

  /** Notes that an indicator's text exceptions are to be read. */
  private wantExceptions(wanted: Map<RowIndexPart, Set<number>>, piece: IndicatorPiece): void {
    const { from, to } = exceptionsLayout(this.rows, piece.width, piece.exceptions);
    if (piece.exceptions > 0) wantBytes(wanted, piece, from, to);
  }

  /** An indicator's text exceptions (positions ascending, and their texts' codes), out of the read slices. */
  private exceptionsOf(slices: Slices, piece: IndicatorPiece): { textPositions: Int32Array; textCodes: Uint32Array } {
    if (piece.exceptions === 0) return { textPositions: new Int32Array(0), textCodes: new Uint32Array(0) };
    const { from, codesFrom, to } = exceptionsLayout(this.rows, piece.width, piece.exceptions);
    const bytes = bytesOf(slices, piece, from, to);
    return {
      textPositions: new Int32Array(bytes.buffer, bytes.byteOffset, piece.exceptions),
      textCodes: new Uint32Array(bytes.buffer, bytes.byteOffset + codesFrom - from, piece.exceptions),
    };
  }

  private pieceOf(column: string): PieceRef {
    if (column === 'geographic_level') return this.levelsPiece;
    const piece = this.facetPieces.get(column);
    if (!piece) throw new Error(`The stored row index of ${this.rowsTable} has no column ${column}`);
    return piece;
  }
}

/** Notes that the chunks holding bytes `from` … `to - 1` of a piece are to be read. */
function wantBytes(wanted: Map<RowIndexPart, Set<number>>, piece: PieceRef, from: number, to: number): void {
  let chunks = wanted.get(piece.part);
  if (!chunks) wanted.set(piece.part, (chunks = new Set()));
  for (const chunk of chunksOf(piece, from, to)) chunks.add(chunk);
}

/** Notes that a slice of a piece's first array (one element per position) is to be read. */
function want(wanted: Map<RowIndexPart, Set<number>>, piece: PieceRef, slice: number): void {
  wantBytes(wanted, piece, slice * piece.sliceBytes, (slice + 1) * piece.sliceBytes);
}

function compares(id: number, op: '>' | '>=' | '<' | '<=', value: number): boolean {
  return op === '>' ? id > value : op === '>=' ? id >= value : op === '<' ? id < value : id <= value;
}

/** The level, location and filter columns a predicate reads (time periods are ranges of positions). */
function collectColumns(predicate: Predicate, into: Set<string>): void {
  switch (predicate.kind) {
    case 'in':
      if (predicate.column !== 'time_period_id') into.add(predicate.column);
      return;
    case 'not':
      collectColumns(predicate.item, into);
      return;
    case 'and':
    case 'or':
      for (const item of predicate.items) collectColumns(item, into);
      return;
    default:
      return;
  }
}

/** A version that has no engine form of the current format: asked again after this long. */
const MISSING_RECHECK_MS = 5000;
const MISSING = Symbol('missing');

/**
 * The engine forms' headers by rows table (a few kilobytes each), so a cold query reads only slices. A rows table is
 * written once, and so is its engine form (a rebuild from the rows makes the same bytes), so a header never goes stale.
 */
export class StoredColumnsCache {
  private readonly headers = new LRUCache<string, StoredColumns | typeof MISSING>({ max: 1000 });

  /** The version's stored columns, or undefined when it has no engine form (of this format). */
  async open(db: Executor, rowsTable: string, timeoutMs: number): Promise<StoredColumns | undefined> {
    const cached = this.headers.get(rowsTable);
    if (cached) return cached === MISSING ? undefined : cached;
    const opened = await withPooledClient(
      db,
      timeoutMs,
      async (client) => {
        const heads = await readRowIndexChunks(
          client,
          rowsTable,
          new Map([
            ['facets', [0]],
            ['values', [0]],
          ]),
        );
        const facetsHead = heads.get(sliceKey('facets', 0));
        const valuesHead = heads.get(sliceKey('values', 0));
        if (!facetsHead || !valuesHead) return undefined;
        try {
          const [f, v] = await Promise.all([inflate(facetsHead, {}), inflate(valuesHead, {})]);
          return new StoredColumns(
            rowsTable,
            readHeader<FacetsHeader>(f, rowsTable),
            readHeader<ValuesHeader>(v, rowsTable),
          );
        } catch (error) {
          // Of another format, or a header that does not read: as if there were none (the row index store rebuilds it).
          const code = (error as { code?: unknown }).code;
          if (needsRebuild(error) || (typeof code === 'string' && code.startsWith('Z_'))) return undefined;
          throw error;
        }
      },
      { ownTimeout: false },
    );
    if (opened) this.headers.set(rowsTable, opened);
    else this.headers.set(rowsTable, MISSING, { ttl: MISSING_RECHECK_MS });
    return opened;
  }

  /** Forgets a version's header (after its engine form was rebuilt, or found corrupt). */
  forget(rowsTable: string): void {
    this.headers.delete(rowsTable);
  }

  clear(): void {
    this.headers.clear();
  }
}
