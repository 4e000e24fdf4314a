import { Readable, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { Executor } from '../../db/database.js';
import { NotFoundError } from '../../errors.js';
import { weakEtag } from '../../http/conditional.js';
import { resolveDataSetVersion } from '../versions/access.js';
import { findStoredFileSize, readStoredFileSlice } from './repository.js';

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
  const gzipBytes = await findStoredFileSize(db, versionId);
  if (gzipBytes === undefined) throw new NotFoundError('The data file of this version is not available.');
  return { versionId, gzipBytes };
}

async function* gzipSlices(db: Executor, file: StoredCsvFile, sliceBytes: number): AsyncGenerator<Buffer> {
  for (let offset = 0; offset < file.gzipBytes; offset += sliceBytes) {
    yield await readStoredFileSlice(db, file.versionId, offset, sliceBytes);
  }
}

/** The stored gzip bytes as a stream. */
export function streamStoredCsvGzip(db: Executor, file: StoredCsvFile, sliceBytes = CSV_SLICE_BYTES): Readable {
  return Readable.from(gzipSlices(db, file, sliceBytes), { objectMode: false });
}

/** `{dataSetId}_v{version}.csv`, as the reference names the download. */
export function csvFileName(dataSetId: string, versionNumber: string): string {
  return `${dataSetId}_v${versionNumber}.csv`;
}

/** A version's data file, found and allowed, ready to be sent compressed or not. */
export interface DataFileDownload {
  etag: string;
  fileName: string;
  gzipBytes: number;
  /** The stored gzip bytes, streamed. */
  gzip(): Readable;
  /** The CSV text, decompressed on the way; `onError` hears of a stream that ended early. */
  csv(onError: (error: Error) => void): Readable;
}

/** `GET /data-sets/{id}/csv`: the version (view policy) and its stored file, or 404/403. */
export async function openDataFileDownload(
  db: Executor,
  target: { dataSetId: string; dataSetVersion?: string; previewToken?: string },
): Promise<DataFileDownload> {
  const resolved = await resolveDataSetVersion(db, { ...target, policy: 'view' });
  const file = await findStoredCsv(db, resolved.version.id);
  return {
    etag: weakEtag('csv', resolved.version.id, resolved.version.file_id, file.gzipBytes),
    fileName: csvFileName(resolved.dataSet.id, resolved.versionNumber),
    gzipBytes: file.gzipBytes,
    gzip: () => streamStoredCsvGzip(db, file),
    csv: (onError) => {
      const gunzip = createGunzip();
      pipeline(streamStoredCsvGzip(db, file), gunzip, (error) => {
        if (error) onError(error);
      });
      return gunzip;
    },
  };
}
