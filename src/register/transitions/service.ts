/**
 * The trainee's state changes: defer, withdraw and the QTS/EYTS recommendation through the API, and the TRN and the
 * award that the operator records (`npm run register -- trainee:…`; in the real system both come from TRS). Each
 * locks the trainee (404, 412), checks its input and the state machine with the real messages, writes the new state
 * and audits it.
 */
import type { Db, Tx } from '../../db/database.js';
import { UnprocessableError } from '../../errors.js';
import type { RegisterContext, TraineeWrite } from '../context.js';
import { unprocessableEntries } from '../errors.js';
import { entryName } from '../reference-data.js';
import { assertWithdrawable, isTraineeState, nextState, stateAfterTrnReceived, TRANSITIONS } from '../state-machine.js';
import { countDegrees } from '../degrees/repository.js';
import { countPlacements } from '../placements/repository.js';
import type { TraineePatch, TraineeRow } from '../trainees/repository.js';
import {
  OPERATOR,
  traineeBody,
  updateTraineeAudited,
  withLockedTrainee,
  type TraineeResult,
  type TraineeWriter,
} from '../trainees/service.js';
import type { RegisterEnvironment } from '../tokens.js';
import { isoDate, todayUtc } from '../values.js';
import {
  traineeStateChangedEvent,
  eventOwner,
  type RegisterEventOwner,
  type StateChangeReason,
} from '../events/service.js';
import { checkDefer, checkQtsStatus, checkWithdraw } from './validate.js';
import { sandboxDueAt } from '../sandbox/scenarios.js';

/**
 * Applies a state change to the trainee, audits it (before and after of the changed columns) and appends its event;
 * `bookkeeping` columns (the sandbox's due time) are written with it but are neither audited nor in the event.
 */
async function applyStateChange(
  trx: Tx,
  trainee: TraineeRow,
  writer: TraineeWriter,
  owner: RegisterEventOwner,
  action: string,
  reason: StateChangeReason,
  patch: TraineePatch,
  bookkeeping: TraineePatch = {},
): Promise<TraineeRow> {
  const before = Object.fromEntries(Object.keys(patch).map((k) => [k, trainee[k as keyof TraineeRow] ?? null]));
  // The audit shows the reasons as the array they are, not as the JSON text the column is written with.
  const after = {
    ...patch,
    ...(typeof patch.withdrawal_reasons === 'string'
      ? { withdrawal_reasons: JSON.parse(patch.withdrawal_reasons) as unknown }
      : {}),
  };
  // The state after is the patch's, or the state kept (a TRN received while deferred).
  const event = traineeStateChangedEvent(owner, trainee.id, {
    from: trainee.state,
    to: patch.state ?? trainee.state,
    reason,
    changes: after,
  });
  return updateTraineeAudited(trx, trainee, writer, action, { ...patch, ...bookkeeping }, before, after, event);
}

/** A provider's state change, answered with the trainee as it is after. */
async function changeState(
  trx: Tx,
  trainee: TraineeRow,
  context: RegisterContext,
  action: string,
  reason: StateChangeReason,
  patch: TraineePatch,
): Promise<TraineeResult> {
  const updated = await applyStateChange(trx, trainee, context, eventOwner(context), action, reason, patch);
  return { row: updated, body: await traineeBody(trx, updated, context.version, context.provider.ukprn) };
}

export async function deferTrainee(db: Db, context: RegisterContext, write: TraineeWrite): Promise<TraineeResult> {
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    const checked = checkDefer(write.data(), trainee.state);
    if (checked.errors.length > 0) throw unprocessableEntries(checked.errors);
    return changeState(trx, trainee, context, 'defer', 'deferral', {
      state: 'deferred',
      defer_date: checked.values.defer_date,
      defer_reason: checked.values.defer_reason,
    });
  });
}

