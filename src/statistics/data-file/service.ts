import { Readable } from 'node:stream';
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { NotFoundError } from '../../errors.js';

/**
 * The CSV download: the version's original data CSV (labels, not ids), stored gzip-compressed in
 * `data_set_version_files.content_gzip`. It is read in slices (`substring` of the bytea), so neither the
 * database client nor this process holds the whole file; a slow client slows the reads down (stream backpressure).
 */

/** Bytes per database read. */
export const CSV_SLICE_BYTES = 256 * 1024;

export interface StoredCsvFile {
  versionId: number;
  /** Size of the stored gzip bytes. */
  gzipBytes: number;
}

export async function findStoredCsv(db: Executor, versionId: number): Promise<StoredCsvFile> {
  const row = await db
    .selectFrom('data_set_version_files')
    .select(sql<number>`octet_length(content_gzip)`.as('gzip_bytes'))
    .where('version_id', '=', versionId)
    .executeTakeFirst();
  if (!row) throw new NotFoundError('The data file of this version is not available.');
  return { versionId, gzipBytes: Number(row.gzip_bytes) };
}

async function* gzipSlices(db: Executor, file: StoredCsvFile, sliceBytes: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < file.gzipBytes; offset += sliceBytes) {
    const row = await db
      .selectFrom('data_set_version_files')
      // substring on bytea is 1-based.
      .select(sql<Buffer>`substring(content_gzip from ${offset + 1} for ${sliceBytes})`.as('slice'))
      .where('version_id', '=', file.versionId)
      .executeTakeFirstOrThrow();
    yield row.slice;
  }
}

/** The stored gzip bytes as a stream. */
export function streamStoredCsvGzip(db: Executor, file: StoredCsvFile, sliceBytes = CSV_SLICE_BYTES): Readable {
  return Readable.from(gzipSlices(db, file, sliceBytes), { objectMode: false });
}

/** Whether the request's Accept-Encoding allows gzip (RFC 9110 §12.5.3: `gzip`, `x-gzip` or `*`, with q > 0). */
export function acceptsGzip(acceptEncoding: string | string[] | undefined): boolean {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding;
  if (!header) return false;
  let gzip: number | undefined;
  let star: number | undefined;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (name === 'gzip' || name === 'x-gzip') gzip = Number.isNaN(q) ? 0 : q;
    else if (name === '*') star = Number.isNaN(q) ? 0 : q;
  }
  return (gzip ?? star ?? 0) > 0;
}

/** `{dataSetId}_v{version}.csv`, as the reference names the download. */
export function csvFileName(dataSetId: string, versionNumber: string): string {
  return `${dataSetId}_v${versionNumber}.csv`;
}
