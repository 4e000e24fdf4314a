import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/** The stored data file of a version: `data_set_version_files.content_gzip`. */

/** Size in bytes of the version's stored gzip file, or undefined when it has none. */
export async function findStoredFileSize(db: Executor, versionId: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('data_set_version_files')
    .select(sql<number>`octet_length(content_gzip)`.as('gzip_bytes'))
    .where('version_id', '=', versionId)
    .executeTakeFirst();
  return row ? Number(row.gzip_bytes) : undefined;
}

/** `length` bytes of the stored gzip file from `offset` (0-based). */
export async function readStoredFileSlice(
  db: Executor,
  versionId: number,
  offset: number,
  length: number,
): Promise<Buffer> {
  const row = await db
    .selectFrom('data_set_version_files')
    // substring on bytea is 1-based.
    .select(sql<Buffer>`substring(content_gzip from ${offset + 1} for ${length})`.as('slice'))
    .where('version_id', '=', versionId)
    .executeTakeFirstOrThrow();
  return row.slice;
}
