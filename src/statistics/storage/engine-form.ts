/**
 * The engine form: a version's row index as the query engine stores it, a cache of the version's Parquet copy of
 * record (parquet-copy.ts) that the service rebuilds from that copy when it is missing, of another format or corrupt
 * (rebuild.ts). Its vocabulary, one word per thing: two *parts*, each a header and then one *piece* per column (that
 * column's arrays), each piece stored as *slices* of SLICE_ROWS positions; a *chunk* is what one row of
 * `version_row_index_chunks` holds (a part's header, or one slice), numbered by `chunk`. The parts:
 * - `facets`: row ids (each time period's first when consecutive, else as differences from the previous position's,
 *   which deflate to almost nothing), levels, time period ranges, location and filter codes with their dictionaries:
 *   all that count and page need;
 * - `values`: the indicator values.
 * Each part is a header (chunk 0: its length, then JSON) and then one piece per column (that column's arrays, each
 * padded to 8 bytes), each one deflate stream stored as slices of SLICE_ROWS positions (chunks 1, 2, …), the stream
 * fully flushed at each slice's end: a whole piece is its chunks inflated in one go, and one slice inflates on its
 * own, which is how the cold path reads only the positions a query needs (stored-columns.ts). A loaded column is a view of its inflated piece, so
 * a load copies nothing after inflating (on this project's VM each fresh megabyte costs ~3 ms of page faults on first
 * touch: copying pieces into one buffer was 0.2 s of a 5M-row load). Written once per version (by its import, or by
 * the first instance that builds the index from the rows) and read by every instance instead of rebuilding the
 * index from the rows: the facets first (small, so the index answers within a second of the load starting), then
 * the values (docs/architecture.md, "The row index").
 */
import { finished } from 'node:stream/promises';
import { promisify } from 'node:util';
import { constants as zlibConstants, crc32, createInflateRaw, deflateRaw, type ZlibOptions } from 'node:zlib';
import type pg from 'pg';
import { withPooledClient, type Executor } from '../../db/database.js';
import type { RowIndexPart } from '../tables.js';
import { findRowIndexChunkNumbers, replaceRowIndexChunks, streamRowIndexChunks } from './engine-form-repository.js';
import {
  RowIds,
  RowIndex,
  type Codes,
  type FacetColumn,
  type IndicatorColumn,
} from '../query/engine/index/row-index.js';

/**
 * The layout's version: 5 added a CRC-32 of every column and slice (so a corrupt one is told, never served). A
 * engine form of another format is rebuilt from the version's Parquet copy (or its row table) by the first
 * instance that needs it; the code reads only its own format.
 */
export const FORMAT = 5;
const deflate = promisify<Buffer, ZlibOptions, Buffer>(deflateRaw);

/**
 * Positions per stored slice: what the cold path reads at least of a column for one row of a page (16 KB of
 * one-byte codes, 64 KB of values); a 5M-row column is 306 slices. Smaller slices deflate a little worse (each
 * starts with an empty dictionary) and make more rows to read.
 */
export const SLICE_ROWS = 16384;

interface FacetsHeader {
  format: number;
  /** The table it was made from (a check against loading another's). */
  rowsTable: string;
  rows: number;
  levelCodes: string[];
  timePeriodIds: number[];
  timePeriodStarts: number[];
  /** Each time period's first id when every period's ids are consecutive (then there is no ids piece), else null. */
  periodFirstIds: number[] | null;
  /**
   * Location and filter columns: dictionary and the byte width of their codes, in the order their pieces follow; and
   * which codes each slice holds (`presence`, see slicePresence), so the cold path skips slices no row of which matches.
   */
  facets: Array<{ column: string; dictionary: number[]; width: 1 | 2 | 4; presence: string }>;
  /** The levels' codes each slice holds (as `facets[].presence`). */
  levelPresence: string;
  /** Each piece's length before deflating, in order. */
  pieceBytes: number[];
  /** Positions per stored slice (SLICE_ROWS unless a test asked for fewer). */
  sliceRows: number;
  /** Each piece's bytes per stored slice (`sliceRows` of its first array's elements). */
  sliceBytes: number[];
  /** CRC-32 of each piece before deflating, and of each of its slices (checked as they are read). */
  pieceChecksums: number[];
  sliceChecksums: number[][];
}

