import { sql, type Kysely } from 'kysely';

/**
 * The import stores a version's data file while it reads the file's rows, before the version's row exists (its id is
 * taken from the sequence first): the file's reference to its version may be checked at commit
 * (`SET CONSTRAINTS … DEFERRED` in the import's transaction); everywhere else it is checked at once, as before.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE data_set_version_files ALTER CONSTRAINT data_set_version_files_version_id_fkey DEFERRABLE INITIALLY IMMEDIATE`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE data_set_version_files ALTER CONSTRAINT data_set_version_files_version_id_fkey NOT DEFERRABLE`.execute(db);
}
