/**
 * The query engine's published entry point: what the service, the routes, the importer, the app and the commands use.
 * Inside, three engines stand side by side under one interface (query-engine.ts): the in-memory row index (index/),
 * the stored columns (stored/) and SQL (sql/); choose.ts picks one per query. Its engine form is the storage module's
 * (src/statistics/storage/).
 */
export * from './criteria.js';
export {
  NUMERIC_TEXT_PATTERN,
  resolveQuery,
  type Predicate,
  type ResolvedQuery,
  type SortKey,
  type Warning,
} from './resolve.js';
export type {
  FilterMeta,
  FilterOptionMeta,
  IndicatorMeta,
  LocationMeta,
  TimePeriodMeta,
  VersionMeta,
} from './model.js';
export { timePeriodKey } from './model.js';
export { loadQueryVersionMeta, VersionMetaCache } from './version-meta-cache.js';
export type { PageRows } from './page-rows.js';
export { writeResponseJson } from './json-output.js';
export { csvHeader, csvRecords } from './results.js';
export type { EngineContext, EnginePage, PagesOptions, QueryEngine } from './query-engine.js';
export { ExportTimeBoundError } from './query-engine.js';
export { StandardEngineChooser, type EnginePurpose, type QueryEngineChooser } from './choose.js';
export { RowIndexStore, type RowIndexStoreOptions, type RowIndexStoreStatus } from './index/row-index-store.js';
export { RowIds, RowIndex, type FacetColumn, type IndicatorColumn, type RowIndexParts } from './index/row-index.js';
export {
  CHUNK_BITS,
  ascendingDictionary,
  CHUNK_ROWS,
  codesFor,
  IndicatorBuilder,
  RowIndexBuilder,
  rowIndexColumns,
} from './index/row-index-builder.js';