interface ValuesHeader {
  format: number;
  rowsTable: string;
  rows: number;
  /** Indicator columns in the order of their pieces: values (Int32, or Float64 when `float`), then the text exceptions. */
  indicators: Array<{ column: string; scale: number; float: boolean; texts: string[]; exceptions: number }>;
  pieceBytes: number[];
  sliceRows: number;
  sliceBytes: number[];
  pieceChecksums: number[];
  sliceChecksums: number[][];
}

/** A stored part's header (both parts' headers have these). */
export type StoredHeader = FacetsHeader | ValuesHeader;
export type { FacetsHeader, ValuesHeader };

/** The chunk numbers holding each piece: piece i is chunks `first[i]` … `first[i] + count[i] - 1` (chunk 0: the header). */
export function pieceChunks(header: {
  pieceBytes: number[];
  sliceBytes: number[];
}): Array<{ first: number; count: number }> {
  let next = 1;
  return header.pieceBytes.map((bytes, i) => {
    const count = Math.max(1, Math.ceil(bytes / header.sliceBytes[i]!));
    const chunks = { first: next, count };
    next += count;
    return chunks;
  });
}

type StoredArray = Int32Array | Float64Array | Uint8Array | Uint16Array | Uint32Array;

/** Bytes rounded up to a multiple of 8: each array of a piece starts 8-aligned. */
const padded = (bytes: number) => bytes + ((8 - (bytes % 8)) % 8);

/**
 * Where an indicator's text exceptions lie in its values piece (bytes): after its `rows` values of `width` bytes,
 * their positions (Int32) from `from`, then their codes (Uint32) from `codesFrom`, up to `to`.
 */
export function exceptionsLayout(
  rows: number,
  width: number,
  exceptions: number,
): { from: number; codesFrom: number; to: number } {
  const from = padded(rows * width);
  const codesFrom = from + padded(4 * exceptions);
  return { from, codesFrom, to: codesFrom + 4 * exceptions };
}

/** One piece: the arrays of one column, each padded to a multiple of 8 bytes so that each starts aligned. */
function pieceOf(...arrays: StoredArray[]): Buffer {
  const parts: Buffer[] = [];
  for (const array of arrays) {
    parts.push(Buffer.from(array.buffer, array.byteOffset, array.byteLength));
    const pad = padded(array.byteLength) - array.byteLength;
    if (pad > 0) parts.push(Buffer.alloc(pad));
  }
  // One array needing no padding is stored from where it lies (the 5M-row values are 20 MB each).
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** A header as its length (u32) and JSON, padded to 8 bytes (formats 2 and 3 begin alike, so an older one is told). */
function headerBytes(header: FacetsHeader | ValuesHeader): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8 + padded(json.length));
  prefix.writeUInt32LE(json.length, 0);
  json.copy(prefix, 8);
  return prefix;
}

/**
 * Differences of consecutive ids (ids run ascending within a time period, so these are mostly 1), each slice's first
 * the id itself, so that a slice is read on its own.
 */
function idDifferences(ids: Int32Array, sliceRows: number): Int32Array {
  const differences = new Int32Array(ids.length);
  for (let p = 0; p < ids.length; p++) differences[p] = ids[p]! - (p % sliceRows === 0 ? 0 : ids[p - 1]!);
  return differences;
}

/** The ids back from their differences, in place (`first`: the position of differences[0], a slice's start). */
export function sumIdDifferences(differences: Int32Array, sliceRows: number, first = 0): Int32Array {
  for (let i = 0; i < differences.length; i++)
    if ((first + i) % sliceRows !== 0) differences[i] = differences[i]! + differences[i - 1]!;
  return differences;
}

/** Bytes of presence per slice: one bit per code modulo 256. */
export const PRESENCE_BYTES = 32;

/**
 * Which codes each slice of a column holds, as base64: PRESENCE_BYTES per slice, bit `code % 256` set when a position
 * of the slice has that code (exact for up to 256 codes, else a superset). Parquet's per row group statistics, for
 * codes: a location's rows are a run per year, so one location's query reads a third of a 5M-row version's slices.
 */
function slicePresence(codes: Codes, sliceRows: number): string {
  const presence = new Uint8Array(PRESENCE_BYTES * Math.ceil(codes.length / sliceRows));
  for (let base = 0, p = 0; p < codes.length; base += PRESENCE_BYTES) {
    for (const end = Math.min(codes.length, p + sliceRows); p < end; p++) {
      const code = codes[p]! & 255;
      presence[base + (code >>> 3)]! |= 1 << (code & 7);
    }
  }
  return Buffer.from(presence.buffer, presence.byteOffset, presence.byteLength).toString('base64');
}

