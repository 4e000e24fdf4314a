import { sql, type Kysely } from 'kysely';

/**
 * A version's location columns (the levels whose location columns its data file has), kept with the version: its
 * rows are no longer a table whose columns say so (the stored row index holds them). NULL for versions imported
 * before, whose row table's columns still say.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE data_set_versions ADD COLUMN location_levels text[]`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE data_set_versions DROP COLUMN location_levels`.execute(db);
}
