import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { GEOGRAPHIC_LEVEL_LABELS, locationColumn } from './levels.js';

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
}

export function timePeriodKey(period: string, code: string): string {
  return `${period}|${code}`;
}

/**
 * Version metadata kept by one app, least recently used dropped beyond 64 versions. A published version's metadata
 * never changes, and the cache belongs to the app (not the process), so two apps on two databases — whose versions
 * can share ids — never answer from each other's.
 */
export class VersionMetaCache {
  private readonly entries = new Map<string, VersionMeta>();

  constructor(private readonly maxVersions = 64) {}

  async load(db: Executor, versionId: number, rowsTable: string): Promise<VersionMeta> {
    const key = `${versionId}:${rowsTable}`;
    const cached = this.entries.get(key);
    if (cached) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const meta = await loadVersionMeta(db, versionId, rowsTable);
    this.entries.set(key, meta);
    if (this.entries.size > this.maxVersions) this.entries.delete(this.entries.keys().next().value!);
    return meta;
  }
}

/** A version's metadata for the query engine, read from the database (`VersionMetaCache` keeps it per app). */
export async function loadVersionMeta(db: Executor, versionId: number, rowsTable: string): Promise<VersionMeta> {
  const [filterRows, optionRows, indicatorRows, levelRows, locationRows, timePeriodRows, columnRows] = await Promise.all([
    db.selectFrom('version_filters').select(['id', 'public_id', 'column_name', 'label', 'ordinal']).where('version_id', '=', versionId).execute(),
    db
      .selectFrom('version_filter_options as o')
      .innerJoin('version_filters as f', 'f.id', 'o.filter_id')
      .select(['o.id', 'o.public_id', 'o.label', 'o.filter_id'])
      .where('f.version_id', '=', versionId)
      .execute(),
    db.selectFrom('version_indicators').select(['public_id', 'column_name', 'label', 'ordinal']).where('version_id', '=', versionId).execute(),
    db.selectFrom('version_geographic_levels').select('code').where('version_id', '=', versionId).execute(),
    db
      .selectFrom('version_locations as vl')
      .innerJoin('locations as l', 'l.id', 'vl.location_id')
      .select(['l.id', 'l.level', 'l.label', 'l.public_id', 'l.code', 'l.old_code', 'l.urn', 'l.la_estab', 'l.ukprn'])
      .where('vl.version_id', '=', versionId)
      .execute(),
    db.selectFrom('version_time_periods').select(['id', 'period', 'code']).where('version_id', '=', versionId).orderBy('id').execute(),
    sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
      WHERE table_schema = 'stats_data' AND table_name = ${rowsTable}`.execute(db),
  ]);

  const filterById = new Map<number, FilterMeta>();
  const filters = filterRows
    .map((f) => {
      const meta: FilterMeta = { publicId: f.public_id, columnName: f.column_name, label: f.label, column: `f${f.ordinal}` };
      filterById.set(f.id, meta);
      return meta;
    })
    .sort((a, b) => compareText(a.columnName, b.columnName));
  const options = optionRows.map((o) => ({ id: o.id, publicId: o.public_id, label: o.label, filter: filterById.get(o.filter_id)! }));
  const indicators = indicatorRows
    .map((i) => ({ publicId: i.public_id, columnName: i.column_name, label: i.label, column: `i${i.ordinal}` }))
    .sort((a, b) => compareText(a.columnName, b.columnName));
  const locations: LocationMeta[] = locationRows.map((l) => ({
    id: l.id,
    level: l.level,
    label: l.label,
    publicId: l.public_id,
    code: l.code,
    oldCode: l.old_code,
    urn: l.urn,
    laEstab: l.la_estab,
    ukprn: l.ukprn,
  }));
  const columns = new Set(columnRows.rows.map((r) => r.column_name));
  const locationsByLevel = new Map<string, LocationMeta[]>();
  for (const location of locations) {
    const list = locationsByLevel.get(location.level) ?? [];
    list.push(location);
    locationsByLevel.set(location.level, list);
  }
  for (const list of locationsByLevel.values()) list.sort((a, b) => compareText(a.label, b.label) || a.id - b.id);
  const levels = new Set(levelRows.map((l) => l.code));
  const locationLevels = Object.keys(GEOGRAPHIC_LEVEL_LABELS).filter((level) => columns.has(locationColumn(level))).sort();

  return {
    versionId,
    rowsTable,
    filters,
    filtersByPublicId: new Map(filters.map((f) => [f.publicId, f])),
    optionsByPublicId: new Map(options.map((o) => [o.publicId, o])),
    optionsById: new Map(options.map((o) => [o.id, o])),
    indicators,
    indicatorsByPublicId: new Map(indicators.map((i) => [i.publicId, i])),
    levels,
    locationLevels,
    locationsById: new Map(locations.map((l) => [l.id, l])),
    locationsByLevel,
    timePeriods: timePeriodRows,
    timePeriodsById: new Map(timePeriodRows.map((t) => [t.id, t])),
    timePeriodIdByKey: new Map(timePeriodRows.map((t) => [timePeriodKey(t.period, t.code), t.id])),
    levelsByLabel: Object.keys(GEOGRAPHIC_LEVEL_LABELS).sort((a, b) => compareText(GEOGRAPHIC_LEVEL_LABELS[a]!, GEOGRAPHIC_LEVEL_LABELS[b]!)),
  };
}

/** Ordinal (code-point) comparison, as the reference's database orders text. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
