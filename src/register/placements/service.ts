/**
 * Placement rules and transactions. Every write locks the trainee (404, 412 and the version's lock first), checks
 * the placement, writes it, and moves and audits the trainee; a refusal rolls the transaction back.
 */
import type { Db, Executor } from '../../db/database.js';
import type { RegisterContext, TraineeTarget, TraineeWrite } from '../context.js';
import { placementNotFound, unprocessableEntries } from '../errors.js';
import { assertTraineeModifiable } from '../state-machine.js';
import { serializePlacement, type PlacementResponse } from '../trainees/nested.js';
import { listPlacementRows } from '../trainees/repository.js';
import {
  findProviderTrainee,
  touchTraineeAudited,
  traineeBody,
  withLockedTrainee,
  type TraineeResult,
} from '../trainees/service.js';
import {
  countPlacements,
  deletePlacement,
  findPlacement,
  findSchool,
  insertPlacement,
  updatePlacement,
} from './repository.js';
import { checkPlacement, MAX_PLACEMENTS_PER_TRAINEE, urnToLookUp } from './validate.js';

export async function listPlacements(
  db: Executor,
  context: RegisterContext,
  traineeId: string,
): Promise<PlacementResponse[]> {
  const trainee = await findProviderTrainee(db, context, traineeId);
  return (await listPlacementRows(db, [trainee.id])).map(serializePlacement);
}

export async function getPlacement(
  db: Executor,
  context: RegisterContext,
  traineeId: string,
  placementId: string,
): Promise<PlacementResponse> {
  const trainee = await findProviderTrainee(db, context, traineeId);
  const placement = await findPlacement(db, trainee.id, placementId);
  if (!placement) throw placementNotFound();
  return serializePlacement(placement);
}

export async function createPlacement(
  db: Db,
  context: RegisterContext,
  write: TraineeWrite,
): Promise<PlacementResponse> {
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    assertTraineeModifiable(trainee, context.version);
    const input = write.data();
    const { values, errors } = checkPlacement(input, await findSchool(trx, urnToLookUp(input)));
    if ((await countPlacements(trx, trainee.id)) >= MAX_PLACEMENTS_PER_TRAINEE) {
      errors.push(`placements is too long (maximum is ${MAX_PLACEMENTS_PER_TRAINEE} placements)`);
    }
    if (errors.length > 0) throw unprocessableEntries(errors);
    const placement = serializePlacement(await insertPlacement(trx, trainee.id, values));
    await touchTraineeAudited(trx, trainee, context, 'placement.create', null, placement);
    return placement;
  });
}

/** PUT and PATCH alike: fields not sent keep their values. */
export async function changePlacement(
  db: Db,
  context: RegisterContext,
  placementId: string,
  write: TraineeWrite,
): Promise<PlacementResponse> {
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    assertTraineeModifiable(trainee, context.version);
    const existing = await findPlacement(trx, trainee.id, placementId);
    if (!existing) throw placementNotFound();
    const input = write.data();
    const { values, errors } = checkPlacement(input, await findSchool(trx, urnToLookUp(input, existing)), existing);
    if (errors.length > 0) throw unprocessableEntries(errors);
    const placement = serializePlacement(await updatePlacement(trx, existing.id, values));
    await touchTraineeAudited(trx, trainee, context, 'placement.update', serializePlacement(existing), placement);
    return placement;
  });
}

/** Deletes the placement and answers with the trainee as it is after. */
export async function removePlacement(
  db: Db,
  context: RegisterContext,
  placementId: string,
  write: TraineeTarget,
): Promise<TraineeResult> {
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    assertTraineeModifiable(trainee, context.version);
    const existing = await findPlacement(trx, trainee.id, placementId);
    if (!existing) throw placementNotFound();
    await deletePlacement(trx, existing.id);
    const updated = await touchTraineeAudited(
      trx,
      trainee,
      context,
      'placement.delete',
      serializePlacement(existing),
      null,
    );
    return { row: updated, body: await traineeBody(trx, updated, context.version, context.provider.ukprn) };
  });
}
