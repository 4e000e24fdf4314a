/**
 * All SQL of the importer: the import's session and its progress, the version's catalogue and metadata rows, the
 * key of its rows (and with `rowTable` its row table `stats_data.v<id>` with the SQL engine's indexes), the stored file
 * and the stored changes.
 */
import { sql, type Kysely, type Insertable } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Executor } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { LocationCodeField } from '../standard/geographic-levels.js';
import type { DataFilePlan } from './data-file.js';
import { facetColumnsOf, indicatorColumnsOf } from './stage-rows.js';

/** The import's session: one long transaction with room to sort, serialized with every other import. */
export async function beginImportTransaction(client: pg.PoolClient): Promise<void> {
  await client.query('BEGIN');
  // Large files take longer than the pool's statement timeout; the import is one long transaction by design.
  await client.query('SET LOCAL statement_timeout = 0');
  await client.query('SET LOCAL idle_in_transaction_session_timeout = 0');
  // Index builds after the load sort whole columns: give them room to do it in memory.
  await client.query(`SET LOCAL maintenance_work_mem = '128MB'`);
  // Imports run one at a time: locations and public-id order are global.
  await client.query(`SELECT pg_advisory_xact_lock(hashtext('statistics-import'))`);
}

export async function commitImportTransaction(client: pg.PoolClient): Promise<void> {
  await client.query('COMMIT');
}

export async function rollbackImportTransaction(client: pg.PoolClient): Promise<void> {
  await client.query('ROLLBACK');
}

/** The data set's id and status, locked for the rest of the transaction. */
export async function lockDataSet(db: Executor, dataSetId: string) {
  return db.selectFrom('data_sets').select(['id', 'status']).where('id', '=', dataSetId).forUpdate().executeTakeFirst();
}

/** The numbers and statuses of a data set's versions. */
export async function findVersionNumbers(db: Executor, dataSetId: string) {
  return db
    .selectFrom('data_set_versions')
    .select(['id', 'major', 'minor', 'patch', 'status'])
    .where('data_set_id', '=', dataSetId)
    .execute();
}

export async function publishDataSet(db: Executor, dataSetId: string): Promise<void> {
  await db.updateTable('data_sets').set({ status: 'Published' }).where('id', '=', dataSetId).execute();
}

/**
 * What an import's session shows every other session until its transaction ends (`pg_stat_activity.application_name`,
 * which every role can read): that it is an import, and the rows it has read so far.
 */
export async function reportImportProgress(client: pg.PoolClient, rowsRead: number): Promise<void> {
  await client.query(`SELECT set_config('application_name', $1, true)`, [`statistics-import: ${rowsRead} rows read`]);
}

export interface RunningImports {
  running: number;
  rowsRead: number;
}

/**
 * The statistics imports running against this database right now, from any process (`npm run import`, `npm run seed`,
 * the seed on start, another instance), and the rows they have read: what their sessions show (`reportImportProgress`).
 */
export async function readRunningImports(db: Executor): Promise<RunningImports> {
  const { rows } = await sql<{ running: number; rows_read: string }>`
    SELECT count(*)::int AS running,
      coalesce(sum(substring(application_name FROM '^statistics-import: ([0-9]+) rows read$')::bigint), 0) AS rows_read
    FROM pg_stat_activity
    WHERE application_name LIKE 'statistics-import: % rows read'
      AND datid = (SELECT oid FROM pg_database WHERE datname = current_database())`.execute(db);
  return { running: rows[0]?.running ?? 0, rowsRead: Number(rows[0]?.rows_read ?? 0) };
}

/** `count` fresh values of a sequence, in order. */
export async function nextSequenceValues(db: Executor, sequence: string, count: number): Promise<number[]> {
  const { rows } = await sql<{ n: number }>`
    SELECT nextval(${sequence}::regclass) AS n FROM generate_series(1, ${count}::int) ORDER BY 1`.execute(db);
  return rows.map((r) => Number(r.n));
}

/** A version id taken from its sequence before the version's row is inserted (its data file is stored first). */
export async function reserveVersionId(db: Executor): Promise<number> {
  const { rows } = await sql<{
    id: number;
  }>`SELECT nextval(pg_get_serial_sequence('data_set_versions', 'id'))::int AS id`.execute(db);
  return rows[0]!.id;
}

/** The data file may be stored before its version's row, in this transaction: the reference is checked at commit. */
export async function deferVersionFileCheck(db: Executor): Promise<void> {
  await sql`SET CONSTRAINTS data_set_version_files_version_id_fkey DEFERRED`.execute(db);
}

export async function insertVersion(db: Executor, values: Insertable<Database['data_set_versions']>): Promise<number> {
  const inserted = await db.insertInto('data_set_versions').values(values).returning('id').executeTakeFirstOrThrow();
  return inserted.id;
}