/** CRC-32 of a piece and of each of its slices of `sliceBytes`. */
function checksumsOf(pieces: Buffer[], sliceBytes: number[]): Pick<FacetsHeader, 'pieceChecksums' | 'sliceChecksums'> {
  return {
    pieceChecksums: pieces.map((piece) => crc32(piece)),
    sliceChecksums: pieces.map((piece, i) => {
      const sums: number[] = [];
      for (let at = 0; at < piece.length || sums.length === 0; at += sliceBytes[i]!)
        sums.push(crc32(piece.subarray(at, at + sliceBytes[i]!)));
      return sums;
    }),
  };
}

/** One part as its header, then its pieces (views of the index's arrays, not copies, except the id differences). */
function encodePart(index: RowIndex, rowsTable: string, part: RowIndexPart, sliceRows: number): Buffer[] {
  const { ids, timePeriodIds, timePeriodStarts, levelCodes, levels, facets, indicators } = index.stored;
  if (part === 'facets') {
    const firsts = ids.periodFirstIds;
    const pieces = [
      ...(firsts ? [] : [pieceOf(idDifferences(ids.toArray(), sliceRows))]),
      pieceOf(levels),
      ...[...facets.values()].map((f) => pieceOf(f.codes)),
    ];
    const widths = [...(firsts ? [] : [4]), 1, ...[...facets.values()].map((f) => f.codes.BYTES_PER_ELEMENT)];
    const header: FacetsHeader = {
      format: FORMAT,
      rowsTable,
      rows: ids.length,
      levelCodes: [...levelCodes],
      timePeriodIds: [...timePeriodIds],
      timePeriodStarts: [...timePeriodStarts],
      periodFirstIds: firsts ? [...firsts] : null,
      facets: [...facets].map(([column, { dictionary, codes }]) => ({
        column,
        dictionary: [...dictionary],
        width: codes.BYTES_PER_ELEMENT as 1 | 2 | 4,
        presence: slicePresence(codes, sliceRows),
      })),
      levelPresence: slicePresence(levels, sliceRows),
      pieceBytes: pieces.map((p) => p.length),
      sliceRows,
      sliceBytes: widths.map((width) => width * sliceRows),
      ...checksumsOf(
        pieces,
        widths.map((width) => width * sliceRows),
      ),
    };
    return [headerBytes(header), ...pieces];
  }
  const pieces = [...indicators.values()].map((i) => pieceOf(i.values, i.textPositions, i.textCodes));
  const header: ValuesHeader = {
    format: FORMAT,
    rowsTable,
    rows: ids.length,
    indicators: [...indicators].map(([column, values]) => ({
      column,
      scale: values.scale,
      float: values.values instanceof Float64Array,
      texts: values.texts,
      exceptions: values.textPositions.length,
    })),
    pieceBytes: pieces.map((p) => p.length),
    sliceRows,
    sliceBytes: [...indicators.values()].map((i) => i.values.BYTES_PER_ELEMENT * sliceRows),
    ...checksumsOf(
      pieces,
      [...indicators.values()].map((i) => i.values.BYTES_PER_ELEMENT * sliceRows),
    ),
  };
  return [headerBytes(header), ...pieces];
}

/** Both parts of the engine form, each as its header and pieces before deflating (tests; storing deflates them). */
export interface EncodedRowIndex {
  facets: Buffer[];
  values: Buffer[];
}

export function encodeRowIndex(index: RowIndex, rowsTable: string, sliceRows = SLICE_ROWS): EncodedRowIndex {
  return {
    facets: encodePart(index, rowsTable, 'facets', sliceRows),
    values: encodePart(index, rowsTable, 'values', sliceRows),
  };
}

/** An engine form of another format: the caller rebuilds it (rebuild.ts). */
export class StaleEngineFormError extends Error {}

/** An engine form whose bytes are not what was written (a checksum, a length or the deflate stream disagrees): rebuilt, never served. */
export class CorruptEngineFormError extends Error {}

/** Whether a read of the engine form failed because the engine form is stale or corrupt (rebuild it), not because the database did. */
export function needsRebuild(error: unknown): boolean {
  return error instanceof StaleEngineFormError || error instanceof CorruptEngineFormError;
}

