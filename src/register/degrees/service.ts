/**
 * Degree rules and transactions. Every write locks the trainee (404, 412 and the version's lock first); a degree
 * equal to another of the trainee's is refused (409) before the other checks, as the real service does.
 */
import type { Db, Executor } from '../../db/database.js';
import type { RegisterContext, TraineeTarget, TraineeWrite } from '../context.js';
import { degreeNotFound, duplicateDegree, unprocessableEntries } from '../errors.js';
import { assertTraineeModifiable } from '../state-machine.js';
import { serializeDegree, type DegreeResponse } from '../trainees/nested.js';
import { listDegreeRows } from '../trainees/repository.js';
import {
  findProviderTrainee,
  touchTraineeAudited,
  traineeBody,
  withLockedTrainee,
  type TraineeResult,
} from '../trainees/service.js';
import { deleteDegree, findDegree, insertDegree, updateDegree } from './repository.js';
import { checkDegree, findDuplicateDegrees, MAX_DEGREES_PER_TRAINEE, type DegreeValues } from './validate.js';

export async function listDegrees(
  db: Executor,
  context: RegisterContext,
  traineeId: string,
): Promise<DegreeResponse[]> {
  const trainee = await findProviderTrainee(db, context, traineeId);
  return (await listDegreeRows(db, [trainee.id])).map(serializeDegree);
}

export async function getDegree(
  db: Executor,
  context: RegisterContext,
  traineeId: string,
  degreeId: string,
): Promise<DegreeResponse> {
  const trainee = await findProviderTrainee(db, context, traineeId);
  const degree = await findDegree(db, trainee.id, degreeId);
  if (!degree) throw degreeNotFound();
  return serializeDegree(degree);
}

export async function createDegree(db: Db, context: RegisterContext, write: TraineeWrite): Promise<DegreeResponse> {
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    assertTraineeModifiable(trainee, context.version);
    const { values, errors } = checkDegree(write.data());
    const stored = await listDegreeRows(trx, [trainee.id]);
    const duplicates = findDuplicateDegrees(values, stored);
    if (duplicates.length > 0) throw duplicateDegree(duplicates.map(serializeDegree));
    if (stored.length >= MAX_DEGREES_PER_TRAINEE)
      errors.push(`degrees is too long (maximum is ${MAX_DEGREES_PER_TRAINEE} degrees)`);
    if (errors.length > 0) throw unprocessableEntries(errors);
    const degree = serializeDegree(await insertDegree(trx, trainee.id, values as DegreeValues));
    await touchTraineeAudited(trx, trainee, context, 'degree.create', null, degree);
    return degree;
  });
}

/** PUT and PATCH alike: fields not sent keep their values; `uk_degree` or `non_uk_degree` switches UK ↔ non-UK. */
export async function changeDegree(
  db: Db,
  context: RegisterContext,
  degreeId: string,
  write: TraineeWrite,
): Promise<DegreeResponse> {
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    assertTraineeModifiable(trainee, context.version);
    const existing = await findDegree(trx, trainee.id, degreeId);
    if (!existing) throw degreeNotFound();
    const { values, errors } = checkDegree(write.data(), existing);
    const others = (await listDegreeRows(trx, [trainee.id])).filter((d) => d.id !== existing.id);
    const duplicates = findDuplicateDegrees(values, others);
    if (duplicates.length > 0) throw duplicateDegree(duplicates.map(serializeDegree));
    if (errors.length > 0) throw unprocessableEntries(errors);
    const degree = serializeDegree(await updateDegree(trx, existing.id, values as DegreeValues));
    await touchTraineeAudited(trx, trainee, context, 'degree.update', serializeDegree(existing), degree);
    return degree;
  });
}

/** Deletes the degree and answers with the trainee as it is after. */
export async function removeDegree(
  db: Db,
  context: RegisterContext,
  degreeId: string,
  write: TraineeTarget,
): Promise<TraineeResult> {
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    assertTraineeModifiable(trainee, context.version);
    const existing = await findDegree(trx, trainee.id, degreeId);
    if (!existing) throw degreeNotFound();
    await deleteDegree(trx, existing.id);
    const updated = await touchTraineeAudited(trx, trainee, context, 'degree.delete', serializeDegree(existing), null);
    return { row: updated, body: await traineeBody(trx, updated, context.version, context.provider.ukprn) };
  });
}
