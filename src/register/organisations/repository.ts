/** Providers, schools and training partners: the organisations the register knows (every SQL statement on them). */
import type { Insertable, Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { ProvidersTable, SchoolsTable, TrainingPartnersTable } from '../tables.js';

export type ProviderRow = Selectable<ProvidersTable>;

export async function findProviderByUkprn(db: Executor, ukprn: string): Promise<{ id: number } | undefined> {
  return db.selectFrom('providers').select('id').where('ukprn', '=', ukprn).executeTakeFirst();
}

/** Locks the providers table's first row (one demo starter at a time) and says whether any provider exists. */
export async function lockAndCheckAnyProvider(db: Executor): Promise<boolean> {
  await db.selectFrom('providers').select('id').forUpdate().limit(1).execute();
  const any = await db.selectFrom('providers').select('id').limit(1).executeTakeFirst();
  return any !== undefined;
}

export async function insertProvider(
  db: Executor,
  provider: Insertable<ProvidersTable>,
): Promise<{ id: number; ukprn: string; name: string }> {
  return db.insertInto('providers').values(provider).returning(['id', 'ukprn', 'name']).executeTakeFirstOrThrow();
}

export async function listProviderRows(db: Executor): Promise<ProviderRow[]> {
  return db.selectFrom('providers').selectAll().orderBy('id').execute();
}

/** Soft-deletes the active provider with this UKPRN; false when there is none. */
export async function discardProviderRow(db: Executor, ukprn: string): Promise<boolean> {
  const result = await db
    .updateTable('providers')
    .set({ discarded_at: new Date(), updated_at: new Date() })
    .where('ukprn', '=', ukprn)
    .where('discarded_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Inserts the school, or replaces the name, postcode and town of the school with its URN. */
export async function upsertSchool(db: Executor, school: Insertable<SchoolsTable>): Promise<void> {
  await db
    .insertInto('schools')
    .values(school)
    .onConflict((oc) =>
      oc.column('urn').doUpdateSet((eb) => ({
        name: eb.ref('excluded.name'),
        postcode: eb.ref('excluded.postcode'),
        town: eb.ref('excluded.town'),
      })),
    )
    .execute();
}

export async function insertTrainingPartner(
  db: Executor,
  partner: Insertable<TrainingPartnersTable>,
): Promise<{ id: number }> {
  return db.insertInto('training_partners').values(partner).returning('id').executeTakeFirstOrThrow();
}
