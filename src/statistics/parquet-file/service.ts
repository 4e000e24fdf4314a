import { Readable } from 'node:stream';
import rangeParser from 'range-parser';
import type { Executor } from '../../db/database.js';
import { NotFoundError, RangeNotSatisfiableError } from '../../errors.js';
import { resolveDataSetVersion } from '../versions/access.js';
import { findParquetCopyInfo, readParquetCopySlice, type ParquetCopyInfo } from '../storage/parquet-repository.js';

/**
 * The Parquet download: a version's Parquet copy (`data_set_version_parquet`), whole or one byte range of it, read
 * from the database in slices as the client takes them (a slow client slows the reads down), so neither the database
 * client nor this process holds the file.
 */

/** Bytes per database read. */
export const PARQUET_SLICE_BYTES = 256 * 1024;

/** `{dataSetId}_v{version}.parquet`, as the CSV download is named. */
export function parquetFileName(dataSetId: string, versionNumber: string): string {
  return `${dataSetId}_v${versionNumber}.parquet`;
}

/** Bytes `start … end` (inclusive) of a version's copy, as a stream. */
function streamSlices(db: Executor, info: ParquetCopyInfo, start: number, end: number): Readable {
  async function* slices() {
    for (let offset = start; offset <= end; offset += PARQUET_SLICE_BYTES) {
      yield await readParquetCopySlice(db, info.versionId, offset, Math.min(PARQUET_SLICE_BYTES, end + 1 - offset));
    }
  }
  return Readable.from(slices(), { objectMode: false });
}

/** What a request gets: the whole file (200) or one range of it (206). */
export interface ParquetResponse {
  status: 200 | 206;
  /** `bytes first-last/size` for a 206. */
  contentRange?: string;
  length: number;
  body(): Readable;
}

export interface ParquetDownload {
  /** A strong entity tag: the SHA-256 of the file. */
  etag: string;
  fileName: string;
  size: number;
  /**
   * The response to a `Range` header: one satisfiable range → 206 with it; none, a malformed one, several (clients
   * that read Parquet ask for one range at a time; a multipart answer is not worth its cost) or an `If-Range` that
   * is not this file's tag → 200 with the whole file; a range that starts past the end → RangeNotSatisfiableError.
   */
  respond(range: string | undefined, ifRange: string | undefined): ParquetResponse;
}

/** `GET /data-sets/{id}/parquet`: the version (view policy, preview tokens) and its Parquet copy, or 404/403. */
export async function openParquetDownload(
  db: Executor,
  target: { dataSetId: string; dataSetVersion?: string; previewToken?: string },
): Promise<ParquetDownload> {
  const resolved = await resolveDataSetVersion(db, { ...target, policy: 'view' });
  const info = await findParquetCopyInfo(db, resolved.version.id);
  if (!info) throw new NotFoundError('The Parquet file of this version is not available.');
  const etag = `"${info.sha256}"`;
  const size = info.byteSize;
  const whole: ParquetResponse = { status: 200, length: size, body: () => streamSlices(db, info, 0, size - 1) };
  return {
    etag,
    fileName: parquetFileName(resolved.dataSet.id, resolved.versionNumber),
    size,
    respond(range, ifRange) {
      if (!range || (ifRange !== undefined && ifRange.trim() !== etag)) return whole;
      const ranges = rangeParser(size, range, { combine: true });
      if (ranges === -1) throw new RangeNotSatisfiableError(size);
      if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return whole;
      const { start, end } = ranges[0]!;
      return {
        status: 206,
        contentRange: `bytes ${start}-${end}/${size}`,
        length: end - start + 1,
        body: () => streamSlices(db, info, start, end),
      };
    },
  };
}
