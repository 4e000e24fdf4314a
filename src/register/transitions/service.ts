/**
 * The trainee's state changes: defer, withdraw and the QTS/EYTS recommendation. Each locks the trainee (404, 412),
 * checks its body and the state machine with the real messages, writes the new state and audits it.
 */
import type { Db, Tx } from '../../db/database.js';
import type { RegisterContext, TraineeWrite } from '../context.js';
import { unprocessableEntries } from '../errors.js';
import { entryName } from '../reference-data.js';
import { assertWithdrawable, type TraineeState } from '../state-machine.js';
import { countDegrees } from '../degrees/repository.js';
import { countPlacements } from '../placements/repository.js';
import { recordAudit, updateTraineeRow, type TraineePatch, type TraineeRow } from '../trainees/repository.js';
import { traineeBody, withLockedTrainee, type TraineeResult } from '../trainees/service.js';
import { todayUtc } from '../values.js';
import { appendTraineeStateChanged, eventOwner, type StateChangeReason } from '../../events/register-events.js';
import { checkDefer, checkQtsStatus, checkWithdraw } from './validate.js';

/** Applies a state change to the trainee, audits it (before and after of the changed columns), answers the trainee. */
async function changeState(
  trx: Tx, trainee: TraineeRow, context: RegisterContext, action: string, reason: StateChangeReason, patch: TraineePatch,
): Promise<TraineeResult> {
  const updated = await updateTraineeRow(trx, trainee.id, patch);
  const before = Object.fromEntries(Object.keys(patch).map((k) => [k, trainee[k as keyof TraineeRow] ?? null]));
  // The audit shows the reasons as the array they are, not as the JSON text the column is written with.
  const after = { ...patch, ...(typeof patch.withdrawal_reasons === 'string' ? { withdrawal_reasons: JSON.parse(patch.withdrawal_reasons) } : {}) };
  await recordAudit(trx, { traineeId: trainee.id, providerId: trainee.provider_id, tokenId: context.tokenId, action, before, after });
  const body = await traineeBody(trx, updated, context.version, context.provider.ukprn);
  await appendTraineeStateChanged(trx, eventOwner(context), trainee.id, { from: trainee.state, to: updated.state, reason, changes: after });
  return { row: updated, body };
}

export async function deferTrainee(db: Db, context: RegisterContext, write: TraineeWrite): Promise<TraineeResult> {
  return withLockedTrainee(db, context, write.traineeId, write.ifMatch, async (trx, trainee) => {
    const checked = checkDefer(write.data(), trainee.state as TraineeState);
    if (!checked.ok) throw unprocessableEntries(checked.errors);
    return changeState(trx, trainee, context, 'defer', 'deferral', {
      state: 'deferred',
      defer_date: checked.value.defer_date,
      defer_reason: checked.value.defer_reason,
    });
  });
}

export async function withdrawTrainee(db: Db, context: RegisterContext, write: TraineeWrite): Promise<TraineeResult> {
  return withLockedTrainee(db, context, write.traineeId, write.ifMatch, async (trx, trainee) => {
    assertWithdrawable(trainee, todayUtc());
    const checked = checkWithdraw(write.data(), trainee, context.version);
    if (!checked.ok) throw unprocessableEntries(checked.errors);
    const w = checked.value;
    return changeState(trx, trainee, context, 'withdraw', 'withdrawal', {
      state: 'withdrawn',
      withdrawal_date: w.date,
      withdrawal_reasons: JSON.stringify(w.reasons),
      withdrawal_trigger: w.trigger,
      withdrawal_future_interest: w.future_interest,
      withdrawal_another_reason: w.another_reason,
      withdrawal_safeguarding_concern_reasons: w.safeguarding_concern_reasons,
    });
  });
}

/** `update-qts-or-eyts-status` (and its deprecated alias): from `trn_received` to `recommended_for_award`. */
export async function recommendForAward(db: Db, context: RegisterContext, write: TraineeWrite): Promise<TraineeResult> {
  return withLockedTrainee(db, context, write.traineeId, write.ifMatch, async (trx, trainee) => {
    const input = write.data();
    const [degreeCount, placementCount] = [await countDegrees(trx, trainee.id), await countPlacements(trx, trainee.id)];
    const checked = checkQtsStatus(
      input,
      {
        state: trainee.state as TraineeState,
        itt_start_date: trainee.itt_start_date,
        training_route: entryName('training_route', trainee.training_route) ?? trainee.training_route,
        degreeCount,
        placementCount,
      },
      todayUtc(),
    );
    if (!checked.ok) throw unprocessableEntries(checked.errors);
    return changeState(trx, trainee, context, 'recommend_for_award', 'recommendation', {
      state: 'recommended_for_award',
      outcome_date: checked.value.qts_standards_met_date,
      recommended_for_award_at: new Date(),
    });
  });
}
