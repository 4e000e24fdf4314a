import { sql, type Kysely } from 'kysely';

/**
 * `btree_gin` (a trusted contrib extension: a database owner may create it), for the one GIN index over a new row
 * table's location, filter and level columns that replaces a btree per column (docs/architecture.md, "The row
 * table"). Row tables imported before keep their btrees; the query engine's SQL is the same for both.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS btree_gin`.execute(db);
}

export async function down(): Promise<void> {
  // Kept: row tables imported meanwhile have GIN indexes that need it, and the code before does not mind it.
}
