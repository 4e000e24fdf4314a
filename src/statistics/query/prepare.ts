import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';

/**
 * Called by the importer right after a version's rows are bulk-loaded into `stats_data.<rowsTable>`:
 * builds the indexes the query engine relies on (after the load, which is much faster than indexing per row)
 * and refreshes planner statistics.
 */
export async function prepareVersionRowsForQuery(db: Executor, rowsTable: string): Promise<void> {
  if (!/^[a-z0-9_]+$/.test(rowsTable)) throw new Error(`Invalid rows table name ${rowsTable}`);
  const { rows } = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns
    WHERE table_schema = 'stats_data' AND table_name = ${rowsTable}`.execute(db);
  const indexed = rows
    .map((r) => r.column_name)
    .filter((c) => c === 'time_period_id' || c === 'geographic_level' || /^(f|l_)[a-z0-9_]+$/.test(c));
  for (const column of indexed) {
    await sql`CREATE INDEX ${sql.id(`${rowsTable}_${column}_idx`)} ON ${sql.table(`stats_data.${rowsTable}`)} (${sql.ref(column)})`.execute(db);
  }
  await sql`ANALYZE ${sql.table(`stats_data.${rowsTable}`)}`.execute(db);
}