/** Checks an inflated column or slice against its stored CRC-32. */
export function checkChecksum(bytes: Buffer, expected: number | undefined, what: string): void {
  if (expected === undefined || crc32(bytes) !== expected)
    throw new CorruptEngineFormError(`The stored ${what} fails its checksum`);
}

/** A part's header, checked against the format and the table. */
export function readHeader<H extends { format: number; rowsTable: string; rows: number; pieceBytes: number[] }>(
  bytes: Buffer,
  rowsTable: string,
): H {
  let header: H;
  try {
    const length = bytes.readUInt32LE(0);
    header = JSON.parse(bytes.toString('utf8', 8, 8 + length)) as H;
  } catch (error) {
    throw new CorruptEngineFormError(`The stored row index header of ${rowsTable} cannot be read`, { cause: error });
  }
  if (header.format !== FORMAT)
    throw new StaleEngineFormError(`The stored row index of ${rowsTable} is format ${header.format}, not ${FORMAT}`);
  if (header.rowsTable !== rowsTable)
    throw new Error(`The stored row index is of ${header.rowsTable}, not ${rowsTable}`);
  return header;
}

/** A reader of one piece's arrays in order: views of it (a copy only if it does not start 8-aligned). */
function arraysOf(piece: Buffer | undefined, expectedBytes: number | undefined) {
  if (!piece || piece.length !== expectedBytes)
    throw new CorruptEngineFormError('A stored row index piece is missing or of the wrong length');
  const aligned = piece.byteOffset % 8 === 0 ? piece : Buffer.from(piece);
  let at = aligned.byteOffset;
  return <T extends StoredArray>(
    make: new (buffer: ArrayBuffer, offset: number, count: number) => T,
    count: number,
  ): T => {
    const array = new make(aligned.buffer as ArrayBuffer, at, count);
    at += padded(array.byteLength);
    return array;
  };
}

/** The index from its facets part (header, then pieces): without indicator values (add them with `decodeRowIndexValues`). */
export function decodeRowIndexFacets(pieces: readonly Buffer[], rowsTable: string): RowIndex {
  const header = readHeader<FacetsHeader>(pieces[0]!, rowsTable);
  const n = header.rows;
  let k = 1;
  const next = () => arraysOf(pieces[k], header.pieceBytes[k++ - 1]);
  const timePeriodStarts = Int32Array.from(header.timePeriodStarts);
  let ids: RowIds;
  if (header.periodFirstIds) {
    ids = RowIds.ofPeriodFirsts(n, Int32Array.from(header.periodFirstIds), timePeriodStarts);
  } else {
    // The differences become the ids in place (the piece is this index's own).
    ids = RowIds.of(sumIdDifferences(next()(Int32Array, n), header.sliceRows), timePeriodStarts);
  }
  const levels = next()(Uint8Array, n);
  const facets = new Map<string, FacetColumn>();
  for (const { column, dictionary, width } of header.facets) {
    const take = next();
    const codes: Codes = width === 1 ? take(Uint8Array, n) : width === 2 ? take(Uint16Array, n) : take(Int32Array, n);
    facets.set(column, { dictionary: Int32Array.from(dictionary), codes });
  }
  return new RowIndex({
    ids,
    timePeriodIds: Int32Array.from(header.timePeriodIds),
    timePeriodStarts,
    levelCodes: header.levelCodes,
    levels,
    facets,
    indicators: new Map(),
  });
}

/** The indicator columns of the values part (header, then pieces). */
export function decodeRowIndexValues(
  pieces: readonly Buffer[],
  rowsTable: string,
  rows: number,
): Map<string, IndicatorColumn> {
  const header = readHeader<ValuesHeader>(pieces[0]!, rowsTable);
  if (header.rows !== rows)
    throw new Error(`The stored values of ${rowsTable} are for ${header.rows} rows, not ${rows}`);
  const indicators = new Map<string, IndicatorColumn>();
  header.indicators.forEach(({ column, scale, float, texts, exceptions }, i) => {
    const take = arraysOf(pieces[i + 1], header.pieceBytes[i]);
    const values = float ? take(Float64Array, rows) : take(Int32Array, rows);
    const textPositions = take(Int32Array, exceptions);
    const textCodes = take(Uint32Array, exceptions);
    indicators.set(column, { values, scale, textPositions, textCodes, texts });
  });
  return indicators;
}

/** Both parts back into an index (tests). */
export function decodeRowIndex(stored: EncodedRowIndex, rowsTable: string): RowIndex {
  const index = decodeRowIndexFacets(stored.facets, rowsTable);
  index.addIndicators(decodeRowIndexValues(stored.values, rowsTable, index.size));
  return index;
}

