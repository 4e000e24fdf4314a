/** The SQL of the sandbox: due trainees for the simulator, and clearing one provider's sandbox data. */
import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { RegisterEnvironment } from '../tokens.js';
import type { TraineeRow } from '../trainees/repository.js';

/**
 * The trainee whose step has been due longest, locked until the transaction ends; trainees another instance (or a
 * request) holds are skipped, so instances never take the same trainee and a request's write is never waited for.
 */
export async function lockDueTrainee(trx: Executor): Promise<TraineeRow | undefined> {
  return trx
    .selectFrom('trainees')
    .selectAll()
    .where('sandbox_due_at', '<=', sql<Date>`now()`)
    .orderBy('sandbox_due_at')
    .limit(1)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/** No step is due any more (the trainee's state or scenario allows none); its ETag does not move. */
export async function clearDue(trx: Executor, traineeId: string): Promise<void> {
  await trx.updateTable('trainees').set({ sandbox_due_at: null }).where('id', '=', traineeId).execute();
}

export interface ClearedCounts {
  trainees: number;
  events: number;
  deliveries: number;
}

/**
 * Deletes a provider's trainees (their placements and degrees by cascade, their audit rows), its events of this
 * environment (sequenced and still in the inbox) and its webhook subscriptions' deliveries; the subscriptions stay,
 * their cursors where they are (later events have later positions).
 */
export async function deleteProviderData(
  trx: Executor,
  providerId: number,
  environment: RegisterEnvironment,
): Promise<ClearedCounts> {
  // All the deleted rows count in one shard (migration 2026-11-29T0810): no deadlock with a concurrent batch.
  await sql`select set_config('register.list_count_shard', ${String(Math.floor(Math.random() * 16))}, true)`.execute(
    trx,
  );
  await trx.deleteFrom('trainee_audits').where('provider_id', '=', providerId).execute();
  const trainees = await trx.deleteFrom('trainees').where('provider_id', '=', providerId).executeTakeFirst();
  const inbox = await trx
    .deleteFrom('event_inbox')
    .where('api', '=', 'register')
    .where('provider_id', '=', providerId)
    .where('environment', '=', environment)
    .executeTakeFirst();
  const events = await trx
    .deleteFrom('events')
    .where('api', '=', 'register')
    .where('provider_id', '=', providerId)
    .where('environment', '=', environment)
    .executeTakeFirst();
  const deliveries = await trx
    .deleteFrom('webhook_deliveries')
    .where('subscription_id', 'in', (eb) =>
      eb
        .selectFrom('webhook_subscriptions')
        .select('webhook_subscriptions.id')
        .where('api', '=', 'register')
        .where('provider_id', '=', providerId)
        .where('environment', '=', environment),
    )
    .executeTakeFirst();
  return {
    trainees: Number(trainees.numDeletedRows),
    events: Number(inbox.numDeletedRows) + Number(events.numDeletedRows),
    deliveries: Number(deliveries.numDeletedRows),
  };
}
