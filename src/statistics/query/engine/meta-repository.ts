import { sql } from 'kysely';
import type { Executor } from '../../../db/database.js';
import { GEOGRAPHIC_LEVEL_LABELS, locationColumn } from '../../standard/geographic-levels.js';

/** The metadata rows the engine resolves a query against, and the levels of its location columns. */
export async function findVersionMetaRows(db: Executor, versionId: number, rowsTable: string) {
  const [filters, options, indicators, levels, locations, timePeriods, version, table] = await Promise.all([
    db
      .selectFrom('version_filters')
      .select(['id', 'public_id', 'column_name', 'label', 'ordinal'])
      .where('version_id', '=', versionId)
      .execute(),
    db
      .selectFrom('version_filter_options as o')
      .innerJoin('version_filters as f', 'f.id', 'o.filter_id')
      .select(['o.id', 'o.public_id', 'o.label', 'o.filter_id'])
      .where('f.version_id', '=', versionId)
      .execute(),
    db
      .selectFrom('version_indicators')
      .select(['public_id', 'column_name', 'label', 'ordinal'])
      .where('version_id', '=', versionId)
      .execute(),
    db.selectFrom('version_geographic_levels').select('code').where('version_id', '=', versionId).execute(),
    db
      .selectFrom('version_locations as vl')
      .innerJoin('locations as l', 'l.id', 'vl.location_id')
      .select(['l.id', 'l.level', 'l.label', 'l.public_id', 'l.code', 'l.old_code', 'l.urn', 'l.la_estab', 'l.ukprn'])
      .where('vl.version_id', '=', versionId)
      .execute(),
    db
      .selectFrom('version_time_periods')
      .select(['id', 'period', 'code'])
      .where('version_id', '=', versionId)
      .orderBy('id')
      .execute(),
    db
      .selectFrom('data_set_versions')
      .select(['total_results', 'location_levels'])
      .where('id', '=', versionId)
      .executeTakeFirstOrThrow(),
    sql<{ exists: boolean }>`SELECT to_regclass(${`stats_data.${rowsTable}`}) IS NOT NULL AS exists`.execute(db),
  ]);
  // A version imported before its location levels were kept: its row table's columns say.
  const columns = version.location_levels
    ? undefined
    : (
        await sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
        WHERE table_schema = 'stats_data' AND table_name = ${rowsTable}`.execute(db)
      ).rows.map((r) => r.column_name);
  return {
    filters,
    options,
    indicators,
    levels,
    locations,
    timePeriods,
    locationLevels:
      version.location_levels ??
      Object.keys(GEOGRAPHIC_LEVEL_LABELS).filter((level) => columns!.includes(locationColumn(level))),
    rowCount: version.total_results,
    hasRowTable: table.rows[0]?.exists === true,
  };
}
