import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/**
 * Called by the importer right after a version's rows are bulk-loaded into `stats_data.<rowsTable>`:
 * builds what the query engine relies on (after the load, which is much faster than indexing per row) and
 * refreshes planner statistics.
 *
 * - a primary key on `id`: page rows are fetched by id (the deferred join, and the in-memory index's page ids);
 * - an index on (time_period_id DESC, id), the default result order. The importer writes the rows in that order
 *   into a new table, so they already lie clustered on it (a default-ordered page is a contiguous run of heap pages
 *   and the in-memory index loads with a sequential read); no CLUSTER rewrite is needed;
 * - one btree per facet column, for the SQL engine (used while a version's in-memory index is not built yet, for
 *   indicator sorts, and for the CSV export).
 */
export async function prepareVersionRowsForQuery(db: Executor, rowsTable: string): Promise<void> {
  if (!/^[a-z0-9_]+$/.test(rowsTable)) throw new Error(`Invalid rows table name ${rowsTable}`);
  const table = sql.table(`stats_data.${rowsTable}`);
  const { rows } = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns
    WHERE table_schema = 'stats_data' AND table_name = ${rowsTable}`.execute(db);
  const columns = rows.map((r) => r.column_name);

  await sql`ALTER TABLE ${table} ADD CONSTRAINT ${sql.id(`${rowsTable}_pkey`)} PRIMARY KEY (id)`.execute(db);
  const defaultOrder = `${rowsTable}_default_order_idx`;
  await sql`CREATE INDEX ${sql.id(defaultOrder)} ON ${table} (time_period_id DESC, id)`.execute(db);

  const indexed = columns.filter((c) => c === 'geographic_level' || /^(f\d+|l_[a-z0-9_]+)$/.test(c));
  for (const column of indexed) {
    await sql`CREATE INDEX ${sql.id(`${rowsTable}_${column}_idx`)} ON ${table} (${sql.ref(column)})`.execute(db);
  }
  await sql`ANALYZE ${table}`.execute(db);
}
