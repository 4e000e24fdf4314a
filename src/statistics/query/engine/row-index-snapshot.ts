/**
 * A version's row index in its stored form, in two parts (rows of `version_row_index_chunks`):
 * - `facets`: row ids (as differences from the previous position's, which deflate to almost nothing), levels,
 *   time period ranges, location and filter codes with their dictionaries: all that count and page need;
 * - `values`: the indicator values.
 * Each part is one buffer (a JSON header, then its arrays, each padded to 8 bytes) cut in 8 MB pieces, each deflated
 * on its own. Written once per version (by its import, or by the first instance that builds the index from the
 * rows) and read by every instance instead of rebuilding the index from the rows: the facets first (small, so the
 * index answers within a second of the load starting), then the values (docs/architecture.md, "The row index").
 */
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import { withPooledClient, type Executor } from '../../../db/database.js';
import type { RowIndexPart } from '../../tables.js';
import { findRowIndexChunkNumbers, readRowIndexChunk, replaceRowIndexChunks } from './repository.js';
import { RowIds, RowIndex, type Codes, type FacetColumn, type IndicatorColumn } from './row-index.js';

/** Format 2: the compact columns in two parts. A stored form of another format is made again from the rows. */
const FORMAT = 2;
const CHUNK_BYTES = 8 * 1024 * 1024;
const deflate = promisify(deflateRaw);
const inflateRawAsync = promisify(inflateRaw);
/**
 * A stored piece inflated in one output buffer: zlib's default 16 KB output chunks cost the main thread a callback
 * and a copy each (4,000 for a 5M-row facets part), about 0.5 s of a 5M-row index's load.
 */
const inflate = (deflated: Buffer) => inflateRawAsync(deflated, { chunkSize: CHUNK_BYTES });

interface FacetsHeader {
  format: number;
  /** The table it was made from (a check against loading another's). */
  rowsTable: string;
  rows: number;
  levelCodes: string[];
  timePeriodIds: number[];
  timePeriodStarts: number[];
  /** Location and filter columns: dictionary and the byte width of their codes, in the order their codes follow. */
  facets: Array<{ column: string; dictionary: number[]; width: 1 | 2 | 4 }>;
}

interface ValuesHeader {
  format: number;
  rowsTable: string;
  rows: number;
  /** Indicator columns in the order their arrays follow: values (Int32, or Float64 when `float`), then the text exceptions. */
  indicators: Array<{ column: string; scale: number; float: boolean; texts: string[]; exceptions: number }>;
}

type StoredArray = Int32Array | Float64Array | Uint8Array | Uint16Array | Uint32Array;

/** The bytes of an array, padded to a multiple of 8 so that every array of the stored form starts aligned. */
function bytesOf(array: StoredArray): Buffer[] {
  const bytes = Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  const pad = (8 - (array.byteLength % 8)) % 8;
  return pad === 0 ? [bytes] : [bytes, Buffer.alloc(pad)];
}

/** A header as its length (u32) and JSON, padded to 8 bytes. */
function headerBytes(header: FacetsHeader | ValuesHeader): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8 + json.length + ((8 - (json.length % 8)) % 8));
  prefix.writeUInt32LE(json.length, 0);
  json.copy(prefix, 8);
  return prefix;
}

/** Differences of consecutive ids (ids run ascending within a time period, so these are mostly 1). */
function idDifferences(ids: Int32Array): Int32Array {
  const differences = new Int32Array(ids.length);
  for (let p = 0; p < ids.length; p++) differences[p] = ids[p]! - (p === 0 ? 0 : ids[p - 1]!);
  return differences;
}

/** The buffers of one part in order: its header, then its arrays (views, not copies, except the id differences). */
function encodedParts(index: RowIndex, rowsTable: string, part: RowIndexPart): Buffer[] {
  const { ids, timePeriodIds, timePeriodStarts, levelCodes, levels, facets, indicators } = index.stored;
  if (part === 'facets') {
    const header: FacetsHeader = {
      format: FORMAT,
      rowsTable,
      rows: ids.length,
      levelCodes: [...levelCodes],
      timePeriodIds: [...timePeriodIds],
      timePeriodStarts: [...timePeriodStarts],
      facets: [...facets].map(([column, { dictionary, codes }]) => ({ column, dictionary: [...dictionary], width: codes.BYTES_PER_ELEMENT as 1 | 2 | 4 })),
    };
    return [headerBytes(header), ...bytesOf(idDifferences(ids.toArray())), ...bytesOf(levels), ...[...facets.values()].flatMap((f) => bytesOf(f.codes))];
  }
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
  };
  return [headerBytes(header), ...[...indicators.values()].flatMap((i) => [...bytesOf(i.values), ...bytesOf(i.textPositions), ...bytesOf(i.textCodes)])];
}

