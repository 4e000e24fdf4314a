import type { Executor } from '../../db/database.js';
import type { RowIndex } from '../query/engine/index/row-index.js';
import type { VersionMeta } from '../query/engine/model.js';
import { PARQUET_COPY_FORMAT, writeParquetCopy } from './parquet-copy.js';
import { storeParquetCopy } from './parquet-repository.js';

/** Writes a version's Parquet copy from its row index (with values) and stores it, unless it has one. */
export async function storeVersionParquetCopy(
  db: Executor,
  versionId: number,
  index: RowIndex,
  meta: VersionMeta,
): Promise<{ bytes: number; stored: boolean }> {
  const bytes = await writeParquetCopy(index, meta);
  const stored = await storeParquetCopy(db, versionId, bytes, PARQUET_COPY_FORMAT);
  return { bytes: bytes.length, stored };
}