/** A version's index as it is stored: both parts, each as its chunks (the header, then each piece's slices) deflated. */
export type DeflatedRowIndex = Array<{ part: RowIndexPart; chunks: Buffer[] }>;

/**
 * Slices deflated at once: enough that zlib's thread pool always has the next while the main thread is busy (one at a
 * time left an import waiting on round trips to the pool), few enough that their zlib states stay small (all of a
 * large piece's slices at once held theirs together; docs/decisions/0002-parquet-writer.md).
 */
const DEFLATING_AT_ONCE = 32;

/**
 * A piece's slices deflated (zlib's thread pool, off the main thread): each but the last ends in a full flush, so
 * the slices joined are one deflate stream and each inflates on its own too.
 */
async function deflateSlices(piece: Buffer, sliceBytes: number): Promise<Buffer[]> {
  const starts: number[] = [];
  for (let at = 0; at < piece.length || starts.length === 0; at += sliceBytes) starts.push(at);
  const slices = new Array<Buffer>(starts.length);
  let next = 0;
  const deflateNext = async () => {
    while (next < starts.length) {
      const k = next++;
      const at = starts[k]!;
      const deflated = await deflate(piece.subarray(at, at + sliceBytes), {
        level: 1,
        finishFlush: at + sliceBytes >= piece.length ? zlibConstants.Z_FINISH : zlibConstants.Z_FULL_FLUSH,
      });
      // A short output is a view of zlib's 16 KB output buffer: copied, so it does not keep the rest alive until
      // it is stored (a 1-byte code column's slices deflate to a few hundred bytes each).
      slices[k] = deflated.buffer.byteLength > 2 * deflated.length ? Buffer.from(deflated) : deflated;
    }
  };
  await Promise.all(Array.from({ length: Math.min(DEFLATING_AT_ONCE, starts.length) }, deflateNext));
  return slices;
}

/** Deflates a version's index, one slice at a time (of `sliceRows` positions: fewer only in tests). */
export async function deflateRowIndex(
  rowsTable: string,
  index: RowIndex,
  sliceRows = SLICE_ROWS,
): Promise<DeflatedRowIndex> {
  const parts: DeflatedRowIndex = [];
  for (const part of ['facets', 'values'] as const) {
    const [head, ...pieces] = encodePart(index, rowsTable, part, sliceRows);
    const { sliceBytes } = readHeader<StoredHeader>(head!, rowsTable);
    const chunks = [await deflate(head!, { level: 1 })];
    for (const [i, piece] of pieces.entries()) chunks.push(...(await deflateSlices(piece, sliceBytes[i]!)));
    parts.push({ part, chunks });
  }
  return parts;
}

/** Stores a deflated index (replacing any stored before). Returns the bytes stored. */
export async function storeDeflatedRowIndex(
  db: Executor,
  rowsTable: string,
  versionId: number,
  parts: DeflatedRowIndex,
): Promise<number> {
  await replaceRowIndexChunks(db, rowsTable, versionId, parts);
  return parts.reduce((sum, { chunks }) => sum + chunks.reduce((s, chunk) => s + chunk.length, 0), 0);
}

/** Stores a version's index (replacing any stored before), both parts, deflating one piece at a time. Returns the bytes stored. */
export async function saveEngineForm(
  db: Executor,
  rowsTable: string,
  versionId: number,
  index: RowIndex,
  sliceRows = SLICE_ROWS,
): Promise<number> {
  return storeDeflatedRowIndex(db, rowsTable, versionId, await deflateRowIndex(rowsTable, index, sliceRows));
}

/**
 * A stored chunk, inflated as its bytes arrive from the database (they are never gathered into one buffer: each
 * fresh megabyte costs ~3 ms of page faults on this project's VM). A piece whose length is known is inflated into one
 * buffer of that length: zlib's output slices of it are joined back without a copy (its default 16 KB output chunks
 * cost the main thread a callback and a copy each, about half of a 5M-row load when they were used).
 */
