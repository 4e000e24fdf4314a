/**
 * The sandbox's simulated teacher record service, on every sandbox instance (never on a live one): a trainee whose
 * `sandbox_due_at` has come gets its next step — a TRN while it has none, the award once recommended — through the
 * same state machine, audit and events as the operator's `trainee:receive-trn` and `trainee:award`, so feeds and
 * webhooks see exactly what a live TRN or award would show.
 *
 * Built like the webhook worker (src/events/webhook-worker.ts): a round runs when the poll timer wakes it (never two
 * at once on one instance); each step is one transaction that takes the longest-due trainee with
 * `FOR UPDATE SKIP LOCKED`, writes the step and clears the due time, so any number of instances share the work and
 * each step happens once. Due times live in the database: a restart, or an instance that dies mid-step (its
 * transaction rolls back), leaves nothing undone.
 */
import { randomInt } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Db, Tx } from '../../db/database.js';
import { CoalescedTask } from '../../events/coalesced.js';
import { isTraineeState, stateAfterTrnReceived } from '../state-machine.js';
import { recordAward, recordTrn } from '../transitions/service.js';
import type { TraineeRow } from '../trainees/repository.js';
import { todayUtc } from '../values.js';
import { clearDue, lockDueTrainee } from './repository.js';
import { stepWithheld } from './scenarios.js';

/** Steps one round takes at most before yielding to the next poll (a backlog is worked off over a few rounds). */
const STEPS_PER_ROUND = 200;

/** A sandbox TRN: 7 digits, as the teacher record service's. */
export function sandboxTrn(): string {
  return String(randomInt(1_000_000, 10_000_000));
}

/** The step due for a locked trainee, written with its due time cleared (or only the due time cleared when none applies). */
export async function advanceTrainee(
  trx: Tx,
  trainee: TraineeRow,
  today = todayUtc(),
): Promise<'trn' | 'award' | 'none'> {
  const done = { sandbox_due_at: null };
  if (trainee.state === 'recommended_for_award' && !stepWithheld('award', trainee.provider_trainee_id)) {
    // Awarded today, or on the date the standards were met when a vendor sent a later one.
    const date = trainee.outcome_date && trainee.outcome_date > today ? trainee.outcome_date : today;
    await recordAward(trx, trainee, date, 'sandbox', done);
    return 'award';
  }
  const trnApplies =
    trainee.trn === null && isTraineeState(trainee.state) && stateAfterTrnReceived(trainee.state) !== undefined;
  if (trnApplies && !stepWithheld('trn', trainee.provider_trainee_id)) {
    await recordTrn(trx, trainee, sandboxTrn(), 'sandbox', done);
    return 'trn';
  }
  await clearDue(trx, trainee.id);
  return 'none';
}

export interface SandboxSimulatorOptions {
  config: Config;
  log: { warn(obj: object, msg: string): void };
}

export class SandboxSimulator {
  private readonly rounds: CoalescedTask;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: SandboxSimulatorOptions,
  ) {
    this.rounds = new CoalescedTask(
      async () => void (await this.round()),
      (error) => options.log.warn({ err: error.message }, 'sandbox simulator round failed'),
    );
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.options.config.REGISTER_SANDBOX_POLL_MS);
    this.timer.unref();
    this.wake();
  }

  wake(): void {
    this.rounds.wake();
  }

  /** Takes due steps one transaction each until none is due (or the round's share is done). */
  async round(): Promise<number> {
    let steps = 0;
    while (steps < STEPS_PER_ROUND && (await this.step())) steps += 1;
    return steps;
  }

  /**
   * One due trainee's step; false when none is due. The checks in advanceTrainee leave the state machine nothing to
   * refuse, so a failure is the database's: the round ends and the next poll tries again.
   */
  private async step(): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const trainee = await lockDueTrainee(trx);
      if (!trainee) return false;
      await advanceTrainee(trx, trainee);
      return true;
    });
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.rounds.stop();
  }
}
