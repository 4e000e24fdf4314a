import { compareOrdinal } from '../../standard/ordinal.js';
import { LRUCache } from 'lru-cache';
import type { Executor } from '../../../db/database.js';
import { findVersionMetaRows } from './meta-repository.js';
import { GEOGRAPHIC_LEVEL_LABELS } from '../../standard/geographic-levels.js';
import { timePeriodKey, type FilterMeta, type LocationMeta, type VersionMeta } from './model.js';

export type {
  FilterMeta,
  FilterOptionMeta,
  IndicatorMeta,
  LocationMeta,
  TimePeriodMeta,
  VersionMeta,
} from './model.js';
export { timePeriodKey } from './model.js';

/** Approximate heap bytes of a string (UTF-16) with its object header. */
function stringBytes(value: string | null | undefined): number {
  return value ? 32 + value.length * 2 : 0;
}

/**
 * Approximate heap bytes of a version's metadata: its strings, an object per entry and the entries of the lookup
 * maps (which share the objects). Good to within a small factor, which is what a byte budget needs.
 */
export function versionMetaBytes(meta: VersionMeta): number {
  const perObject = 64;
  const perMapEntry = 48;
  let bytes = 1024 + stringBytes(meta.rowsTable);
  for (const f of meta.filters)
    bytes +=
      perObject + stringBytes(f.publicId) + stringBytes(f.columnName) + stringBytes(f.label) + stringBytes(f.column);
  for (const o of meta.optionsById.values()) bytes += perObject + stringBytes(o.publicId) + stringBytes(o.label);
  for (const i of meta.indicators)
    bytes +=
      perObject + stringBytes(i.publicId) + stringBytes(i.columnName) + stringBytes(i.label) + stringBytes(i.column);
  for (const l of meta.locationsById.values()) {
    bytes += perObject + stringBytes(l.level) + stringBytes(l.label) + stringBytes(l.publicId) + stringBytes(l.code);
    bytes += stringBytes(l.oldCode) + stringBytes(l.urn) + stringBytes(l.laEstab) + stringBytes(l.ukprn);
  }
  for (const t of meta.timePeriods)
    bytes += perObject + stringBytes(t.period) + stringBytes(t.code) + stringBytes(timePeriodKey(t.period, t.code));
  const mapEntries =
    meta.filtersByPublicId.size +
    meta.optionsByPublicId.size +
    meta.optionsById.size +
    meta.indicatorsByPublicId.size +
    meta.locationsById.size * 2 +
    meta.timePeriodsById.size +
    meta.timePeriodIdByKey.size +
    meta.levels.size;
  return bytes + mapEntries * perMapEntry;
}

/** Default memory budget of the version metadata kept by one app. */
export const VERSION_META_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Version metadata kept by one app, bounded by bytes (least recently used dropped beyond the budget; a version
 * larger than the whole budget is used but not kept). A published version's metadata never changes, and the cache
 * belongs to the app (not the process), so two apps on two databases (whose versions can share ids) never answer
 * from each other's.
 */
export class VersionMetaCache {
  private readonly entries: LRUCache<string, VersionMeta>;

  constructor(maxBytes = VERSION_META_CACHE_BYTES) {
    this.entries = new LRUCache<string, VersionMeta>({
      maxSize: maxBytes,
      sizeCalculation: (meta) => Math.max(1, versionMetaBytes(meta)),
    });
  }

  /** Bytes held (approximate). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  get size(): number {
    return this.entries.size;
  }

  async load(db: Executor, versionId: number, rowsTable: string): Promise<VersionMeta> {
    const key = `${versionId}:${rowsTable}`;
    const cached = this.entries.get(key);
    if (cached) return cached;
    const meta = await loadQueryVersionMeta(db, versionId, rowsTable);
    this.entries.set(key, meta);
    return meta;
  }
}

/** A version's metadata for the query engine, read from the database (`VersionMetaCache` keeps it per app). */
export async function loadQueryVersionMeta(db: Executor, versionId: number, rowsTable: string): Promise<VersionMeta> {
  const {
    filters: filterRows,
    options: optionRows,
    indicators: indicatorRows,
    levels: levelRows,
    locations: locationRows,
    timePeriods: timePeriodRows,
    locationLevels: locationColumnLevels,
    rowCount,
    hasRowTable,
  } = await findVersionMetaRows(db, versionId, rowsTable);

  const filterById = new Map<number, FilterMeta>();
  const filters = filterRows
    .map((f) => {
      const meta: FilterMeta = {
        publicId: f.public_id,
        columnName: f.column_name,
        label: f.label,
        column: `f${f.ordinal}`,
      };
      filterById.set(f.id, meta);
      return meta;
    })
    .sort((a, b) => compareOrdinal(a.columnName, b.columnName));
  const options = optionRows.map((o) => ({
    id: o.id,
    publicId: o.public_id,
    label: o.label,
    filter: filterById.get(o.filter_id)!,
  }));
  const indicators = indicatorRows
    .map((i) => ({ publicId: i.public_id, columnName: i.column_name, label: i.label, column: `i${i.ordinal}` }))
    .sort((a, b) => compareOrdinal(a.columnName, b.columnName));
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
  const locationsByLevel = new Map<string, LocationMeta[]>();
  for (const location of locations) {
    const list = locationsByLevel.get(location.level) ?? [];
    list.push(location);
    locationsByLevel.set(location.level, list);
  }
  for (const list of locationsByLevel.values()) list.sort((a, b) => compareOrdinal(a.label, b.label) || a.id - b.id);
  const levels = new Set(levelRows.map((l) => l.code));
  const locationLevels = [...locationColumnLevels].sort();

  return {
    versionId,
    rowsTable,
    rowCount,
    hasRowTable,
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
    levelsByLabel: Object.keys(GEOGRAPHIC_LEVEL_LABELS).sort((a, b) =>
      compareOrdinal(GEOGRAPHIC_LEVEL_LABELS[a]!, GEOGRAPHIC_LEVEL_LABELS[b]!),
    ),
  };
}
