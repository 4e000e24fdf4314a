/**
 * Webhook subscriptions: create (the signing secret shown once), list, read, change (URL, types, re-enable),
 * delete, rotate the secret (the old one keeps signing alongside for WEBHOOK_SECRET_OVERLAP_HOURS), the delivery
 * log, and manual redelivery. A subscription receives the events committed after it was made.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Config } from '../config.js';
import type { Db, Executor } from '../db/database.js';
import { NotFoundError, UnprocessableError } from '../errors.js';
import { eventLogState, type FeedScope } from './outbox-repository.js';
import {
  countSubscriptions,
  deleteSubscriptionRow,
  findDeliverySubscription,
  findSubscription,
  insertSubscription,
  listDeliveryRows,
  listSubscriptionRows,
  lockOwner,
  requeueDelivery,
  requeueFailedDeliveries,
  updateSubscription,
} from './webhook-repository.js';
import {
  checkWebhookUrl,
  resolveTarget,
  systemNetwork,
  WebhookTargetError,
  type AddressPolicy,
  type NetworkDeps,
} from './webhook-sender.js';

/** Subscriptions one owner (a provider in an environment) may have. */
export const MAX_SUBSCRIPTIONS = 10;
/**
 * Statistics subscriptions in all (the operator adds them for every analyst, so more than a provider's; still
 * bounded, since each one costs a delivery row and a request per event).
 */
export const MAX_STATISTICS_SUBSCRIPTIONS = 100;

export interface SubscriptionOwner {
  scope: FeedScope;
  /** Register subscriptions: the API version whose field names deliveries use. */
  apiVersion?: string;
}

/** The operator's statistics subscriptions (`npm run stats-admin -- webhooks`): the statistics API has no owners. */
export const STATISTICS_OWNER: SubscriptionOwner = { scope: { api: 'statistics' } };

export interface SubscriptionInput {
  url?: unknown;
  event_types?: unknown;
  enabled?: unknown;
}

export interface WebhookSettings {
  policy: AddressPolicy;
  network: NetworkDeps;
  secretOverlapHours: number;
}

/** The deployment's webhook settings: the app's and the operator commands' alike. */
export function webhookSettings(config: Config, network: NetworkDeps = systemNetwork): WebhookSettings {
  return {
    policy: {
      allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_ADDRESSES,
      allowHttp: config.REGISTER_ENVIRONMENT !== 'production',
    },
    network,
    secretOverlapHours: config.WEBHOOK_SECRET_OVERLAP_HOURS,
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The `webhook-signature` header: signed with the current secret, and with the previous one while it overlaps. */
export function signatureHeader(secrets: string[], eventId: string, at: Date, body: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(eventId, at, body)).join(' ');
}

function view(row: {
  id: string;
  url: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  created_at: Date;
  api_version: string | null;
  previous_secret_expires_at: Date | null;
}) {
  return {
    id: row.id,
    url: row.url,
    event_types: row.event_types,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    api_version: row.api_version,
    previous_secret_expires_at:
      row.previous_secret_expires_at && row.previous_secret_expires_at > new Date()
        ? row.previous_secret_expires_at.toISOString()
        : null,
    created_at: row.created_at.toISOString(),
  };
}
export type SubscriptionView = ReturnType<typeof view>;

async function checkedUrl(raw: unknown, settings: WebhookSettings): Promise<string> {
  if (typeof raw !== 'string' || raw.trim() === '')
    throw new UnprocessableError(
      settings.policy.allowHttp ? 'url: required, an http or https URL' : 'url: required, an https URL',
    );
  try {
    const url = checkWebhookUrl(raw.trim(), settings.policy);
    await resolveTarget(url, settings.policy, settings.network);
    return url.toString();
  } catch (error) {
    if (error instanceof WebhookTargetError) throw new UnprocessableError(`url: ${error.message}`);
    throw error;
  }
}

function checkedTypes(raw: unknown, known: readonly string[]): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw) || raw.some((t) => typeof t !== 'string'))
    throw new UnprocessableError('event_types: a list of event types (empty: all)');
  const types = raw as string[];
  const unknown = types.filter((t) => !known.includes(t));
  if (unknown.length > 0)
    throw new UnprocessableError(
      `event_types: unknown ${unknown.map((t) => `"${t}"`).join(', ')}; the types are ${known.join(', ')}`,
    );
  return [...new Set(types)];
}

/**
 * `dataSetId` (statistics subscriptions only; that it names a data set is checked by the caller's command, as this
 * module knows no API's resources): only the events of that data set and its versions.
 */
