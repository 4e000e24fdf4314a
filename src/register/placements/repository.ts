/** Reads and writes of placements (and the schools they link to). Plain functions taking the executor first. */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { PlacementRow } from '../trainees/nested.js';
import { newSlug } from '../ids.js';
import type { PlacementValues, School } from './validate.js';

export async function findSchool(db: Executor, urn: string | null): Promise<School | undefined> {
  if (urn === null) return undefined;
  return db.selectFrom('schools').selectAll().where('urn', '=', urn).executeTakeFirst();
}

export async function findPlacement(
  db: Executor,
  traineeId: string,
  placementId: string,
): Promise<PlacementRow | undefined> {
  return db
    .selectFrom('trainee_placements')
    .selectAll()
    .where('trainee_id', '=', traineeId)
    .where(sql<string>`lower(id)`, '=', placementId.toLowerCase())
    .executeTakeFirst();
}

export async function insertPlacement(db: Executor, traineeId: string, values: PlacementValues): Promise<PlacementRow> {
  return db
    .insertInto('trainee_placements')
    .values({ id: newSlug(), trainee_id: traineeId, ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updatePlacement(
  db: Executor,
  placementId: string,
  values: PlacementValues,
): Promise<PlacementRow> {
  return db
    .updateTable('trainee_placements')
    .set({ ...values, updated_at: sql<Date>`now()` })
    .where('id', '=', placementId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deletePlacement(db: Executor, placementId: string): Promise<void> {
  await db.deleteFrom('trainee_placements').where('id', '=', placementId).execute();
}

export async function countPlacements(db: Executor, traineeId: string): Promise<number> {
  const row = await db
    .selectFrom('trainee_placements')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('trainee_id', '=', traineeId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
