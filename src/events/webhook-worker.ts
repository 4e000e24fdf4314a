/**
 * Webhook delivery, on every instance. Two steps, both safe to run on any number of instances at once:
 *
 * 1. Fan-out: each enabled subscription's new events become delivery rows (the body rendered once, so every retry
 *    sends the same bytes), in position order, under the subscription's row lock (`FOR UPDATE SKIP LOCKED`: one
 *    instance does it, the others skip it); its cursor moves in the same transaction, so an event is fanned out
 *    exactly once and none is skipped.
 * 2. Delivery: an instance claims a subscription with a lease (`lease_owner`, `lease_until` = now + twice the total
 *    timeout), sends its oldest pending delivery, records the attempt, and goes on with the next while it is due.
 *    Only the lease holder sends, so two instances never send the same attempt, and deliveries of a subscription go
 *    in event order (a failing one holds the ones behind it back). An instance that dies mid-delivery leaves the
 *    attempt unrecorded and its lease runs out: another instance sends it again (at least once; the `webhook-id` is
 *    the event id, for de-duplication).
 *
 * Sharing: each attempt is bounded by WEBHOOK_TIMEOUT_MS whatever the receiver does (webhook-sender.ts); an instance
 * sends at most WEBHOOK_CONCURRENCY at once, at most WEBHOOK_CONCURRENCY_PER_OWNER of them for one owner (a provider
 * in an environment, or the operator's statistics subscriptions); due subscriptions are taken owner by owner (each
 * owner's most overdue first), and a claim gives its slot back after a time share. So one owner's slow or hostile
 * receivers delay its own deliveries, and another owner's next attempt waits at most for a free slot.
 *
 * A failed attempt is retried with exponential backoff and jitter (WEBHOOK_RETRY_BASE_MS doubling up to
 * WEBHOOK_RETRY_MAX_MS) until WEBHOOK_RETRY_WINDOW_MS after it was queued; then the delivery is `failed`, the
 * subscription disabled and a `webhook.disabled` event appended (the owner's other subscriptions and feed see it).
 *
 * Why not pg-boss or graphile-worker (`npm run bench:job-queues`, docs/architecture.md): pg-boss 10 and
 * graphile-worker 0.17 run on Node 20, but in the setups measured neither kept one subscriber's deliveries in order
 * across a retry (while one waits for its retry the next is sent), and in-order delivery per subscription is a
 * requirement here. The queue is a table with a lease per subscription.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import type { EventApiAdapters } from './api-adapter.js';
import { CoalescedTask } from './coalesced.js';
import type { EventHub } from './hub.js';
import { encodeCursor, readEventPage, type FeedScope, type StoredEvent } from './outbox-repository.js';
import { signatureHeader } from './webhooks.js';
import {
  claimSubscription,
  disableSubscription,
  dueSubscriptions,
  insertDeliveries,
  loadSubscription,
  lockEnabledSubscription,
  pendingDeliveries,
  recordAttempt,
  releaseSubscription,
  setSubscriptionCursor,
  subscriptionsBehind,
} from './webhook-repository.js';
import { sendWebhook, type AddressPolicy, type NetworkDeps } from './webhook-sender.js';

const FAN_OUT_PAGE = 500;
/** Deliveries one claim sends at most before the lease is given back (so other subscriptions get their turn). */
const DELIVERIES_PER_CLAIM = 50;
/**
 * The time share of one claim: once it has sent for this long it gives its slot back after the current attempt, and
 * the subscription queues again behind every other owner's first turn. So a receiver that answers slowly (up to the
 * total timeout per attempt) keeps its subscription's deliveries slow, never the others'.
 */
const CLAIM_TIME_SHARE_MS = 2000;
/** Candidates read per dispatch round beyond the free slots, so owners at their share can be skipped. */
const DUE_CANDIDATES = 100;
/** An attempt still running this long after its deadline counts as stuck (the watchdog's metric and warning). */
const STUCK_GRACE_MS = 5000;

type SubscriptionRow = Awaited<ReturnType<typeof loadSubscription>>;

function scopeOf(row: SubscriptionRow): FeedScope {
  return row.api === 'statistics'
    ? { api: 'statistics' }
    : { api: 'register', providerId: row.provider_id!, environment: row.environment! };
}

function bodyOf(apis: EventApiAdapters, row: SubscriptionRow, event: StoredEvent): string {
  return JSON.stringify(apis[row.api].webhookBody(event, encodeCursor(event.position), row.api_version));
}

/** Equal jitter on an exponential step: half the step plus a random part of the other half. */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random = Math.random): number {
  const step = Math.min(maxMs, baseMs * 2 ** Math.min(30, Math.max(0, attempts - 1)));
  return Math.round(step / 2 + random() * (step / 2));
}

