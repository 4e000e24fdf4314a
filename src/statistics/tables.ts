import type { ColumnType, Generated } from 'kysely';

/** Kysely table types of the statistics schema (migrations/2026-11-23T1000-statistics.ts). */
export type DataSetStatus = 'Draft' | 'Published' | 'Deprecated' | 'Withdrawn';
export type VersionStatus = 'Draft' | 'Published' | 'Deprecated' | 'Withdrawn';

type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface PublicationsTable {
  id: string;
  title: string;
  slug: string;
  summary: Generated<string>;
  created_at: Generated<Date>;
  search_vector: ColumnType<unknown, never, never>;
}

export interface DataSetsTable {
  id: string;
  publication_id: string;
  title: string;
  summary: Generated<string>;
  status: Generated<DataSetStatus>;
  superseding_data_set_id: string | null;
  created_at: Generated<Date>;
}

export interface DataSetVersionsTable {
  id: Generated<number>;
  data_set_id: string;
  major: number;
  minor: number;
  patch: Generated<number>;
  status: VersionStatus;
  published_at: Timestamp | null;
  withdrawn_at: Timestamp | null;
  notes: Generated<string>;
  release_title: Generated<string>;
  release_slug: Generated<string>;
  total_results: Generated<number>;
  file_id: Generated<string>;
  /**
   * The key of the version's rows: of its stored row index, and of its row table `stats_data.<rows_table>` where it
   * has one (versions imported before the stored index held the rows, or with `rowTable`); null while importing.
   */
  rows_table: string | null;
  /** The levels of its data file's location columns; null for versions imported before (their row table's columns say). */
  location_levels: Generated<string[] | null>;
  created_at: Generated<Date>;
}

export interface DataSetVersionFilesTable {
  version_id: number;
  content_gzip: Buffer;
  size_bytes: number;
}

/** A version's Parquet copy (migration `2026-11-29T1000-version-parquet`). */
export interface DataSetVersionParquetTable {
  version_id: number;
  bytes: Buffer;
  byte_size: number;
  sha256: string;
  format: number;
  created_at: Generated<Date>;
}

export interface VersionFiltersTable {
  id: Generated<number>;
  version_id: number;
  public_id: string;
  column_name: string;
  label: string;
  hint: Generated<string>;
  ordinal: number;
}

export interface VersionFilterOptionsTable {
  id: Generated<number>;
  filter_id: number;
  public_id: string;
  label: string;
  is_default: Generated<boolean>;
}

export interface VersionIndicatorsTable {
  id: Generated<number>;
  version_id: number;
  public_id: string;
  column_name: string;
  label: string;
  unit: Generated<string>;
  decimal_places: number | null;
  ordinal: number;
}

export interface VersionGeographicLevelsTable {
  version_id: number;
  code: string;
}

export interface LocationsTable {
  id: Generated<number>;
  level: string;
  label: string;
  code: string | null;
  old_code: string | null;
  urn: string | null;
  la_estab: string | null;
  ukprn: string | null;
  public_id: string;
}

export interface VersionLocationsTable {
  version_id: number;
  location_id: number;
}

export interface VersionTimePeriodsTable {
  id: Generated<number>;
  version_id: number;
  period: string;
  code: string;
}

export interface VersionChangesTable {
  id: Generated<number>;
  version_id: number;
  kind: 'major' | 'minor';
  list: string;
  change: ColumnType<unknown, string, string>;
}

export interface PreviewTokensTable {
  id: Generated<string>;
  version_id: number;
  label: Generated<string>;
  created_at: Generated<Date>;
  expires_at: Timestamp;
}

/** The two parts of a stored row index: what count and page need, and the indicator values. */
export type RowIndexPart = 'facets' | 'values';

/** A chunk of one part of a version's engine form: the part's header or one slice (see the migrations `2026-11-25T1200-row-index-snapshots`, `2026-11-27T1000-row-index-parts`). */
export interface VersionRowIndexChunksTable {
  rows_table: string;
  part: RowIndexPart;
  chunk: number;
  version_id: number;
  bytes: Buffer;
}

/** When a version's row index was last used (see the migration `2026-11-25T1200-row-index-snapshots`). */
export interface VersionRowIndexUsesTable {
  rows_table: string;
  version_id: number;
  used_at: Timestamp;
}

export interface StatisticsTables {
  publications: PublicationsTable;
  data_sets: DataSetsTable;
  data_set_versions: DataSetVersionsTable;
  data_set_version_files: DataSetVersionFilesTable;
  data_set_version_parquet: DataSetVersionParquetTable;
  version_filters: VersionFiltersTable;
  version_filter_options: VersionFilterOptionsTable;
  version_indicators: VersionIndicatorsTable;
  version_geographic_levels: VersionGeographicLevelsTable;
  locations: LocationsTable;
  version_locations: VersionLocationsTable;
  version_time_periods: VersionTimePeriodsTable;
  version_changes: VersionChangesTable;
  preview_tokens: PreviewTokensTable;
  version_row_index_chunks: VersionRowIndexChunksTable;
  version_row_index_uses: VersionRowIndexUsesTable;
}

/**
 * The `change` jsonb of a `version_changes` row, by `list`. Rows are stored in display order (order by
 * `id`): deletions, then updates, then additions, each by label in natural order (time periods by period then code). An addition has
 * only `currentState`, a deletion only `previousState`, an update both. Option changes carry their parent (`filter` /
 * `level`) on every row so the reader can group them.
 */
export interface ChangedFilter {
  id: string;
  column: string;
  label: string;
  hint: string;
}
export interface ChangedIndicator {
  id: string;
  column: string;
  label: string;
  unit?: string;
  decimalPlaces?: number;
}
export interface ChangedLevel {
  code: string;
  label: string;
}
/** The location option as the meta shows it for its level: `code`, `oldCode` (LA), `urn`/`laEstab` (SCH), `ukprn` (PROV). */
export interface ChangedLocationOption {
  id: string;
  label: string;
  code?: string;
  oldCode?: string;
  urn?: string;
  laEstab?: string;
  ukprn?: string;
}
export interface ChangedTimePeriod {
  code: string;
  period: string;
  label: string;
}
export interface StateChange<T> {
  previousState?: T;
  currentState?: T;
}
export type ChangeItemByList = {
  filters: StateChange<ChangedFilter>;
  filterOptions: StateChange<{ id: string; label: string }> & { filter: ChangedFilter };
  geographicLevels: StateChange<ChangedLevel>;
  indicators: StateChange<ChangedIndicator>;
  locationGroups: StateChange<{ level: ChangedLevel }>;
  locationOptions: StateChange<ChangedLocationOption> & { level: ChangedLevel };
  timePeriods: StateChange<ChangedTimePeriod>;
};
export type ChangeList = keyof ChangeItemByList;