export async function createSubscription(
  db: Db,
  owner: SubscriptionOwner,
  input: SubscriptionInput,
  knownTypes: readonly string[],
  settings: WebhookSettings,
  dataSetId: string | null = null,
): Promise<SubscriptionView & { secret: string }> {
  const url = await checkedUrl(input.url, settings);
  const types = checkedTypes(input.event_types, knownTypes);
  if (dataSetId !== null) {
    if (owner.scope.api !== 'statistics')
      throw new UnprocessableError('data_set_id: only statistics subscriptions follow one data set');
  }
  const secret = newSigningSecret();
  const limit = owner.scope.api === 'statistics' ? MAX_STATISTICS_SUBSCRIPTIONS : MAX_SUBSCRIPTIONS;
  return db.transaction().execute(async (trx) => {
    // Counted under a lock of the owner's key, so two concurrent creates cannot both pass the limit.
    await lockOwner(trx, owner.scope);
    if ((await countSubscriptions(trx, owner.scope)) >= limit)
      throw new UnprocessableError(`At most ${limit} webhook subscriptions; delete one first.`);
    const scope = owner.scope;
    const row = await insertSubscription(trx, {
      api: scope.api,
      provider_id: scope.api === 'register' ? scope.providerId : null,
      environment: scope.api === 'register' ? scope.environment : null,
      api_version: owner.apiVersion ?? null,
      url,
      event_types: types,
      secret,
      previous_secret: null,
      previous_secret_expires_at: null,
      disabled_reason: null,
      cursor: (await eventLogState(trx)).lastPosition,
      lease_owner: null,
      lease_until: null,
      data_set_id: dataSetId,
    });
    return { ...view(row), secret };
  });
}

async function findOwned(db: Executor, owner: SubscriptionOwner, id: string) {
  if (!UUID.test(id)) throw new NotFoundError('Webhook subscription not found');
  const row = await findSubscription(db, owner.scope, id);
  if (!row) throw new NotFoundError('Webhook subscription not found');
  return row;
}

export async function listSubscriptions(db: Executor, owner: SubscriptionOwner): Promise<SubscriptionView[]> {
  const rows = await listSubscriptionRows(db, owner.scope);
  return rows.map(view);
}

/** The operator's statistics subscriptions, with the data set each follows (null: every data set). */
export async function listStatisticsSubscriptions(
  db: Executor,
): Promise<(SubscriptionView & { data_set_id: string | null })[]> {
  const rows = await listSubscriptionRows(db, STATISTICS_OWNER.scope);
  return rows.map((row) => ({ ...view(row), data_set_id: row.data_set_id }));
}

export async function getSubscription(db: Executor, owner: SubscriptionOwner, id: string): Promise<SubscriptionView> {
  return view(await findOwned(db, owner, id));
}

/** Changes the URL or types, or re-enables a disabled subscription (its failed delivery is then tried again first). */
export async function changeSubscription(
  db: Db,
  owner: SubscriptionOwner,
  id: string,
  input: SubscriptionInput,
  knownTypes: readonly string[],
  settings: WebhookSettings,
): Promise<SubscriptionView> {
  const existing = await findOwned(db, owner, id);
  const patch: { url?: string; event_types?: string[]; enabled?: boolean; disabled_reason?: null } = {};
  if (input.url !== undefined) patch.url = await checkedUrl(input.url, settings);
  if (input.event_types !== undefined) patch.event_types = checkedTypes(input.event_types, knownTypes);
  if (input.enabled !== undefined) {
    if (typeof input.enabled !== 'boolean') throw new UnprocessableError('enabled: true or false');
    patch.enabled = input.enabled;
    if (input.enabled) patch.disabled_reason = null;
  }
  return db.transaction().execute(async (trx) => {
    if (patch.enabled && !existing.enabled) {
      await requeueFailedDeliveries(trx, id);
    }
    const row = await updateSubscription(trx, id, patch);
    return view(row);
  });
}

export async function deleteSubscription(db: Executor, owner: SubscriptionOwner, id: string): Promise<void> {
  await findOwned(db, owner, id);
  await deleteSubscriptionRow(db, id);
}

/** A new secret (shown once); the current one keeps signing too until the overlap ends, so receivers can switch. */
export async function rotateSecret(db: Executor, owner: SubscriptionOwner, id: string, settings: WebhookSettings) {
  const existing = await findOwned(db, owner, id);
  const secret = newSigningSecret();
  const expires = new Date(Date.now() + settings.secretOverlapHours * 3600_000);
  const row = await updateSubscription(db, id, {
    secret,
    previous_secret: existing.secret,
    previous_secret_expires_at: expires,
  });
  return { ...view(row), secret };
}

export interface DeliveryView {
  id: number;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  last_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

/** The subscription's deliveries, newest first (at most `limit`, before the delivery id `before`). */
export async function listDeliveries(
  db: Executor,
  owner: SubscriptionOwner,
  id: string,
  limit: number,
  before?: number,
): Promise<DeliveryView[]> {
  await findOwned(db, owner, id);
  const rows = await listDeliveryRows(db, id, limit, before);
  return rows.map((row) => ({
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    last_attempt_at: row.last_attempt_at?.toISOString() ?? null,
    last_status: row.last_status,
    last_error: row.last_error,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
  }));
}

/** Sends a delivery again (same event id, so a receiver that has it already can drop it). */
export async function redeliver(db: Executor, owner: SubscriptionOwner, id: string, deliveryId: number): Promise<void> {
  await findOwned(db, owner, id);
  if (!(await requeueDelivery(db, id, deliveryId))) throw new NotFoundError('Delivery not found');
}

/** Sends a delivery of one of the owner's subscriptions again, named by the delivery's id alone; returns the subscription's id. */
export async function redeliverById(db: Executor, owner: SubscriptionOwner, deliveryId: number): Promise<string> {
  const subscriptionId = await findDeliverySubscription(db, owner.scope, deliveryId);
  if (!subscriptionId || !(await requeueDelivery(db, subscriptionId, deliveryId)))
    throw new NotFoundError(`Delivery ${deliveryId} not found`);
  return subscriptionId;
}
