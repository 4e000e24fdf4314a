/**
 * Everything the query engine needs to know about one data set version besides its rows: the filters, options,
 * indicators, locations and time periods with their internal ids, and the row table's column layout.
 * Versions do not change once loaded, so this is read once per (version, rows table) and kept in memory.
 */
export interface FilterMeta {
  publicId: string;
  columnName: string;
  label: string;
  /** Row-table column `f<ordinal>`. */
  column: string;
}

export interface FilterOptionMeta {
  id: number;
  publicId: string;
  label: string;
  filter: FilterMeta;
}

export interface IndicatorMeta {
  publicId: string;
  columnName: string;
  label: string;
  /** Row-table column `i<ordinal>`. */
  column: string;
}

export interface LocationMeta {
  id: number;
  level: string;
  label: string;
  publicId: string;
  code: string | null;
  oldCode: string | null;
  urn: string | null;
  laEstab: string | null;
  ukprn: string | null;
}

export interface TimePeriodMeta {
  id: number;
  period: string;
  code: string;
}

export interface VersionMeta {
  versionId: number;
  rowsTable: string;
  /** Filters in column-name order (the order of result `filters` keys). */
  filters: FilterMeta[];
  filtersByPublicId: Map<string, FilterMeta>;
  optionsByPublicId: Map<string, FilterOptionMeta>;
  optionsById: Map<number, FilterOptionMeta>;
  /** Indicators in column-name order. */
  indicators: IndicatorMeta[];
  indicatorsByPublicId: Map<string, IndicatorMeta>;
  /** Level codes of the version (its geographic levels). */
  levels: Set<string>;
  /** Levels that have a location column in the row table, sorted by code. */
  locationLevels: string[];
  locationsById: Map<number, LocationMeta>;
  /** Per level: the version's locations of that level sorted by label (ranks for `location|{level}` sorts). */
  locationsByLevel: Map<string, LocationMeta[]>;
  timePeriods: TimePeriodMeta[];
  timePeriodsById: Map<number, TimePeriodMeta>;
  timePeriodIdByKey: Map<string, number>;
  /** Level codes in label order (ranks for `geographicLevel` sorts). */
  levelsByLabel: string[];
  /** Whether the version has a row table (`stats_data.<rowsTable>`, for the SQL engine): versions imported since 2026-11-28 have none. */
  hasRowTable: boolean;
  /** Rows of the version's rows table, as its import counted them: an unfiltered query's total, without counting. */
  rowCount: number;
}

export function timePeriodKey(period: string, code: string): string {
  return `${period}|${code}`;
}
