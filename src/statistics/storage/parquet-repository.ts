// TEMPORARY (coordinator): replaced by the Parquet copy module at merge.
import type { Executor } from '../../db/database.js';
export async function readParquetCopyBytes(_db: Executor, _versionId: number): Promise<Uint8Array | undefined> {
  return undefined;
}