export async function withdrawTrainee(db: Db, context: RegisterContext, write: TraineeWrite): Promise<TraineeResult> {
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    assertWithdrawable(trainee, todayUtc());
    const checked = checkWithdraw(write.data(), trainee, context.version);
    if (checked.errors.length > 0) throw unprocessableEntries(checked.errors);
    const w = checked.values;
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
  return withLockedTrainee(db, context, write, async (trx, trainee) => {
    const input = write.data();
    const [degreeCount, placementCount] = [await countDegrees(trx, trainee.id), await countPlacements(trx, trainee.id)];
    const checked = checkQtsStatus(
      input,
      {
        state: trainee.state,
        itt_start_date: trainee.itt_start_date,
        training_route: entryName('training_route', trainee.training_route) ?? trainee.training_route,
        degreeCount,
        placementCount,
      },
      todayUtc(),
    );
    if (checked.errors.length > 0) throw unprocessableEntries(checked.errors);
    const patch: TraineePatch = {
      state: 'recommended_for_award',
      outcome_date: checked.values.qts_standards_met_date,
      recommended_for_award_at: new Date(),
    };
    const updated = await applyStateChange(
      trx,
      trainee,
      context,
      eventOwner(context),
      'recommend_for_award',
      'recommendation',
      patch,
      { sandbox_due_at: sandboxDueAt(context.sandbox, 'award', trainee.provider_trainee_id) },
    );
    return { row: updated, body: await traineeBody(trx, updated, context.version, context.provider.ukprn) };
  });
}

/** The operator records the trainee's TRN: `submitted_for_trn` → `trn_received`; deferred and withdrawn trainees keep their state. */
export async function receiveTrn(
  db: Db,
  traineeId: string,
  trn: string,
  environment: RegisterEnvironment = 'sandbox',
): Promise<TraineeRow> {
  if (!/^\d{7}$/.test(trn)) throw new UnprocessableError(`The TRN must be 7 digits (got "${trn}")`);
  return withLockedTrainee(db, OPERATOR, { traineeId, ifMatch: undefined }, (trx, trainee) =>
    recordTrn(trx, trainee, trn, environment),
  );
}

/**
 * The TRN on a locked trainee (the operator's command and the sandbox's simulated teacher record service alike);
 * `extra` is written with it (the simulator clears the trainee's due time).
 */
export async function recordTrn(
  trx: Tx,
  trainee: TraineeRow,
  trn: string,
  environment: RegisterEnvironment,
  extra: TraineePatch = {},
): Promise<TraineeRow> {
  const state = isTraineeState(trainee.state) ? stateAfterTrnReceived(trainee.state) : undefined;
  if (!state) {
    throw new UnprocessableError(
      `Trainee ${trainee.id} is ${trainee.state}: a TRN can only be received in ${[...TRANSITIONS.receive_trn.from, 'withdrawn'].join(', ')}`,
    );
  }
  return applyStateChange(
    trx,
    trainee,
    OPERATOR,
    { providerId: trainee.provider_id, environment },
    'receive_trn',
    'trn_received',
    { trn, state },
    extra,
  );
}

/** The operator records QTS/EYTS awarded: `recommended_for_award` → `awarded`, on a date neither in the future nor before the outcome date. */
export async function awardTrainee(
  db: Db,
  traineeId: string,
  date: string,
  today = todayUtc(),
  environment: RegisterEnvironment = 'sandbox',
): Promise<TraineeRow> {
  const awardDate = isoDate(date);
  if (!awardDate || awardDate !== date)
    throw new UnprocessableError(`The award date must be a date YYYY-MM-DD (got "${date}")`);
  if (awardDate > today) throw new UnprocessableError(`The award date must not be in the future (today is ${today})`);
  return withLockedTrainee(db, OPERATOR, { traineeId, ifMatch: undefined }, (trx, trainee) =>
    recordAward(trx, trainee, awardDate, environment),
  );
}

/** The award on a locked trainee (the operator's command and the sandbox's simulator alike); `extra` as for recordTrn. */
export async function recordAward(
  trx: Tx,
  trainee: TraineeRow,
  awardDate: string,
  environment: RegisterEnvironment,
  extra: TraineePatch = {},
): Promise<TraineeRow> {
  const state = isTraineeState(trainee.state) ? nextState(trainee.state, 'award') : undefined;
  if (!state)
    throw new UnprocessableError(
      `Trainee ${trainee.id} is ${trainee.state}: only a trainee recommended_for_award can be awarded`,
    );
  if (trainee.outcome_date && awardDate < trainee.outcome_date) {
    throw new UnprocessableError(
      `The award date must not be before the date the standards were met (${trainee.outcome_date})`,
    );
  }
  return applyStateChange(
    trx,
    trainee,
    OPERATOR,
    { providerId: trainee.provider_id, environment },
    'award',
    'award',
    { state, awarded_at: new Date(`${awardDate}T00:00:00Z`) },
    extra,
  );
}