export async function insertTimePeriods(
  db: Executor,
  versionId: number,
  periods: ReadonlyArray<{ period: string; code: string }>,
) {
  return db
    .insertInto('version_time_periods')
    .values(periods.map((t) => ({ version_id: versionId, period: t.period, code: t.code })))
    .returning(['id', 'period', 'code'])
    .execute();
}

export async function insertGeographicLevels(db: Executor, versionId: number, codes: readonly string[]): Promise<void> {
  await db
    .insertInto('version_geographic_levels')
    .values(codes.map((code) => ({ version_id: versionId, code })))
    .execute();
}

export async function insertFilter(db: Executor, values: Insertable<Database['version_filters']>): Promise<number> {
  const { id } = await db.insertInto('version_filters').values(values).returning('id').executeTakeFirstOrThrow();
  return id;
}

export async function insertFilterOptions(db: Executor, values: Insertable<Database['version_filter_options']>[]) {
  return db.insertInto('version_filter_options').values(values).returning(['id', 'label']).execute();
}

export async function insertIndicators(
  db: Executor,
  values: Insertable<Database['version_indicators']>[],
): Promise<void> {
  await db.insertInto('version_indicators').values(values).execute();
}

export interface LocationKey {
  level: string;
  label: string;
  fields: Partial<Record<LocationCodeField, string>>;
}

/** The existing location rows with exactly these level, label and codes (a missing code matches only none). */
export async function findLocations(db: Executor, keys: readonly LocationKey[]) {
  const { rows } = await sql<{ id: number; level: string; label: string } & Record<LocationCodeField, string | null>>`
      SELECT l.id, l.level, l.label, l.code, l.old_code, l.urn, l.la_estab, l.ukprn
      FROM unnest(${keys.map((w) => w.level)}::text[], ${keys.map((w) => w.label)}::text[],
                  ${keys.map((w) => w.fields.code ?? '')}::text[], ${keys.map((w) => w.fields.old_code ?? '')}::text[],
                  ${keys.map((w) => w.fields.urn ?? '')}::text[], ${keys.map((w) => w.fields.la_estab ?? '')}::text[],
                  ${keys.map((w) => w.fields.ukprn ?? '')}::text[]) AS k(level, label, code, old_code, urn, la_estab, ukprn)
      JOIN locations l ON l.level = k.level AND l.label = k.label AND coalesce(l.code, '') = k.code
        AND coalesce(l.old_code, '') = k.old_code AND coalesce(l.urn, '') = k.urn
        AND coalesce(l.la_estab, '') = k.la_estab AND coalesce(l.ukprn, '') = k.ukprn`.execute(db);
  return rows;
}

export async function insertLocations(db: Executor, keys: ReadonlyArray<LocationKey & { publicId: string }>) {
  return db
    .insertInto('locations')
    .values(
      keys.map((w) => ({
        level: w.level,
        label: w.label,
        code: w.fields.code ?? null,
        old_code: w.fields.old_code ?? null,
        urn: w.fields.urn ?? null,
        la_estab: w.fields.la_estab ?? null,
        ukprn: w.fields.ukprn ?? null,
        public_id: w.publicId,
      })),
    )
    .returning(['id', 'public_id'])
    .execute();
}

export async function linkVersionLocations(
  db: Executor,
  versionId: number,
  locationIds: readonly number[],
): Promise<void> {
  await db
    .insertInto('version_locations')
    .values(locationIds.map((id) => ({ version_id: versionId, location_id: id })))
    .execute();
}

type RowTablePlan = Pick<DataFilePlan, 'locationLevels' | 'filters' | 'indicators'>;

/** The row table's columns, in the order the collected rows' COPY gives them (`RowIndexCollector.rowTableCopy`). */
function rowTableColumns(plan: RowTablePlan): string[] {
  return [
    'id integer NOT NULL',
    'time_period_id integer NOT NULL',
    'geographic_level text NOT NULL',
    ...facetColumnsOf(plan).map((c) => `${c} integer NOT NULL`),
    ...indicatorColumnsOf(plan).map((c) => `${c} text NOT NULL`),
  ];
}

/** The key of a version's rows (its stored row index's, and its row table's name where it has one), set on its row. */
export async function setVersionRowsKey(db: Kysely<Database>, versionId: number): Promise<string> {
  const rowsTable = `v${versionId}`;
  await db.updateTable('data_set_versions').set({ rows_table: rowsTable }).where('id', '=', versionId).execute();
  return rowsTable;
}

/** Creates the (empty) row table. Rows come with `copyRowTable`, indexes with `prepareVersionRowsForQuery`. */
export async function createRowTable(client: pg.PoolClient, rowsTable: string, plan: RowTablePlan): Promise<void> {
  await client.query(`CREATE TABLE stats_data.${rowsTable} (${rowTableColumns(plan).join(', ')})`);
}

/**
 * Fills the row table from a binary COPY of its rows (all its columns, in their order): the collected rows with their
 * final ids, in the default result order (time period newest first, then row id), so that pages of the default
 * query are contiguous on disk.
 */
