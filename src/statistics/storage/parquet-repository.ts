import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/** A version's Parquet copy in `data_set_version_parquet`: its bytes are read in slices, never more than asked. */

export interface ParquetCopyInfo {
  versionId: number;
  byteSize: number;
  /** SHA-256 of the bytes, hex: the download's entity tag. */
  sha256: string;
  format: number;
}

/**
 * Stores a version's copy unless it has one already (a backfill run twice, or beside an import, stores it once).
 * Returns whether it stored it.
 */
export async function storeParquetCopy(
  db: Executor,
  versionId: number,
  bytes: Buffer,
  format: number,
): Promise<boolean> {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const inserted = await db
    .insertInto('data_set_version_parquet')
    .values({ version_id: versionId, bytes, byte_size: bytes.length, sha256, format })
    .onConflict((oc) => oc.column('version_id').doNothing())
    .returning('version_id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Size, hash and format of a version's copy, or undefined when it has none. */
export async function findParquetCopyInfo(db: Executor, versionId: number): Promise<ParquetCopyInfo | undefined> {
  const row = await db
    .selectFrom('data_set_version_parquet')
    .select(['version_id', 'byte_size', 'sha256', 'format'])
    .where('version_id', '=', versionId)
    .executeTakeFirst();
  return row
    ? { versionId: row.version_id, byteSize: Number(row.byte_size), sha256: row.sha256, format: row.format }
    : undefined;
}

/** `length` bytes of a version's copy from `offset` (0-based); fewer at its end. */
export async function readParquetCopySlice(
  db: Executor,
  versionId: number,
  offset: number,
  length: number,
): Promise<Buffer> {
  const row = await db
    .selectFrom('data_set_version_parquet')
    // substring on bytea is 1-based.
    .select(sql<Buffer>`substring(bytes from ${offset + 1} for ${length})`.as('slice'))
    .where('version_id', '=', versionId)
    .executeTakeFirstOrThrow();
  return row.slice;
}

/** The whole copy of a version, or undefined when it has none. */
export async function readParquetCopyBytes(db: Executor, versionId: number): Promise<Buffer | undefined> {
  const row = await db
    .selectFrom('data_set_version_parquet')
    .select('bytes')
    .where('version_id', '=', versionId)
    .executeTakeFirst();
  return row?.bytes;
}

/** Versions that have a kept data file but no Parquet copy, oldest first. */
export async function findVersionsWithoutParquetCopy(db: Executor): Promise<number[]> {
  const rows = await db
    .selectFrom('data_set_versions as v')
    .innerJoin('data_set_version_files as f', 'f.version_id', 'v.id')
    .leftJoin('data_set_version_parquet as p', 'p.version_id', 'v.id')
    .select('v.id')
    .where('p.version_id', 'is', null)
    .orderBy('v.id')
    .execute();
  return rows.map((r) => r.id);
}

/** The key of a version's rows (`data_set_versions.rows_table`), or undefined when the version does not exist. */
export async function findVersionRowsKey(db: Executor, versionId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('data_set_versions')
    .select('rows_table')
    .where('id', '=', versionId)
    .executeTakeFirst();
  return row ? (row.rows_table ?? `v${versionId}`) : undefined;
}
