/** The SQL of webhook subscriptions and their delivery log (the rules are in webhooks.ts, fan-out and sending in webhook-worker.ts). */
import { sql, type Insertable, type Updateable } from 'kysely';
import type { Executor } from '../db/database.js';
import type { FeedScope } from './outbox-repository.js';
import type { WebhookDeliveriesTable, WebhookSubscriptionsTable } from './tables.js';

/** What a subscription's answers show. */
const COLUMNS = [
  'id',
  'url',
  'event_types',
  'enabled',
  'disabled_reason',
  'created_at',
  'api_version',
  'previous_secret_expires_at',
  'data_set_id',
] as const;

function ownedBy(scope: FeedScope) {
  return scope.api === 'statistics'
    ? sql<boolean>`api = 'statistics'`
    : sql<boolean>`api = 'register' AND provider_id = ${scope.providerId} AND environment = ${scope.environment}`;
}

/** Holds the owner's key until the transaction ends (two concurrent creates cannot both pass the limit). */
export async function lockOwner(trx: Executor, scope: FeedScope): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${`webhooks:${JSON.stringify(scope)}`}))`.execute(trx);
}

export async function countSubscriptions(db: Executor, scope: FeedScope): Promise<number> {
  const { count } = await db
    .selectFrom('webhook_subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where(ownedBy(scope))
    .executeTakeFirstOrThrow();
  return Number(count);
}

export async function insertSubscription(db: Executor, row: Insertable<WebhookSubscriptionsTable>) {
  return db.insertInto('webhook_subscriptions').values(row).returning(COLUMNS).executeTakeFirstOrThrow();
}

/** The owner's subscription with this id (every column), or undefined. */
export async function findSubscription(db: Executor, scope: FeedScope, id: string) {
  return db
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where(ownedBy(scope))
    .executeTakeFirst();
}

export async function listSubscriptionRows(db: Executor, scope: FeedScope) {
  return db.selectFrom('webhook_subscriptions').select(COLUMNS).where(ownedBy(scope)).orderBy('created_at').execute();
}

export async function updateSubscription(db: Executor, id: string, patch: Updateable<WebhookSubscriptionsTable>) {
  return db
    .updateTable('webhook_subscriptions')
    .set(patch)
    .where('id', '=', id)
    .returning(COLUMNS)
    .executeTakeFirstOrThrow();
}

export async function deleteSubscriptionRow(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('webhook_subscriptions').where('id', '=', id).execute();
}

/** A re-enabled subscription's failed deliveries are due again now. */
export async function requeueFailedDeliveries(db: Executor, subscriptionId: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: new Date(), created_at: new Date() })
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'failed')
    .execute();
}

/** The id of the owner's subscription that has the delivery `deliveryId`, or undefined. */
export async function findDeliverySubscription(
  db: Executor,
  scope: FeedScope,
  deliveryId: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_subscriptions', 'webhook_subscriptions.id', 'd.subscription_id')
    .select('d.subscription_id')
    .where('d.id', '=', deliveryId)
    .where(ownedBy(scope))
    .executeTakeFirst();
  return row?.subscription_id;
}

/** One delivery due again now; false when the subscription has no delivery with this id. */
export async function requeueDelivery(db: Executor, subscriptionId: string, deliveryId: number): Promise<boolean> {
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: new Date(), created_at: new Date() })
    .where('subscription_id', '=', subscriptionId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/** A subscription's deliveries, newest first (at most `limit`, before the delivery id `before`). */
export async function listDeliveryRows(db: Executor, subscriptionId: string, limit: number, before?: number) {
  let query = db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .orderBy('id', 'desc')
    .limit(limit);
  if (before !== undefined) query = query.where('id', '<', before);
  return query.execute();
}

/** A subscription, every column (the worker's view). */
export async function loadSubscription(db: Executor, id: string) {
  return db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Enabled subscriptions whose cursor is behind the event log: events to fan out. */
export async function subscriptionsBehind(db: Executor): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM webhook_subscriptions
    WHERE enabled AND cursor < (SELECT last_position FROM event_log_state)`.execute(db);
  return rows.map((row) => row.id);
}

/** The subscription while enabled, locked for the transaction; undefined when disabled, gone or locked by another. */
export async function lockEnabledSubscription(trx: Executor, id: string) {
  return trx
    .selectFrom('webhook_subscriptions')
    .selectAll()
    .where('id', '=', id)
    .where('enabled', '=', true)
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
}

/** Queues deliveries; one already queued for the same event is left as it is. */
export async function insertDeliveries(trx: Executor, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await trx
    .insertInto('webhook_deliveries')
    .values(rows)
    .onConflict((oc) => oc.columns(['subscription_id', 'event_position']).doNothing())
    .execute();
}