export async function copyRowTable(client: pg.PoolClient, rowsTable: string, rows: Iterable<Buffer>): Promise<void> {
  const copy = client.query(copyFrom(`COPY stats_data.${rowsTable} FROM STDIN (FORMAT binary)`));
  await pipeline(Readable.from(rows, { objectMode: false }), copy);
}

/**
 * Called by the importer right after a version's rows are bulk-loaded into `stats_data.<rowsTable>` (with `rowTable`):
 * builds what the query engine relies on (after the load, which is much faster than indexing per row) and
 * refreshes planner statistics.
 *
 * - a primary key on `id`: page rows are fetched by id (the deferred join, and the in-memory index's page ids);
 * - an index on (time_period_id DESC, id), the default result order. The importer writes the rows in that order
 *   into a new table, so they already lie clustered on it (a default-ordered page is a contiguous run of heap pages
 *   and the in-memory index loads with a sequential read); no CLUSTER rewrite is needed;
 * - one GIN index (`btree_gin`) over the location and filter columns and the level, for the SQL engine (used for a
 *   version that has no stored row index): a term or an AND of
 *   terms on any of them is one bitmap scan of it, built faster and far smaller than a btree per column, with the
 *   SQL engine's query shapes as fast (docs/performance.md).
 *   A column holding one value in every row (the national location of most statistics files, the level of a
 *   single-level file) is left out: a term on it matches every row or none, so no plan would use it.
 */
export async function prepareVersionRowsForQuery(
  db: Executor,
  rowsTable: string,
  varyingFacets: readonly string[],
): Promise<void> {
  if (!/^[a-z0-9_]+$/.test(rowsTable)) throw new Error(`Invalid rows table name ${rowsTable}`);
  const table = sql.table(`stats_data.${rowsTable}`);
  await sql`ALTER TABLE ${table} ADD CONSTRAINT ${sql.id(`${rowsTable}_pkey`)} PRIMARY KEY (id)`.execute(db);
  const defaultOrder = `${rowsTable}_default_order_idx`;
  await sql`CREATE INDEX ${sql.id(defaultOrder)} ON ${table} (time_period_id DESC, id)`.execute(db);
  if (varyingFacets.length > 0) {
    await sql`CREATE INDEX ${sql.id(`${rowsTable}_facets_idx`)} ON ${table} USING gin (${sql.join(varyingFacets.map((c) => sql.ref(c)))})`.execute(
      db,
    );
  }
  await sql`ANALYZE ${table}`.execute(db);
}

export async function insertVersionFile(db: Executor, versionId: number, gzip: Buffer): Promise<void> {
  await db
    .insertInto('data_set_version_files')
    .values({ version_id: versionId, content_gzip: gzip, size_bytes: gzip.length })
    .execute();
}

/** A version's filters with their options (one row per option, or one without), in ordinal then option id order. */
export async function findFiltersWithOptions(db: Executor, versionId: number) {
  return db
    .selectFrom('version_filters as f')
    .leftJoin('version_filter_options as o', 'o.filter_id', 'f.id')
    .select([
      'f.id as filter_id',
      'f.public_id',
      'f.column_name',
      'f.label',
      'f.hint',
      'f.ordinal',
      'o.public_id as option_id',
      'o.label as option_label',
      'o.id as option_row',
    ])
    .where('f.version_id', '=', versionId)
    .orderBy('f.ordinal')
    .orderBy('o.id')
    .execute();
}

export async function findIndicatorsInOrder(db: Executor, versionId: number) {
  return db
    .selectFrom('version_indicators')
    .selectAll()
    .where('version_id', '=', versionId)
    .orderBy('ordinal')
    .execute();
}

export async function findGeographicLevelCodes(db: Executor, versionId: number): Promise<string[]> {
  return (
    await db.selectFrom('version_geographic_levels').select('code').where('version_id', '=', versionId).execute()
  ).map((r) => r.code);
}

export async function findTimePeriodsInIdOrder(db: Executor, versionId: number) {
  return db
    .selectFrom('version_time_periods')
    .select(['period', 'code'])
    .where('version_id', '=', versionId)
    .orderBy('id')
    .execute();
}

/** Replaces the stored changes of a version. */
export async function replaceVersionChanges(
  db: Executor,
  versionId: number,
  changes: ReadonlyArray<{ kind: 'major' | 'minor'; list: string; change: unknown }>,
): Promise<void> {
  await db.deleteFrom('version_changes').where('version_id', '=', versionId).execute();
  for (let i = 0; i < changes.length; i += 1000) {
    await db
      .insertInto('version_changes')
      .values(
        changes
          .slice(i, i + 1000)
          .map((c) => ({ version_id: versionId, kind: c.kind, list: c.list, change: JSON.stringify(c.change) })),
      )
      .execute();
  }
}
