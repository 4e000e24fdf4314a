/** The metadata rows of a data set version. Its locations are read one way for the meta endpoint and the change detection alike. */
import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { LocationsTable } from '../tables.js';

/** A location as the API knows it: level, public id, label and the codes it has. */
export type LocationRow = Omit<Selectable<LocationsTable>, 'id'>;

/** The version's locations grouped by level code, each turned into `view`, in no particular order. */
export async function versionLocationsByLevel<T>(
  db: Executor,
  versionId: number,
  view: (row: LocationRow) => T,
): Promise<Map<string, T[]>> {
  const rows = await db
    .selectFrom('version_locations as vl')
    .innerJoin('locations as l', 'l.id', 'vl.location_id')
    .select(['l.level', 'l.public_id', 'l.label', 'l.code', 'l.old_code', 'l.urn', 'l.la_estab', 'l.ukprn'])
    .where('vl.version_id', '=', versionId)
    .execute();
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const list = groups.get(row.level) ?? [];
    list.push(view(row));
    groups.set(row.level, list);
  }
  return groups;
}

export async function findFilters(db: Executor, versionId: number) {
  return db
    .selectFrom('version_filters')
    .select(['id', 'public_id', 'column_name', 'label', 'hint'])
    .where('version_id', '=', versionId)
    .execute();
}

export async function findFilterOptions(db: Executor, filterIds: readonly number[]) {
  if (filterIds.length === 0) return [];
  return db
    .selectFrom('version_filter_options')
    .select(['filter_id', 'public_id', 'label'])
    .where('filter_id', 'in', [...filterIds])
    .execute();
}

export async function findIndicators(db: Executor, versionId: number) {
  return db
    .selectFrom('version_indicators')
    .select(['public_id', 'column_name', 'label', 'unit', 'decimal_places'])
    .where('version_id', '=', versionId)
    .execute();
}

export async function findGeographicLevelCodes(db: Executor, versionId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('version_geographic_levels')
    .select('code')
    .where('version_id', '=', versionId)
    .execute();
  return rows.map((row) => row.code);
}

export async function findTimePeriods(db: Executor, versionId: number) {
  return db.selectFrom('version_time_periods').select(['period', 'code']).where('version_id', '=', versionId).execute();
}
