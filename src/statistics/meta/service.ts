import { LRUCache } from 'lru-cache';
import { compareOrdinal } from '../standard/ordinal.js';
import type { Executor } from '../../db/database.js';
import type { DataSetVersionRow } from '../versions/access.js';
import { resolveVersionReused, type ResolvedVersionCache } from '../versions/resolved-version-cache.js';
import {
  findFilterOptions,
  findFilters,
  findGeographicLevelCodes,
  findIndicators,
  findTimePeriods,
  versionLocationsByLevel,
  type LocationRow,
} from './repository.js';
import { timePeriodLabel } from '../standard/time-periods.js';
import type {
  DataSetMetaView,
  FilterMetaView,
  GeographicLevelView,
  IndicatorMetaView,
  LocationGroupOptionsMetaView,
  LocationOptionMetaView,
  TimePeriodOptionMetaView,
} from '../schemas.js';
import { geographicLevelLabel } from '../standard/geographic-levels.js';
import { approximateHeldBytes } from '../held-bytes.js';

/** The metadata of one version: which sections, and in which order. */

export const META_TYPES = ['Filters', 'Indicators', 'Locations', 'TimePeriods'] as const;
export type MetaType = (typeof META_TYPES)[number];

async function loadFilters(db: Executor, versionId: number): Promise<FilterMetaView[]> {
  const filters = await findFilters(db, versionId);
  const options = await findFilterOptions(
    db,
    filters.map((f) => f.id),
  );
  const optionsByFilter = new Map<number, Array<{ id: string; label: string }>>();
  for (const option of options) {
    const list = optionsByFilter.get(option.filter_id) ?? [];
    list.push({ id: option.public_id, label: option.label });
    optionsByFilter.set(option.filter_id, list);
  }
  return filters
    .sort((a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.column_name, b.column_name))
    .map((filter) => ({
      id: filter.public_id,
      column: filter.column_name,
      label: filter.label,
      hint: filter.hint,
      options: (optionsByFilter.get(filter.id) ?? []).sort(
        (a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.id, b.id),
      ),
    }));
}

async function loadIndicators(db: Executor, versionId: number): Promise<IndicatorMetaView[]> {
  const rows = await findIndicators(db, versionId);
  return rows
    .sort((a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.column_name, b.column_name))
    .map((row) => ({
      id: row.public_id,
      column: row.column_name,
      label: row.label,
      // No unit is null in the reference, and its serializer omits null members.
      ...(row.unit === '' ? {} : { unit: row.unit }),
      ...(row.decimal_places === null ? {} : { decimalPlaces: row.decimal_places }),
    }));
}

async function loadGeographicLevels(db: Executor, versionId: number): Promise<GeographicLevelView[]> {
  const codes = await findGeographicLevelCodes(db, versionId);
  return codes
    .map((code) => ({ code, label: geographicLevelLabel(code) }))
    .sort((a, b) => compareOrdinal(a.label, b.label));
}

/** A location option with the identifying properties of its level that it has. */
export function locationOptionMetaView(row: Omit<LocationRow, 'level'>): LocationOptionMetaView {
  return {
    id: row.public_id,
    label: row.label,
    ...(row.code !== null ? { code: row.code } : {}),
    ...(row.old_code !== null ? { oldCode: row.old_code } : {}),
    ...(row.urn !== null ? { urn: row.urn } : {}),
    ...(row.la_estab !== null ? { laEstab: row.la_estab } : {}),
    ...(row.ukprn !== null ? { ukprn: row.ukprn } : {}),
  };
}

async function loadLocations(db: Executor, versionId: number): Promise<LocationGroupOptionsMetaView[]> {
  const groups = await versionLocationsByLevel(db, versionId, locationOptionMetaView);
  return [...groups.entries()]
    .map(([code, options]) => ({
      level: { code, label: geographicLevelLabel(code) },
      options: options.sort((a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.id, b.id)),
    }))
    .sort((a, b) => compareOrdinal(a.level.label, b.level.label));
}

