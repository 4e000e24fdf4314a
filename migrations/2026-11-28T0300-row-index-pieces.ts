import { sql, type Kysely } from 'kysely';

/**
 * The row index's stored form as one deflated piece per column (format 3, docs/architecture.md, "The row index's
 * stored form"), which an instance uses as it is inflated instead of copying 8 MB slices into one buffer. The
 * stored forms of format 2 are of no use to it: they are deleted here and made again from the rows (on first use,
 * or at once with `npm run stats-admin -- build-row-indexes`). The table is unchanged.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DELETE FROM version_row_index_chunks`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  // Format 3 is of no use to the code before it either.
  await sql`DELETE FROM version_row_index_chunks`.execute(db);
}
