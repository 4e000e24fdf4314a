/**
 * The sandbox tools (sandbox environment only): generate realistic trainees for the calling provider, in varied
 * states, and clear the provider's sandbox data to start again.
 */
import type { Db } from '../../db/database.js';
import type { RegisterContext } from '../context.js';
import { awardTrainee, deferTrainee, receiveTrn, recommendForAward, withdrawTrainee } from '../transitions/service.js';
import { createTraineeBatch, MAX_BATCH_ROWS } from '../trainees/batch.js';
import { todayUtc } from '../values.js';
import { generatedTrainee } from './generate.js';
import { deleteProviderData, type ClearedCounts } from './repository.js';
import { sandboxTrn } from './simulator.js';

export const MAX_GENERATED_TRAINEES = 500;

/** The states generated trainees are spread over, one in each in turn (four in ten still wait for their TRN). */
const STATE_CYCLE = [
  'submitted_for_trn',
  'trn_received',
  'submitted_for_trn',
  'recommended_for_award',
  'trn_received',
  'awarded',
  'submitted_for_trn',
  'deferred',
  'withdrawn',
  'submitted_for_trn',
] as const;
type GeneratedState = (typeof STATE_CYCLE)[number];

/** Takes a created trainee to `state` the way a vendor and the teacher record service would (events and audit included). */
async function moveTo(
  db: Db,
  context: RegisterContext,
  traineeId: string,
  state: GeneratedState,
  today: string,
): Promise<void> {
  const write = (data: Record<string, unknown>) => ({
    traineeId,
    ifMatch: undefined,
    enhancedErrors: false,
    data: () => data,
  });
  if (state === 'submitted_for_trn') return;
  if (state === 'deferred') {
    await deferTrainee(db, context, write({ defer_date: today, defer_reason: 'Illness' }));
    return;
  }
  await receiveTrn(db, traineeId, sandboxTrn(), 'sandbox');
  if (state === 'withdrawn') {
    await withdrawTrainee(
      db,
      context,
      write({
        withdrawal_date: today,
        trigger: 'trainee',
        future_interest: 'no',
        reasons: ['does_not_want_to_become_a_teacher'],
      }),
    );
  } else if (state === 'recommended_for_award' || state === 'awarded') {
    await recommendForAward(db, context, write({ qts_standards_met_date: today }));
    if (state === 'awarded') await awardTrainee(db, traineeId, today, today, 'sandbox');
  }
}

export interface GeneratedCounts {
  created: number;
  states: Record<string, number>;
}

/** Creates `count` trainees for the provider (through the batch create) and spreads them over the states. */
export async function generateTrainees(db: Db, context: RegisterContext, count: number): Promise<GeneratedCounts> {
  const today = todayUtc();
  const states: Record<string, number> = {};
  let created = 0;
  // Made-up trainees may, rarely, duplicate each other: such a row is drawn again (a bounded number of times).
  for (let attempt = 0; created < count && attempt < 2 * count; ) {
    const size = Math.min(MAX_BATCH_ROWS, count - created);
    const rows = Array.from({ length: size }, (_, i) => generatedTrainee(created + i, today));
    attempt += size;
    const { rows: answers } = await createTraineeBatch(db, context, rows, false);
    for (const answer of answers) {
      if (answer.status !== 201) continue;
      const state = STATE_CYCLE[created % STATE_CYCLE.length]!;
      await moveTo(db, context, (answer.data as { trainee_id: string }).trainee_id, state, today);
      states[state] = (states[state] ?? 0) + 1;
      created += 1;
    }
  }
  return { created, states };
}

/** Deletes the provider's trainees, events and webhook deliveries in this environment; its subscriptions stay. */
export async function clearSandboxData(db: Db, context: RegisterContext): Promise<ClearedCounts> {
  return db.transaction().execute((trx) => deleteProviderData(trx, context.provider.id, context.environment));
}
