import { compareOrdinal } from '../standard/ordinal.js';
import type { Executor } from '../../db/database.js';
import { resolveDataSetVersion } from '../versions/access.js';
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

/** The meta of a version; sections not asked for are empty arrays (all five are always present). */
export async function loadDataSetMetaView(
  db: Executor,
  versionId: number,
  types?: readonly MetaType[],
): Promise<DataSetMetaView> {
  const wanted = new Set<MetaType>(types && types.length > 0 ? types : META_TYPES);
  const [filters, indicators, geographicLevels, locations, timePeriods] = await Promise.all([
    wanted.has('Filters') ? loadFilters(db, versionId) : [],
    wanted.has('Indicators') ? loadIndicators(db, versionId) : [],
    wanted.has('Locations') ? loadGeographicLevels(db, versionId) : [],
    wanted.has('Locations') ? loadLocations(db, versionId) : [],
    wanted.has('TimePeriods') ? loadTimePeriods(db, versionId) : [],
  ]);
  return { filters, indicators, geographicLevels, locations, timePeriods };
}

/** `GET /data-sets/{id}/meta`: the version (view policy) and the sections asked for. */
export async function getDataSetMeta(
  db: Executor,
  request: { dataSetId: string; dataSetVersion?: string; previewToken?: string; types?: readonly MetaType[] },
): Promise<DataSetMetaView> {
  const { version } = await resolveDataSetVersion(db, { ...request, policy: 'view' });
  return loadDataSetMetaView(db, version.id, request.types);
}