export async function setSubscriptionCursor(trx: Executor, id: string, cursor: number): Promise<void> {
  await trx.updateTable('webhook_subscriptions').set({ cursor }).where('id', '=', id).execute();
}

/** A subscription ready to send, and its owner (the provider in its environment, or the operator's statistics ones). */
export interface DueSubscription {
  id: string;
  owner: string;
}

/**
 * Enabled, unleased subscriptions whose oldest pending delivery is due (at most `limit`), taking turns between owners:
 * every owner's most overdue subscription first, then every owner's second, and so on. So an owner with many
 * overdue subscriptions (slow receivers, a burst of events) is never ahead of another owner's first one.
 */
export async function dueSubscriptions(db: Executor, limit: number): Promise<DueSubscription[]> {
  const { rows } = await sql<DueSubscription>`
    SELECT id, owner FROM (
      SELECT s.id, concat_ws(':', s.api, s.provider_id, s.environment) AS owner, head.next_attempt_at,
        row_number() OVER (PARTITION BY s.api, s.provider_id, s.environment ORDER BY head.next_attempt_at) AS turn
      FROM webhook_subscriptions s
      JOIN LATERAL (
        SELECT next_attempt_at FROM webhook_deliveries d
        WHERE d.subscription_id = s.id AND d.status = 'pending' ORDER BY d.event_position LIMIT 1
      ) head ON true
      WHERE s.enabled AND (s.lease_until IS NULL OR s.lease_until < now()) AND head.next_attempt_at <= now()
    ) due
    ORDER BY turn, next_attempt_at LIMIT ${limit}`.execute(db);
  return rows;
}

/** Takes the subscription's lease for `instance` unless another instance holds it; true when taken. */
export async function claimSubscription(
  db: Executor,
  id: string,
  instance: string,
  leaseSeconds: number,
): Promise<boolean> {
  const claimed = await sql<{ id: string }>`
    UPDATE webhook_subscriptions SET lease_owner = ${instance}, lease_until = now() + make_interval(secs => ${leaseSeconds})
    WHERE id = ${id} AND enabled AND (lease_until IS NULL OR lease_until < now()) RETURNING id`.execute(db);
  return claimed.rows.length > 0;
}

/** Gives the lease back, if `instance` still holds it. */
export async function releaseSubscription(db: Executor, id: string, instance: string): Promise<void> {
  await sql`UPDATE webhook_subscriptions SET lease_owner = NULL, lease_until = NULL WHERE id = ${id} AND lease_owner = ${instance}`.execute(
    db,
  );
}

/** The subscription's oldest pending deliveries, in event order. */
export async function pendingDeliveries(db: Executor, subscriptionId: string, limit: number) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'pending')
    .orderBy('event_position')
    .limit(limit)
    .execute();
}

export interface DeliveryAttempt {
  subscriptionId: string;
  instance: string;
  leaseSeconds: number;
  deliveryId: number;
  status: string;
  attempts: number;
  at: Date;
  httpStatus: number | null;
  error: string | null;
  nextAttemptAt: Date;
}

/** Records an attempt and extends the lease in one statement, only while `instance` holds the lease; true when recorded. */
export async function recordAttempt(db: Executor, attempt: DeliveryAttempt): Promise<boolean> {
  const recorded = await sql<{ id: number }>`
    WITH lease AS (
      UPDATE webhook_subscriptions SET lease_until = now() + make_interval(secs => ${attempt.leaseSeconds})
      WHERE id = ${attempt.subscriptionId} AND lease_owner = ${attempt.instance} RETURNING id
    )
    UPDATE webhook_deliveries SET status = ${attempt.status}, attempts = ${attempt.attempts}, last_attempt_at = ${attempt.at}, last_status = ${attempt.httpStatus},
      last_error = ${attempt.error}, next_attempt_at = ${attempt.nextAttemptAt}
    WHERE id = ${attempt.deliveryId} AND EXISTS (SELECT 1 FROM lease) RETURNING id`.execute(db);
  return recorded.rows.length > 0;
}

export async function disableSubscription(trx: Executor, id: string, reason: string): Promise<void> {
  await trx
    .updateTable('webhook_subscriptions')
    .set({ enabled: false, disabled_reason: reason })
    .where('id', '=', id)
    .execute();
}

/**
 * Deletes deliveries (their bodies with them) that ended (succeeded or failed) more than `days` ago; pending ones are
 * kept whatever their age. Returns how many were deleted.
 */
export async function purgeDeliveries(db: Executor, days: number): Promise<number> {
  const deleted = await sql`
    DELETE FROM webhook_deliveries
    WHERE status <> 'pending' AND coalesce(last_attempt_at, created_at) < now() - make_interval(days => ${days})`.execute(
    db,
  );
  return Number(deleted.numAffectedRows ?? 0n);
}
