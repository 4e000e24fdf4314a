import { sql, type Kysely } from 'kysely';

/**
 * The Parquet copy of each version's rows (docs/architecture.md, "The Parquet copy of a version"): one row per
 * version, its bytes stored uncompressed in TOAST (`STORAGE EXTERNAL`: the file is compressed already, and a range of
 * it, `substring`, then reads only the TOAST chunks it covers), with its size, SHA-256 (the download's ETag) and
 * layout format. Versions imported before get theirs from their kept data file (`npm run stats-admin --
 * backfill-parquet`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE data_set_version_parquet (
      version_id integer PRIMARY KEY REFERENCES data_set_versions (id) ON DELETE CASCADE,
      bytes bytea NOT NULL,
      byte_size bigint NOT NULL,
      sha256 text NOT NULL,
      format integer NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db);
  await sql`ALTER TABLE data_set_version_parquet ALTER COLUMN bytes SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE IF EXISTS data_set_version_parquet`.execute(db);
}
