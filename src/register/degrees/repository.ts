/** Reads and writes of degrees. Plain functions taking the executor (db or transaction) first. */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DegreeRow } from '../trainees/nested.js';
import { newSlug } from '../ids.js';
import type { DegreeValues } from './validate.js';

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
