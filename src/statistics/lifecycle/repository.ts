import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Database } from '../../db/schema.js';

/** The publisher's writes to the catalogue: data sets, versions, publications and preview tokens. */

export async function updateVersion(
  db: Executor,
  versionId: number,
  patch: Updateable<Database['data_set_versions']>,
): Promise<void> {
  await db.updateTable('data_set_versions').set(patch).where('id', '=', versionId).execute();
}

export async function updateDataSet(
  db: Executor,
  dataSetId: string,
  patch: Updateable<Database['data_sets']>,
): Promise<void> {
  await db.updateTable('data_sets').set(patch).where('id', '=', dataSetId).execute();
}

/** Draft → Published for the data set; any other status stays. */
/** Draft → Published; true when the data set was a draft (its first published version). */
export async function publishDraftDataSet(db: Executor, dataSetId: string): Promise<boolean> {
  const result = await db
    .updateTable('data_sets')
    .set({ status: 'Published' })
    .where('id', '=', dataSetId)
    .where('status', '=', 'Draft')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function insertPreviewToken(db: Executor, values: Insertable<Database['preview_tokens']>) {
  return db
    .insertInto('preview_tokens')
    .values(values)
    .returning(['id', 'label', 'created_at', 'expires_at'])
    .executeTakeFirstOrThrow();
}

/** Deletes a version row and its row table. */
export async function deleteVersion(db: Executor, version: { id: number; rows_table: string | null }): Promise<void> {
  if (version.rows_table) await sql`DROP TABLE IF EXISTS ${sql.table(`stats_data.${version.rows_table}`)}`.execute(db);
  await db.deleteFrom('data_set_versions').where('id', '=', version.id).execute();
}

export async function newUuid(db: Executor): Promise<string> {
  return (await sql<{ id: string }>`SELECT gen_random_uuid()::text AS id`.execute(db)).rows[0]!.id;
}

/** Whether a publication has this id or this slug. */
export async function publicationExists(db: Executor, match: { id: string; slug?: string }): Promise<boolean> {
  const row = await db
    .selectFrom('publications')
    .select('id')
    .where((eb) =>
      match.slug === undefined
        ? eb('id', '=', match.id)
        : eb.or([eb('id', '=', match.id), eb('slug', '=', match.slug)]),
    )
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertPublication(db: Executor, values: Insertable<Database['publications']>): Promise<void> {
  await db.insertInto('publications').values(values).execute();
}

export async function dataSetExists(db: Executor, dataSetId: string): Promise<boolean> {
  return (await db.selectFrom('data_sets').select('id').where('id', '=', dataSetId).executeTakeFirst()) !== undefined;
}

export async function insertDataSet(db: Executor, values: Insertable<Database['data_sets']>): Promise<void> {
  await db.insertInto('data_sets').values(values).execute();
}

/** Data sets by title (one, or all). */
export async function findDataSets(db: Executor, dataSetId?: string) {
  let query = db.selectFrom('data_sets').selectAll().orderBy('title');
  if (dataSetId) query = query.where('id', '=', dataSetId);
  return query.execute();
}

/** Every version, by number. */
export async function findAllVersions(db: Executor) {
  return db.selectFrom('data_set_versions').selectAll().orderBy('major').orderBy('minor').orderBy('patch').execute();
}
