import type { Insertable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { Database } from '../../db/schema.js';

/** The seed's reads and writes of the catalogue; versions are written by the importer. */

export async function anyDataSetExists(db: Executor): Promise<boolean> {
  return (await db.selectFrom('data_sets').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/** Inserts the publication unless one with its id exists. */
export async function insertPublicationIfMissing(
  db: Executor,
  values: Insertable<Database['publications']>,
): Promise<void> {
  await db
    .insertInto('publications')
    .values(values)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

/** Inserts the data set unless one with its id exists. */
export async function insertDataSetIfMissing(db: Executor, values: Insertable<Database['data_sets']>): Promise<void> {
  await db
    .insertInto('data_sets')
    .values(values)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export async function dataSetHasVersions(db: Executor, dataSetId: string): Promise<boolean> {
  return (
    (await db
      .selectFrom('data_set_versions')
      .select('id')
      .where('data_set_id', '=', dataSetId)
      .limit(1)
      .executeTakeFirst()) !== undefined
  );
}

/** Whether any of these data sets exists without a version. */
export async function anyDataSetWithoutVersions(db: Executor, dataSetIds: readonly string[]): Promise<boolean> {
  const row = await db
    .selectFrom('data_sets as d')
    .select('d.id')
    .where('d.id', 'in', [...dataSetIds])
    .where((eb) =>
      eb.not(eb.exists(eb.selectFrom('data_set_versions as v').select('v.id').whereRef('v.data_set_id', '=', 'd.id'))),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
