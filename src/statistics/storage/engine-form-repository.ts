/**
 * All SQL of the engine form's storage: the slices of each stored part (`version_row_index_chunks`: chunk 0 a
 * part's header, then its columns' slices), read by binary COPY so the bytes come as they are stored.
 */
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { readBinaryCopy, streamBinaryCopyField } from '../../db/binary-copy.js';
import type { Executor } from '../../db/database.js';
import type { RowIndexPart } from '../tables.js';

/** The chunk numbers of a stored row index part, in order (none when it has no engine form). */
export async function findRowIndexChunkNumbers(db: Executor, rowsTable: string, part: RowIndexPart): Promise<number[]> {
  const rows = await db
    .selectFrom('version_row_index_chunks')
    .select('chunk')
    .where('rows_table', '=', rowsTable)
    .where('part', '=', part)
    .orderBy('chunk')
    .execute();
  return rows.map((r) => r.chunk);
}

/**
 * Stored chunks' (deflated) bytes, `first` … `first + count - 1` joined in order by PostgreSQL (one field: a 20M-row
 * version's index loaded in 1.6-2.1 s so, 2.4-3.2 s with a row per chunk), read on a raw client through a binary COPY
 * and handed to `write` as they arrive (views of what the connection received; never gathered into one buffer
 * here): as a bytea in a row they would come as hex text, twice their size, which PostgreSQL must write and the
 * client parse on its main thread (the 5,000,000-row version's 24 MB of values: 0.6-1.0 s as hex, 50-70 ms by COPY,
 * docs/performance.md). Fails unless every one of them is stored; resolves with their bytes.
 */
export async function streamRowIndexChunks(
  client: pg.PoolClient,
  rowsTable: string,
  part: RowIndexPart,
  chunks: { first: number; count: number },
  write: (bytes: Buffer) => void,
): Promise<number> {
  const first = Math.trunc(chunks.first);
  const last = first + Math.trunc(chunks.count) - 1;
  const where = `rows_table = ${pg.escapeLiteral(rowsTable)} AND part = ${pg.escapeLiteral(part)} AND chunk BETWEEN ${first} AND ${last}`;
  const copy = copyTo(
    `COPY (SELECT string_agg(bytes, ''::bytea ORDER BY chunk) FROM version_row_index_chunks WHERE ${where} HAVING count(*) = ${last - first + 1}) TO STDOUT (FORMAT binary)`,
  );
  const length = await streamBinaryCopyField(client.query(copy), write);
  if (length === undefined)
    throw new Error(`Not all of the stored row index chunks ${first}-${last} of ${part} for ${rowsTable} are stored`);
  return length;
}

/**
 * Some stored chunks' (deflated) bytes, keyed `part:chunk`, read through one binary COPY (bytes as they are stored).
 * Chunks not stored are missing from the map.
 */
export async function readRowIndexChunks(
  client: pg.PoolClient,
  rowsTable: string,
  wanted: ReadonlyMap<RowIndexPart, Iterable<number>>,
): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  const terms: string[] = [];
  for (const [part, chunks] of wanted) {
    const list = [...chunks].map((c) => Math.trunc(c));
    if (list.length > 0) terms.push(`(part = ${pg.escapeLiteral(part)} AND chunk IN (${list.join(',')}))`);
  }
  if (terms.length === 0) return found;
  const copy = copyTo(
    `COPY (SELECT part, chunk, bytes FROM version_row_index_chunks WHERE rows_table = ${pg.escapeLiteral(rowsTable)} AND (${terms.join(' OR ')})) TO STDOUT (FORMAT binary)`,
  );
  await readBinaryCopy(client.query(copy), 3, (buffer, offsets, lengths) => {
    const part = buffer.toString('latin1', offsets[0], offsets[0]! + lengths[0]!);
    // A copy: the tuple's buffer is the connection's and is reused.
    found.set(
      `${part}:${buffer.readInt32BE(offsets[1])}`,
      Buffer.from(buffer.subarray(offsets[2], offsets[2]! + lengths[2]!)),
    );
  });
  return found;
}

/** Replaces the stored row index of `rowsTable` with these chunks of its parts (each part's header, then its slices). */
export async function replaceRowIndexChunks(
  db: Executor,
  rowsTable: string,
  versionId: number,
  parts: ReadonlyArray<{ part: RowIndexPart; chunks: readonly Buffer[] }>,
): Promise<void> {
  await db.deleteFrom('version_row_index_chunks').where('rows_table', '=', rowsTable).execute();
  // Many chunks to a statement (a 5M-row version has about 3,000: one statement each was 1.3 s of its import), up to
  // about 16 MB of them.
  let batch: Array<{ rows_table: string; part: RowIndexPart; chunk: number; version_id: number; bytes: Buffer }> = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length > 0) await db.insertInto('version_row_index_chunks').values(batch).execute();
    batch = [];
    batchBytes = 0;
  };
  for (const { part, chunks } of parts) {
    for (const [chunk, bytes] of chunks.entries()) {
      if (batch.length >= 500 || batchBytes + bytes.length > 16 * 1024 * 1024) await flush();
      batch.push({ rows_table: rowsTable, part, chunk, version_id: versionId, bytes });
      batchBytes += bytes.length;
    }
  }
  await flush();
}

/** Every version with data rows (a rows key), by id. */
export async function findVersionsWithRows(db: Executor): Promise<Array<{ id: number; rowsTable: string }>> {
  const rows = await db
    .selectFrom('data_set_versions')
    .select(['id', 'rows_table'])
    .where('rows_table', 'is not', null)
    .orderBy('id')
    .execute();
  return rows.map((r) => ({ id: r.id, rowsTable: r.rows_table! }));
}
