/** Reads and writes of placements and degrees. Plain functions taking the executor (db or transaction) first. */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DegreeValues } from './degrees.js';
import type { DegreeRow, PlacementRow } from './nested.js';
import type { PlacementValues, School } from './placements.js';
import { newSlug } from '../trainees/repository.js';

export async function findSchool(db: Executor, urn: string | null): Promise<School | undefined> {
  if (urn === null) return undefined;
  return db.selectFrom('schools').selectAll().where('urn', '=', urn).executeTakeFirst();
}

export async function findPlacement(db: Executor, traineeId: string, placementId: string): Promise<PlacementRow | undefined> {
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

export async function updatePlacement(db: Executor, placementId: string, values: PlacementValues): Promise<PlacementRow> {
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

export async function findDegree(db: Executor, traineeId: string, degreeId: string): Promise<DegreeRow | undefined> {
  return db
    .selectFrom('trainee_degrees')
    .selectAll()
    .where('trainee_id', '=', traineeId)
    .where(sql<string>`lower(id)`, '=', degreeId.toLowerCase())
    .executeTakeFirst();
}

export async function insertDegree(db: Executor, traineeId: string, values: DegreeValues): Promise<DegreeRow> {
  return db
    .insertInto('trainee_degrees')
    .values({ id: newSlug(), trainee_id: traineeId, ...values })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateDegree(db: Executor, degreeId: string, values: DegreeValues): Promise<DegreeRow> {
  return db
    .updateTable('trainee_degrees')
    .set({ ...values, updated_at: sql<Date>`now()` })
    .where('id', '=', degreeId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteDegree(db: Executor, degreeId: string): Promise<void> {
  await db.deleteFrom('trainee_degrees').where('id', '=', degreeId).execute();
}

export async function countDegrees(db: Executor, traineeId: string): Promise<number> {
  const row = await db
    .selectFrom('trainee_degrees')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('trainee_id', '=', traineeId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