/** Both parts of the stored form, each as one buffer (tests; storing goes piece by piece). */
export interface EncodedRowIndex {
  facets: Buffer;
  values: Buffer;
}

export function encodeRowIndex(index: RowIndex, rowsTable: string): EncodedRowIndex {
  return { facets: Buffer.concat(encodedParts(index, rowsTable, 'facets')), values: Buffer.concat(encodedParts(index, rowsTable, 'values')) };
}

/** One part of the stored form as consecutive pieces of `size` bytes (the last shorter), copying one piece at a time, never the whole. */
export function rowIndexPieces(index: RowIndex, rowsTable: string, part: RowIndexPart, size = CHUNK_BYTES): Generator<Buffer> {
  return piecesOf(encodedParts(index, rowsTable, part), size);
}

function* piecesOf(parts: readonly Buffer[], size: number): Generator<Buffer> {
  let piece = Buffer.allocUnsafe(size);
  let filled = 0;
  for (const part of parts) {
    for (let at = 0; at < part.length; ) {
      const n = Math.min(size - filled, part.length - at);
      part.copy(piece, filled, at, at + n);
      filled += n;
      at += n;
      if (filled === size) {
        yield piece;
        piece = Buffer.allocUnsafe(size);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield piece.subarray(0, filled);
}

/** A stored form of another format (made before the compact columns): the caller makes it again from the rows. */
export class StaleRowIndexFormatError extends Error {}

/** Reads a part's header and returns it with a reader of its arrays in order (views on the buffer). */
function openPart<H extends { format: number; rowsTable: string; rows: number }>(raw: Buffer, rowsTable: string) {
  const aligned = raw.byteOffset % 8 === 0 ? raw : Buffer.from(raw);
  const length = aligned.readUInt32LE(0);
  const header = JSON.parse(aligned.toString('utf8', 8, 8 + length)) as H;
  if (header.format !== FORMAT) throw new StaleRowIndexFormatError(`The stored row index of ${rowsTable} is format ${header.format}, not ${FORMAT}`);
  if (header.rowsTable !== rowsTable) throw new Error(`The stored row index is of ${header.rowsTable}, not ${rowsTable}`);
  let at = aligned.byteOffset + 8 + length + ((8 - (length % 8)) % 8);
  const take = <T extends StoredArray>(make: new (buffer: ArrayBuffer, offset: number, count: number) => T, count: number): T => {
    const array = new make(aligned.buffer as ArrayBuffer, at, count);
    at += array.byteLength + ((8 - (array.byteLength % 8)) % 8);
    return array;
  };
  return { header, take };
}

/** The index from its facets part: without indicator values (add them with `decodeRowIndexValues`). */
export function decodeRowIndexFacets(raw: Buffer, rowsTable: string): RowIndex {
  const { header, take } = openPart<FacetsHeader>(raw, rowsTable);
  const n = header.rows;
  // The differences become the ids in place (the buffer is this index's own).
  const ids = take(Int32Array, n);
  for (let p = 1; p < n; p++) ids[p] = ids[p]! + ids[p - 1]!;
  const timePeriodStarts = Int32Array.from(header.timePeriodStarts);
  const rowIds = RowIds.of(ids, timePeriodStarts);
  // Ids held per period leave part of the buffer unused (20 of 55 MB at 5M rows): the other arrays are copied out
  // of it, so it is freed.
  const own = <T extends Codes>(array: T): T => (rowIds.perPeriod ? (array.slice() as T) : array);
  const levels = own(take(Uint8Array, n));
  const facets = new Map<string, FacetColumn>();
  for (const { column, dictionary, width } of header.facets) {
    const codes: Codes = own(width === 1 ? take(Uint8Array, n) : width === 2 ? take(Uint16Array, n) : take(Int32Array, n));
    facets.set(column, { dictionary: Int32Array.from(dictionary), codes });
  }
  return new RowIndex({
    ids: rowIds,
    timePeriodIds: Int32Array.from(header.timePeriodIds),
    timePeriodStarts,
    levelCodes: header.levelCodes,
    levels,
    facets,
    indicators: new Map(),
  });
}

/** The indicator columns of the values part. */
export function decodeRowIndexValues(raw: Buffer, rowsTable: string, rows: number): Map<string, IndicatorColumn> {
  const { header, take } = openPart<ValuesHeader>(raw, rowsTable);
  if (header.rows !== rows) throw new Error(`The stored values of ${rowsTable} are for ${header.rows} rows, not ${rows}`);
  const indicators = new Map<string, IndicatorColumn>();
  for (const { column, scale, float, texts, exceptions } of header.indicators) {
    const values = float ? take(Float64Array, rows) : take(Int32Array, rows);
    const textPositions = take(Int32Array, exceptions);
    const textCodes = take(Uint32Array, exceptions);
    indicators.set(column, { values, scale, textPositions, textCodes, texts });
  }
  return indicators;
}

/** Both parts back into an index (tests). */
export function decodeRowIndex(stored: EncodedRowIndex, rowsTable: string): RowIndex {
  const index = decodeRowIndexFacets(stored.facets, rowsTable);
  index.addIndicators(decodeRowIndexValues(stored.values, rowsTable, index.size));
  return index;
}

/** One part deflated piece by piece, made one at a time so that storing a large index never holds a second copy of it. */
async function deflatedPieces(index: RowIndex, rowsTable: string, part: RowIndexPart): Promise<Buffer[]> {
  const pieces: Buffer[] = [];
  for (const piece of rowIndexPieces(index, rowsTable, part)) pieces.push(await deflate(piece, { level: 1 }));
  return pieces;
}

/** Stores a version's index (replacing any stored before), both parts. Returns the bytes stored. */
export async function saveRowIndexSnapshot(db: Executor, rowsTable: string, versionId: number, index: RowIndex): Promise<number> {
  const parts = [
    { part: 'facets' as const, pieces: await deflatedPieces(index, rowsTable, 'facets') },
    { part: 'values' as const, pieces: await deflatedPieces(index, rowsTable, 'values') },
  ];
  await replaceRowIndexChunks(db, rowsTable, versionId, parts);
  return parts.reduce((sum, { pieces }) => sum + pieces.reduce((s, piece) => s + piece.length, 0), 0);
}

/**
 * One stored part as one buffer, or undefined when there is none, read within `timeoutMs`. Every piece but the last
 * holds CHUNK_BYTES, so the buffer is allocated once and each piece inflated into its place. The pieces are read one
 * COPY each on one connection (bytes as they are stored, not hex text), the next one's read overlapping the
 * inflating of the last, so at most two are held at once.
 */
async function loadPart(db: Executor, rowsTable: string, part: RowIndexPart, timeoutMs: number): Promise<Buffer | undefined> {
  const chunks = await findRowIndexChunkNumbers(db, rowsTable, part);
  if (chunks.length === 0) return undefined;
  return withPooledClient(db, timeoutMs, async (client) => {
    const last = await inflate(await readRowIndexChunk(client, rowsTable, part, chunks.at(-1)!));
    const raw = Buffer.allocUnsafeSlow((chunks.length - 1) * CHUNK_BYTES + last.length);
    last.copy(raw, (chunks.length - 1) * CHUNK_BYTES);
    let next = chunks.length > 1 ? readRowIndexChunk(client, rowsTable, part, chunks[0]!) : undefined;
    try {
      for (let i = 0; i < chunks.length - 1; i++) {
        const deflated = await next!;
        next = i + 1 < chunks.length - 1 ? readRowIndexChunk(client, rowsTable, part, chunks[i + 1]!) : undefined;
        (await inflate(deflated)).copy(raw, i * CHUNK_BYTES);
      }
    } catch (error) {
      // The read under way fails too once the connection goes: not left unhandled.
      void next?.catch(() => undefined);
      throw error;
    }
    return raw;
  });
}

/** A version's stored index without its values, or undefined when it has none (or one of an earlier format). */
export async function loadRowIndexFacets(db: Executor, rowsTable: string, timeoutMs: number): Promise<RowIndex | undefined> {
  const raw = await loadPart(db, rowsTable, 'facets', timeoutMs);
  if (!raw) return undefined;
  try {
    return decodeRowIndexFacets(raw, rowsTable);
  } catch (error) {
    if (error instanceof StaleRowIndexFormatError) return undefined;
    throw error;
  }
}

/** A version's stored indicator values for its index (undefined when none are stored). */
export async function loadRowIndexValues(db: Executor, rowsTable: string, rows: number, timeoutMs: number): Promise<Map<string, IndicatorColumn> | undefined> {
  const raw = await loadPart(db, rowsTable, 'values', timeoutMs);
  return raw ? decodeRowIndexValues(raw, rowsTable, rows) : undefined;
}