async function loadTimePeriods(db: Executor, versionId: number): Promise<TimePeriodOptionMetaView[]> {
  const rows = await findTimePeriods(db, versionId);
  // Ordered by code string, then period string, as the reference orders its meta (AY, CY, M1, M10, M2, ...).
  return rows
    .sort((a, b) => compareOrdinal(a.code, b.code) || compareOrdinal(a.period, b.period))
    .map((row) => ({ code: row.code, period: row.period, label: timePeriodLabel(row.period, row.code) }));
}

/** The meta of a version, all five sections, read from the database. */
async function readDataSetMetaView(db: Executor, versionId: number): Promise<DataSetMetaView> {
  const [filters, indicators, geographicLevels, locations, timePeriods] = await Promise.all([
    loadFilters(db, versionId),
    loadIndicators(db, versionId),
    loadGeographicLevels(db, versionId),
    loadLocations(db, versionId),
    loadTimePeriods(db, versionId),
  ]);
  return { filters, indicators, geographicLevels, locations, timePeriods };
}

/** Default memory budget of the meta views kept by one app. */
export const META_VIEW_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Whole meta views of versions, kept per app (least recently used dropped beyond the byte budget; a view larger than
 * the whole budget is answered but not kept). A version's metadata is written by the import that creates the version
 * and never changed after (a draft deleted takes its id with it: ids come from a sequence), so a view is good for as
 * long as its version id exists; the version's status and access are checked on every request before it is read.
 * Without it a meta request is six queries (the version, then five sections at once), the most of any read, and a
 * burst of them queues on the pool (docs/performance.md, "Mixed load"). Per app, not per process: two apps on two
 * databases have versions of the same ids.
 */
export class DataSetMetaViewCache {
  private readonly views: LRUCache<number, DataSetMetaView, Executor>;

  constructor(maxBytes = META_VIEW_CACHE_BYTES) {
    this.views = new LRUCache<number, DataSetMetaView, Executor>({
      maxSize: maxBytes,
      sizeCalculation: (view) => 1024 + approximateHeldBytes(view),
      // Concurrent requests for a version not yet kept share one read (lru-cache's fetch).
      fetchMethod: (versionId, _stale, { context }) => readDataSetMetaView(context, versionId),
    });
  }

  /** Bytes held (approximate). */
  get bytes(): number {
    return this.views.calculatedSize;
  }

  /** The version's meta with the sections not asked for as empty arrays (all five are always present). */
  async load(db: Executor, versionId: number, types?: readonly MetaType[]): Promise<DataSetMetaView> {
    const view = await this.views.fetch(versionId, { context: db });
    // fetch resolves undefined only when its fetchMethod does, which readDataSetMetaView never does.
    if (!view) throw new Error(`No meta for version ${versionId}`);
    if (!types || types.length === 0) return view;
    const wanted = new Set<MetaType>(types);
    return {
      filters: wanted.has('Filters') ? view.filters : [],
      indicators: wanted.has('Indicators') ? view.indicators : [],
      geographicLevels: wanted.has('Locations') ? view.geographicLevels : [],
      locations: wanted.has('Locations') ? view.locations : [],
      timePeriods: wanted.has('TimePeriods') ? view.timePeriods : [],
    };
  }
}

/** `GET /data-sets/{id}/meta`: the version (view policy) and the sections asked for. */
export async function getDataSetMeta(
  db: Executor,
  caches: { metaViews: DataSetMetaViewCache; resolvedVersions: ResolvedVersionCache<DataSetVersionRow> },
  request: MetaRequest & { types?: readonly MetaType[] },
): Promise<DataSetMetaView> {
  const version = await resolveMetaVersion(db, caches, request);
  return caches.metaViews.load(db, version.id, request.types);
}

interface MetaRequest {
  dataSetId: string;
  dataSetVersion?: string;
  previewToken?: string;
}

/** The version a meta request names, by the view policy (its resolution reused as a query's is). */
export function resolveMetaVersion(
  db: Executor,
  caches: { resolvedVersions: ResolvedVersionCache<DataSetVersionRow> },
  request: MetaRequest,
): Promise<DataSetVersionRow> {
  return resolveVersionReused(db, caches.resolvedVersions, { ...request, policy: 'view' });
}
