import { sql, type Kysely } from 'kysely';

/**
 * The stored form of each version's row index (the row index snapshot of the statistics query engine): one deflated
 * buffer of typed arrays in 8 MB chunks, written once per version (by its import, or by the first instance that
 * builds the index from rows) and read by every instance on start or first query instead of rebuilding the index
 * from the rows. Keyed by the rows table the index was made from; gone with its version. The chunks are already
 * compressed, so PostgreSQL stores them as they are (STORAGE EXTERNAL: out of line, no second compression).
 * `version_row_index_uses` is when each version's row index was last used (written at most once a minute per
 * instance), so a starting instance loads the versions in use before it says it is ready.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE version_row_index_chunks (
      rows_table text NOT NULL,
      chunk integer NOT NULL,
      version_id integer NOT NULL REFERENCES data_set_versions (id) ON DELETE CASCADE,
      bytes bytea NOT NULL,
      PRIMARY KEY (rows_table, chunk)
    )`.execute(db);
  await sql`ALTER TABLE version_row_index_chunks ALTER COLUMN bytes SET STORAGE EXTERNAL`.execute(db);
  await sql`CREATE INDEX version_row_index_chunks_version_idx ON version_row_index_chunks (version_id)`.execute(db);
  await sql`
    CREATE TABLE version_row_index_uses (
      rows_table text PRIMARY KEY,
      version_id integer NOT NULL REFERENCES data_set_versions (id) ON DELETE CASCADE,
      used_at timestamptz NOT NULL
    )`.execute(db);
  await sql`CREATE INDEX version_row_index_uses_used_at_idx ON version_row_index_uses (used_at DESC)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS version_row_index_uses`.execute(db);
  await sql`DROP TABLE IF EXISTS version_row_index_chunks`.execute(db);
}