async function readInflated(
  client: pg.PoolClient,
  rowsTable: string,
  part: RowIndexPart,
  chunks: { first: number; count: number },
  bytes?: number,
): Promise<Buffer> {
  const inflater = createInflateRaw({ chunkSize: bytes === undefined ? 64 * 1024 : Math.max(64, bytes + 64) });
  const output: Buffer[] = [];
  inflater.on('data', (data: Buffer) => output.push(data));
  const done = finished(inflater);
  // Awaited below; handled here too, so a failed read (which destroys the inflater) leaves no unhandled rejection.
  done.catch(() => undefined);
  try {
    await streamRowIndexChunks(client, rowsTable, part, chunks, (deflated) => inflater.write(deflated));
  } catch (error) {
    inflater.destroy();
    throw error;
  }
  inflater.end();
  try {
    await done;
  } catch (error) {
    // zlib's own errors: the stored bytes are not a deflate stream this code wrote.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('Z_'))
      throw new CorruptEngineFormError(`A stored ${part} column of ${rowsTable} does not inflate`, { cause: error });
    throw error;
  }
  // Its length is checked against the header where its arrays are read (arraysOf).
  return joinWithoutCopy(output);
}

/** Buffers that are consecutive views of one memory as one view of it; a copy only when they are not. */
export function joinWithoutCopy(buffers: Buffer[]): Buffer {
  if (buffers.length === 1) return buffers[0]!;
  const first = buffers[0];
  if (!first) return Buffer.alloc(0);
  let end = first.byteOffset;
  for (const buffer of buffers) {
    if (buffer.buffer !== first.buffer || buffer.byteOffset !== end) return Buffer.concat(buffers);
    end += buffer.length;
  }
  return Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
}

/** Pieces being inflated at once while the next are read: the machine's two cores (a 5M-row values part 0.47 -> 0.3 s). */
const INFLATING_AT_ONCE = 2;

/**
 * One stored part as its header and inflated pieces, or undefined when there is none, read within `timeoutMs`. The
 * pieces are read one COPY each on one connection (bytes as they are stored, not hex text) while the ones before
 * are inflated, at most INFLATING_AT_ONCE at a time, so only that many deflated pieces are held at once.
 */
async function loadPart(
  db: Executor,
  rowsTable: string,
  part: RowIndexPart,
  timeoutMs: number,
): Promise<Buffer[] | undefined> {
  const chunks = await findRowIndexChunkNumbers(db, rowsTable, part);
  if (chunks.length === 0) return undefined;
  return withPooledClient(db, timeoutMs, async (client) => {
    const head = await readInflated(client, rowsTable, part, { first: 0, count: 1 });
    const header = readHeader<StoredHeader>(head, rowsTable);
    const { pieceBytes } = header;
    const ranges = pieceChunks(header);
    const expected = 1 + ranges.reduce((sum, r) => sum + r.count, 0);
    if (chunks.length !== expected)
      throw new Error(`The stored row index of ${rowsTable} (${part}) has ${chunks.length} chunks, not ${expected}`);
    const inflated: Array<Promise<Buffer>> = [];
    for (let i = 0; i < pieceBytes.length; i++) {
      if (i >= INFLATING_AT_ONCE) await inflated[i - INFLATING_AT_ONCE];
      // Reads queue on the one connection, in order. Handled at once, so a failure while an earlier piece is
      // awaited is not unhandled; it surfaces where this piece is awaited.
      const piece = readInflated(client, rowsTable, part, ranges[i]!, pieceBytes[i]).then((bytes) => {
        checkChecksum(bytes, header.pieceChecksums[i], `${part} piece ${i} of ${rowsTable}`);
        return bytes;
      });
      piece.catch(() => undefined);
      inflated.push(piece);
    }
    return [head, ...(await Promise.all(inflated))];
  });
}

/**
 * A version's stored index without its values, or undefined when it has none. An engine form of another format
 * (StaleEngineFormError) or corrupt (CorruptEngineFormError) throws: the caller rebuilds it.
 */
export async function loadRowIndexFacets(
  db: Executor,
  rowsTable: string,
  timeoutMs: number,
): Promise<RowIndex | undefined> {
  const pieces = await loadPart(db, rowsTable, 'facets', timeoutMs);
  return pieces ? decodeRowIndexFacets(pieces, rowsTable) : undefined;
}

/** A version's stored indicator values for its index (undefined when none are stored). */
export async function loadRowIndexValues(
  db: Executor,
  rowsTable: string,
  rows: number,
  timeoutMs: number,
): Promise<Map<string, IndicatorColumn> | undefined> {
  const pieces = await loadPart(db, rowsTable, 'values', timeoutMs);
  return pieces ? decodeRowIndexValues(pieces, rowsTable, rows) : undefined;
}