export interface WebhookWorkerOptions {
  config: Config;
  hub: EventHub;
  network: NetworkDeps;
  policy: AddressPolicy;
  retentionDays: number;
  /** How each API's events read to its subscribers (the event system knows no API). */
  apis: EventApiAdapters;
  log: { warn(obj: object, msg: string): void };
}

export class WebhookWorker {
  readonly instance = randomUUID();
  private readonly rounds: CoalescedTask;
  private inFlight = 0;
  /** Slots taken per owner on this instance (WEBHOOK_CONCURRENCY_PER_OWNER each at most). */
  private readonly ownerSlots = new Map<string, number>();
  /** Attempts being sent and when each started (the watchdog's view). */
  private readonly attempts = new Map<symbol, number>();
  private stuckReported = 0;
  private readonly sending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private unsubscribe: () => void = () => {};
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly options: WebhookWorkerOptions,
  ) {
    this.rounds = new CoalescedTask(
      () => this.round(),
      (error) => options.log.warn({ err: error.message }, 'webhook worker round failed'),
    );
  }

  start(): void {
    this.unsubscribe = this.options.hub.subscribe(() => this.wake());
    this.timer = setInterval(() => this.wake(), this.options.config.WEBHOOK_POLL_MS);
    this.timer.unref();
    this.watchdog = setInterval(() => this.watch(), Math.max(1000, this.options.config.WEBHOOK_TIMEOUT_MS));
    this.watchdog.unref();
    this.wake();
  }

  /** What /metrics shows: slots in use and attempts past their deadline (never expected: each attempt is bounded). */
  status(): { inFlight: number; attempts: number; stuck: number } {
    const limit = this.options.config.WEBHOOK_TIMEOUT_MS + STUCK_GRACE_MS;
    const now = Date.now();
    let stuck = 0;
    for (const started of this.attempts.values()) if (now - started > limit) stuck += 1;
    return { inFlight: this.inFlight, attempts: this.attempts.size, stuck };
  }

  private watch(): void {
    const { stuck } = this.status();
    if (stuck > 0 && stuck !== this.stuckReported)
      this.options.log.warn({ stuck }, 'webhook attempts are running past their deadline');
    this.stuckReported = stuck;
  }

  wake(): void {
    this.rounds.wake();
  }

  private async round(): Promise<void> {
    await this.fanOut();
    await this.dispatch();
  }

  /** Queues a delivery per new event of each subscription (one round; the worker runs it before sending). */
  async fanOut(): Promise<void> {
    for (const id of await subscriptionsBehind(this.db)) {
      await this.db.transaction().execute(async (trx) => {
        const row = await lockEnabledSubscription(trx, id);
        if (!row) return;
        const filter = { types: row.event_types, resourceId: row.data_set_id ?? undefined };
        const page = await readEventPage(
          trx,
          scopeOf(row),
          row.cursor,
          filter,
          FAN_OUT_PAGE,
          this.options.retentionDays,
        );
        await insertDeliveries(
          trx,
          page.events.map((event) => ({
            subscription_id: row.id,
            event_position: event.position,
            event_id: event.id,
            event_type: event.type,
            body: bodyOf(this.options.apis, row, event),
            next_attempt_at: new Date(),
          })),
        );
        const cursor = page.hasMore ? page.next : Math.max(page.next, page.horizon);
        await setSubscriptionCursor(trx, row.id, cursor);
        // More to fan out: one more round after this one.
        if (page.hasMore) this.wake();
      });
    }
  }

  private async dispatch(): Promise<void> {
    const { config } = this.options;
    const perOwner = Math.min(config.WEBHOOK_CONCURRENCY_PER_OWNER, config.WEBHOOK_CONCURRENCY);
    if (this.inFlight >= config.WEBHOOK_CONCURRENCY) return;
    for (const { id, owner } of await dueSubscriptions(
      this.db,
      config.WEBHOOK_CONCURRENCY - this.inFlight + DUE_CANDIDATES,
    )) {
      if (this.closed || this.inFlight >= config.WEBHOOK_CONCURRENCY) break;
      // An owner at its share waits for one of its own slots; the other owners' subscriptions go first.
      if ((this.ownerSlots.get(owner) ?? 0) >= perOwner) continue;
      const leaseMs = 2 * (config.WEBHOOK_TIMEOUT_MS + config.WEBHOOK_CONNECT_TIMEOUT_MS);
      if (!(await claimSubscription(this.db, id, this.instance, leaseMs / 1000))) continue;
      this.take(owner);
      const sending: Promise<void> = this.deliverClaimed(id)
        .catch((error: Error) =>
          this.options.log.warn({ err: error.message, subscription: id }, 'webhook delivery failed'),
        )
        .finally(async () => {
          // The slot is given back first, whatever happened, before anything that could fail or wait.
          this.give(owner);
          this.sending.delete(sending);
          await releaseSubscription(this.db, id, this.instance).catch(() => {});
          this.wake();
        });
      this.sending.add(sending);
    }
  }

  private take(owner: string): void {
    this.inFlight += 1;
    this.ownerSlots.set(owner, (this.ownerSlots.get(owner) ?? 0) + 1);
  }

  private give(owner: string): void {
    this.inFlight -= 1;
    const left = (this.ownerSlots.get(owner) ?? 1) - 1;
    if (left <= 0) this.ownerSlots.delete(owner);
    else this.ownerSlots.set(owner, left);
  }

  /**
   * Sends the subscription's due deliveries in order while this instance holds its lease: the subscription and a
   * batch of its oldest pending deliveries read once, then one statement per attempt records it (only while the
   * lease is still ours: otherwise another instance has taken over and sends it again).
   */
  private async deliverClaimed(id: string): Promise<void> {
    const { config } = this.options;
    const subscription = await loadSubscription(this.db, id);
    if (!subscription.enabled || subscription.lease_owner !== this.instance) return;
    const due = await pendingDeliveries(this.db, id, DELIVERIES_PER_CLAIM);
    const leaseSeconds = (2 * (config.WEBHOOK_TIMEOUT_MS + config.WEBHOOK_CONNECT_TIMEOUT_MS)) / 1000;
    const claimed = Date.now();
    for (const delivery of due) {
      if (this.closed || delivery.next_attempt_at > new Date()) return;
      // Its time share used: the slot goes back, and the subscription queues behind the other owners again.
      if (Date.now() - claimed >= CLAIM_TIME_SHARE_MS) return;
      const now = new Date();
      const secrets = [subscription.secret];
      if (
        subscription.previous_secret &&
        subscription.previous_secret_expires_at &&
        subscription.previous_secret_expires_at > now
      )
        secrets.push(subscription.previous_secret);
      const attempt = Symbol(id);
      this.attempts.set(attempt, Date.now());
      const result = await sendWebhook({
        url: subscription.url,
        body: delivery.body,
        headers: {
          'webhook-id': delivery.event_id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': signatureHeader(secrets, delivery.event_id, now, delivery.body),
        },
        connectTimeoutMs: config.WEBHOOK_CONNECT_TIMEOUT_MS,
        totalTimeoutMs: config.WEBHOOK_TIMEOUT_MS,
        policy: this.options.policy,
        network: this.options.network,
      }).finally(() => this.attempts.delete(attempt));
      const attempts = delivery.attempts + 1;
      const givenUp = !result.ok && Date.now() - delivery.created_at.getTime() >= config.WEBHOOK_RETRY_WINDOW_MS;
      const status = result.ok ? 'succeeded' : givenUp ? 'failed' : 'pending';
      const next =
        result.ok || givenUp
          ? now
          : new Date(Date.now() + retryDelayMs(attempts, config.WEBHOOK_RETRY_BASE_MS, config.WEBHOOK_RETRY_MAX_MS));
      const recorded = await recordAttempt(this.db, {
        subscriptionId: id,
        instance: this.instance,
        leaseSeconds,
        deliveryId: delivery.id,
        status,
        attempts,
        at: now,
        httpStatus: result.status,
        error: result.error?.slice(0, 500) ?? null,
        nextAttemptAt: next,
      });
      if (!recorded) return;
      if (givenUp) await this.disable(subscription, result.error ?? 'failed');
      if (!result.ok) return;
    }
  }

  /**
   * After sustained failure: the subscription is disabled and its API's adapter records it in the same transaction
   * (the register appends a `webhook.disabled` event for the provider).
   * A statistics subscription gets no event (the statistics feed is public and would show the subscriber's URL): the
   * operator sees the reason in `stats-admin webhooks list`, and the log says it.
   */
  private async disable(subscription: SubscriptionRow, lastError: string): Promise<void> {
    const minutes = Math.round(this.options.config.WEBHOOK_RETRY_WINDOW_MS / 60_000);
    const reason = `Deliveries failed for ${minutes} minutes (last: ${lastError}); re-enable the subscription to resume.`;
    await this.db.transaction().execute(async (trx) => {
      await disableSubscription(trx, subscription.id, reason);
      await this.options.apis[subscription.api].subscriptionDisabled?.(trx, subscription, reason);
    });
    if (subscription.api === 'statistics')
      this.options.log.warn({ subscription: subscription.id, reason }, 'statistics webhook subscription disabled');
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    if (this.timer) clearInterval(this.timer);
    if (this.watchdog) clearInterval(this.watchdog);
    await this.rounds.stop();
    await Promise.all([...this.sending]);
  }
}
