/**
 * The register operator's trainee commands, dispatched by `npm run register -- <command>` (src/cli/register.ts):
 *
 *   trainee:receive-trn <trainee id> <trn>   the TRN the teacher record service allocated (7 digits)
 *   trainee:award <trainee id> <YYYY-MM-DD>  QTS/EYTS awarded on that date
 *
 * In the real system both come from the TRS integration; here the operator records them, so that every trainee
 * state is reachable. Both go through the state machine, run in one transaction and are audited (token: none).
 */
import type { Config } from '../config.js';
import type { Db, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import { isoDate, todayUtc } from '../register/values.js';
import { isTraineeState, nextState, stateAfterTrnReceived, TRANSITIONS } from '../register/state-machine.js';
import { recordAudit, updateTraineeRow, type TraineePatch, type TraineeRow } from '../register/trainees/repository.js';
import type { RegisterEnvironment } from '../register/tokens.js';
import { appendTraineeStateChanged, type StateChangeReason } from '../events/register-events.js';

export class TraineeCommandError extends AppError {
  constructor(message: string) {
    super(422, 'Unprocessable Entity', message);
  }
}

async function lockTrainee(trx: Executor, traineeId: string): Promise<TraineeRow> {
  const row = await trx.selectFrom('trainees').selectAll().where('id', '=', traineeId).forUpdate().executeTakeFirst();
  if (!row) throw new TraineeCommandError(`No trainee with id "${traineeId}"`);
  return row;
}

/** The environment whose feed the commands' events go to: the configured one (REGISTER_ENVIRONMENT's default without it). */
const environmentOf = (config?: Config): RegisterEnvironment => config?.REGISTER_ENVIRONMENT ?? 'sandbox';

async function apply(
  trx: Executor, trainee: TraineeRow, environment: RegisterEnvironment, action: string, reason: StateChangeReason, patch: TraineePatch,
): Promise<TraineeRow> {
  const updated = await updateTraineeRow(trx, trainee.id, patch);
  const before = Object.fromEntries(Object.keys(patch).map((k) => [k, trainee[k as keyof TraineeRow] ?? null]));
  await recordAudit(trx, { traineeId: trainee.id, providerId: trainee.provider_id, tokenId: null, action, before, after: patch });
  await appendTraineeStateChanged(trx, { providerId: trainee.provider_id, environment }, trainee.id, { from: trainee.state, to: updated.state, reason, changes: patch });
  return updated;
}

/** Records the trainee's TRN: `submitted_for_trn` → `trn_received`; deferred and withdrawn trainees keep their state. */
export async function receiveTrn(db: Db, traineeId: string, trn: string, environment: RegisterEnvironment = 'sandbox'): Promise<TraineeRow> {
  if (!/^\d{7}$/.test(trn)) throw new TraineeCommandError(`The TRN must be 7 digits (got "${trn}")`);
  return db.transaction().execute(async (trx) => {
    const trainee = await lockTrainee(trx, traineeId);
    const state = isTraineeState(trainee.state) ? stateAfterTrnReceived(trainee.state) : undefined;
    if (!state) {
      throw new TraineeCommandError(
        `Trainee ${traineeId} is ${trainee.state}: a TRN can only be received in ${[...TRANSITIONS.receive_trn.from, 'withdrawn'].join(', ')}`,
      );
    }
    return apply(trx, trainee, environment, 'receive_trn', 'trn_received', { trn, state });
  });
}

/** Awards QTS/EYTS: `recommended_for_award` → `awarded`, on a date that is not in the future nor before the outcome date. */
export async function awardTrainee(
  db: Db, traineeId: string, date: string, today = todayUtc(), environment: RegisterEnvironment = 'sandbox',
): Promise<TraineeRow> {
  const awardDate = isoDate(date);
  if (!awardDate || awardDate !== date) throw new TraineeCommandError(`The award date must be a date YYYY-MM-DD (got "${date}")`);
  if (awardDate > today) throw new TraineeCommandError(`The award date must not be in the future (today is ${today})`);
  return db.transaction().execute(async (trx) => {
    const trainee = await lockTrainee(trx, traineeId);
    const state = isTraineeState(trainee.state) ? nextState(trainee.state, 'award') : undefined;
    if (!state) throw new TraineeCommandError(`Trainee ${traineeId} is ${trainee.state}: only a trainee recommended_for_award can be awarded`);
    if (trainee.outcome_date && awardDate < trainee.outcome_date) {
      throw new TraineeCommandError(`The award date must not be before the date the standards were met (${trainee.outcome_date})`);
    }
    return apply(trx, trainee, environment, 'award', 'award', { state, awarded_at: new Date(`${awardDate}T00:00:00Z`) });
  });
}

function positionals(args: string[], names: string[], usage: string): string[] {
  const values = args.filter((a) => !a.startsWith('--'));
  if (values.length !== names.length || args.length !== names.length) throw new TraineeCommandError(`Usage: ${usage}`);
  return values;
}

export const traineeCommands: Record<string, (args: string[], db: Db, config?: Config) => Promise<void>> = {
  async 'trainee:receive-trn'(args, db, config) {
    const [traineeId, trn] = positionals(args, ['id', 'trn'], 'trainee:receive-trn <trainee id> <trn>');
    const row = await receiveTrn(db, traineeId, trn, environmentOf(config));
    console.log(`Trainee ${row.id}: TRN ${row.trn} recorded, state ${row.state}.`);
  },
  async 'trainee:award'(args, db, config) {
    const [traineeId, date] = positionals(args, ['id', 'date'], 'trainee:award <trainee id> <YYYY-MM-DD>');
    const row = await awardTrainee(db, traineeId, date, todayUtc(), environmentOf(config));
    console.log(`Trainee ${row.id}: awarded on ${date}, state ${row.state}.`);
  },
};
