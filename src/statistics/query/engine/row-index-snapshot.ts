/**
 * A version's row index in its stored form: the typed arrays of the index (row ids, level, time period, locations,
 * filters, indicator values) in one buffer, cut in 8 MB pieces each deflated on its own, in the bytea rows of
 * `version_row_index_chunks`. Written once per version (by its import, or by the first instance that builds the
 * index from the rows), read by every instance in one query instead of rebuilding the index from the rows
 * (bench/index-load.ts measures the options; docs/architecture.md says why this one).
 */
import { promisify } from 'node:util';
import { deflateRaw, inflateRaw } from 'node:zlib';
import type { Executor } from '../../../db/database.js';
import { findRowIndexChunks, replaceRowIndexChunks } from './repository.js';
import { RowIndex, type IndicatorColumn } from './row-index.js';

const FORMAT = 1;
const CHUNK_BYTES = 8 * 1024 * 1024;
const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

interface Header {
  format: number;
  /** The table it was made from (a check against loading another's). */
  rowsTable: string;
  rows: number;
  levelCodes: string[];
  /** Int32 columns, in the order they follow the indicator numbers. */
  columns: string[];
  /** Indicator columns (Float64 numbers first in the buffer) and their texts that are not such numbers. */
  indicators: Array<{ column: string; texts: Array<[number, string]> }>;
}

/** The index as one buffer: header length (u32), header JSON padded to 8 bytes, Float64 arrays, Int32 arrays. */
export function encodeRowIndex(index: RowIndex, rowsTable: string): Buffer {
  return Buffer.concat(encodedParts(index, rowsTable));
}

/** The parts of `encodeRowIndex`'s buffer in order: the header, then views on the index's arrays (not copied). */
function encodedParts(index: RowIndex, rowsTable: string): Buffer[] {
  const { ids, columns, levelCodes, indicators } = index.parts();
  const header: Header = {
    format: FORMAT,
    rowsTable,
    rows: ids.length,
    levelCodes: [...levelCodes],
    columns: [...columns.keys()],
    indicators: [...indicators].map(([column, values]) => ({ column, texts: [...values.texts] })),
  };
  const json = Buffer.from(JSON.stringify(header));
  const prefix = Buffer.alloc(8 + json.length + ((8 - (json.length % 8)) % 8));
  prefix.writeUInt32LE(json.length, 0);
  json.copy(prefix, 8);
  const bytes = (array: Int32Array | Float64Array) => Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  return [prefix, ...[...indicators.values()].map((i) => bytes(i.numbers)), bytes(ids), ...[...columns.values()].map(bytes)];
}

/** The stored form as consecutive pieces of `size` bytes (the last shorter), copying one piece at a time, never the whole. */
export function rowIndexPieces(index: RowIndex, rowsTable: string, size = CHUNK_BYTES): Generator<Buffer> {
  return piecesOf(encodedParts(index, rowsTable), size);
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

/** The index back from `encodeRowIndex`'s buffer (views on it, no copy when it is aligned); without indicator values when `indicators` is false. */
export function decodeRowIndex(raw: Buffer, rowsTable: string, options: { indicators?: boolean } = {}): RowIndex {
  const aligned = raw.byteOffset % 8 === 0 ? raw : Buffer.from(raw);
  const length = aligned.readUInt32LE(0);
  const header = JSON.parse(aligned.toString('utf8', 8, 8 + length)) as Header;
  if (header.format !== FORMAT || header.rowsTable !== rowsTable) throw new Error(`The stored row index is not format ${FORMAT} of ${rowsTable}`);
  const n = header.rows;
  let at = aligned.byteOffset + 8 + length + ((8 - (length % 8)) % 8);
  const indicators = new Map<string, IndicatorColumn>();
  for (const { column, texts } of header.indicators) {
    if (options.indicators !== false) indicators.set(column, { numbers: new Float64Array(aligned.buffer, at, n), texts: new Map(texts) });
    at += n * 8;
  }
  const ids = new Int32Array(aligned.buffer, at, n);
  at += n * 4;
  const columns = new Map<string, Int32Array>();
  for (const column of header.columns) {
    columns.set(column, new Int32Array(aligned.buffer, at, n));
    at += n * 4;
  }
  return new RowIndex(ids, columns, header.levelCodes, indicators);
}

/**
 * Stores a version's index (replacing any stored before): its buffer in pieces of CHUNK_BYTES, each deflated on
 * its own (so that loading can inflate each into its place), made one at a time so that storing a large index never
 * holds a second copy of it (the import's peak memory). Returns the bytes stored.
 */
export async function saveRowIndexSnapshot(db: Executor, rowsTable: string, versionId: number, index: RowIndex): Promise<number> {
  const pieces: Buffer[] = [];
  for (const piece of rowIndexPieces(index, rowsTable)) pieces.push(await deflate(piece, { level: 1 }));
  await replaceRowIndexChunks(db, rowsTable, versionId, pieces);
  return pieces.reduce((sum, piece) => sum + piece.length, 0);
}

/**
 * A version's stored index, or undefined when it has none (imported before the stored form, or not yet built).
 * Every piece but the last holds CHUNK_BYTES, so the whole buffer is allocated once and each piece inflated into
 * its place (two at a time on the thread pool).
 */
export async function loadRowIndexSnapshot(db: Executor, rowsTable: string, options: { indicators?: boolean } = {}): Promise<RowIndex | undefined> {
  const chunks = await findRowIndexChunks(db, rowsTable);
  if (chunks.length === 0) return undefined;
  const last = await inflate(chunks.at(-1)!);
  const raw = Buffer.allocUnsafeSlow((chunks.length - 1) * CHUNK_BYTES + last.length);
  last.copy(raw, (chunks.length - 1) * CHUNK_BYTES);
  for (let i = 0; i < chunks.length - 1; i += 2) {
    const pair = await Promise.all(chunks.slice(i, Math.min(i + 2, chunks.length - 1)).map((c) => inflate(c)));
    pair.forEach((piece, k) => piece.copy(raw, (i + k) * CHUNK_BYTES));
  }
  return decodeRowIndex(raw, rowsTable, options);
}
