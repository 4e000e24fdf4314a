// TEMPORARY (coordinator): replaced by the Parquet copy module at merge.
import type { RowIndex } from '../query/engine/index/row-index.js';
import type { VersionMeta } from '../query/engine/model.js';
export async function readParquetCopy(_bytes: Uint8Array, _meta: VersionMeta): Promise<RowIndex> {
  throw new Error('not merged yet');
}
