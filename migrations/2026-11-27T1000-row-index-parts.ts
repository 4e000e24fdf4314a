import { sql, type Kysely } from 'kysely';

/**
 * The row index's stored form in two parts (docs/architecture.md, "The row index"): `facets` (row ids, levels,
 * locations, filters: what count and page need, small once deflated) and `values` (the indicator values), so an
 * instance can answer from the first while it loads the second. The stored forms of the format before are of
 * no use to this one: they are deleted here and made again from the rows (on first use, or with
 * `npm run stats-admin -- build-row-indexes`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DELETE FROM version_row_index_chunks`.execute(db);
  await sql`ALTER TABLE version_row_index_chunks ADD COLUMN part text NOT NULL DEFAULT 'facets' CHECK (part IN ('facets', 'values'))`.execute(db);
  await sql`ALTER TABLE version_row_index_chunks ALTER COLUMN part DROP DEFAULT`.execute(db);
  await sql`ALTER TABLE version_row_index_chunks DROP CONSTRAINT version_row_index_chunks_pkey`.execute(db);
  await sql`ALTER TABLE version_row_index_chunks ADD PRIMARY KEY (rows_table, part, chunk)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DELETE FROM version_row_index_chunks`.execute(db);
  await sql`ALTER TABLE version_row_index_chunks DROP CONSTRAINT version_row_index_chunks_pkey`.execute(db);
  await sql`ALTER TABLE version_row_index_chunks DROP COLUMN part`.execute(db);
  await sql`ALTER TABLE version_row_index_chunks ADD PRIMARY KEY (rows_table, chunk)`.execute(db);
}
