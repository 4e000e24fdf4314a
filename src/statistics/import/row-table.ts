/**
 * Import phase 4: the version's row table `stats_data.v{id}`, filled in one pass from the staging table with the
 * final ids (phase 3's maps applied as array lookups in SQL), written in the default result order, then indexed
 * for the query engine and attached to the version.
 */
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Database } from '../../db/schema.js';
import { prepareVersionRowsForQuery } from './row-table-indexes.js';
import type { DataFilePlan } from './data-file.js';
import type { RowOrder } from './import.js';
import type { IdMaps } from './metadata.js';

/** Creates and fills the row table; returns its name. Indexes come separately (`indexRowTable`). */
export async function writeRowTable(
  client: pg.PoolClient,
  versionId: number,
  plan: Pick<DataFilePlan, 'locationLevels' | 'filters' | 'indicators'>,
  levels: string[],
  maps: IdMaps,
  rowOrder: RowOrder | undefined,
): Promise<string> {
  const rowsTable = `v${versionId}`;
  const { locationLevels, filters, indicators } = plan;
  const columns = [
    'id integer NOT NULL',
    'time_period_id integer NOT NULL',
    'geographic_level text NOT NULL',
    ...locationLevels.map((l) => `l_${l.info.code.toLowerCase()} integer NOT NULL`),
    ...filters.map((_, i) => `f${i + 1} integer NOT NULL`),
    ...indicators.map((_, i) => `i${i + 1} text NOT NULL`),
  ];
  await client.query(`CREATE TABLE stats_data.${rowsTable} (${columns.join(', ')})`);
  const params: unknown[] = [maps.timePeriods, levels];
  const param = (value: unknown) => `$${params.push(value)}`;
  const select = [
    rowOrder === 'reference-fixture'
      ? `row_number() OVER (ORDER BY l_sch <> 0, CASE WHEN l_la <> 0 THEN 0 WHEN l_reg <> 0 THEN 1 ELSE 2 END, n)::integer`
      : 'n',
    '($1::integer[])[tp]',
    '($2::text[])[lvl]',
    ...locationLevels.map((l, i) => {
      const c = `l_${l.info.code.toLowerCase()}`;
      return `coalesce((${param(maps.locations[i])}::integer[])[${c}], 0)`;
    }),
    ...filters.map((_, i) => `coalesce((${param(maps.filterOptions[i])}::integer[])[f${i + 1}], 0)`),
    ...indicators.map((_, i) => `i${i + 1}`),
  ];
  const targetColumns = columns.map((c) => c.split(' ')[0]);
  // Written in the default result order (time period newest first, then row id): pages of the default query
  // are then contiguous on disk.
  await client.query(
    `INSERT INTO stats_data.${rowsTable} (${targetColumns.join(', ')}) SELECT ${select.join(', ')} FROM import_rows ORDER BY 2 DESC, 1`,
    params,
  );
  return rowsTable;
}

/** The query engine's indexes on the row table, then the version points at it. */
export async function indexRowTable(db: Kysely<Database>, versionId: number, rowsTable: string): Promise<void> {
  await prepareVersionRowsForQuery(db, rowsTable);
  await db.updateTable('data_set_versions').set({ rows_table: rowsTable }).where('id', '=', versionId).execute();
}
