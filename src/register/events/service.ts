/**
 * The register's change events: what each write path appends (one call in its transaction, after the write), and how an event
 * reads in each API version. Payloads are stored with canonical (v2026.1) field names; a client reading from
 * `/api/v2025.0` gets v2025.0's names (`withdraw_date`, `lead_partner_urn`, …) through the version adapter table,
 * and fields its version does not know are left out.
 */
import type { Executor } from '../../db/database.js';
import type { EventApiAdapter } from '../../events/api-adapter.js';
import { appendEvent, type NewEvent, type StoredEvent } from '../../events/outbox-repository.js';
import type { RegisterEnvironment } from '../tokens.js';
import { toVersionOutput, VERSION_ADAPTERS, type RegisterVersion } from '../versions/index.js';

export const REGISTER_EVENT_TYPES = [
  'trainee.created',
  'trainee.updated',
  'trainee.state_changed',
  'placement.created',
  'placement.updated',
  'placement.deleted',
  'degree.created',
  'degree.updated',
  'degree.deleted',
  'webhook.disabled',
] as const;
export type RegisterEventType = (typeof REGISTER_EVENT_TYPES)[number];

/** Why a trainee's state changed: the provider's actions and the operator's commands. */
export type StateChangeReason = 'deferral' | 'withdrawal' | 'recommendation' | 'trn_received' | 'award';

/** Whose event: the provider, and the environment the writing instance serves. */
export interface RegisterEventOwner {
  providerId: number;
  environment: RegisterEnvironment;
}

/** Trainee fields that change with every write and say nothing about what changed. */
const BOOKKEEPING = new Set(['updated_at', 'placements', 'degrees']);

/** Canonical names of the fields whose values differ between two canonical trainee bodies. */
export function changedTraineeFields(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  return Object.keys(after).filter(
    (key) => !BOOKKEEPING.has(key) && JSON.stringify(before[key]) !== JSON.stringify(after[key]),
  );
}

/** The owner of a register request's events. */
export function eventOwner(context: {
  provider: { id: number };
  environment: RegisterEnvironment;
}): RegisterEventOwner {
  return { providerId: context.provider.id, environment: context.environment };
}

export function appendTraineeCreated(trx: Executor, owner: RegisterEventOwner, trainee: { id: string; state: string }) {
  return appendEvent(trx, traineeCreatedEvent(owner, trainee));
}

/** A trainee's `trainee.created` event (the create appends it in its nested records' statement: insertNestedRecords). */
export function traineeCreatedEvent(owner: RegisterEventOwner, trainee: { id: string; state: string }): NewEvent {
  return {
    api: 'register',
    ...owner,
    type: 'trainee.created',
    resourceType: 'trainee',
    resourceId: trainee.id,
    payload: { trainee_id: trainee.id, state: trainee.state },
  };
}

/** A change of the trainee's own fields (`changedFields`, canonical names); appended with its audit row. */
export function traineeUpdatedEvent(owner: RegisterEventOwner, traineeId: string, changedFields: string[]): NewEvent {
  return {
    api: 'register',
    ...owner,
    type: 'trainee.updated',
    resourceType: 'trainee',
    resourceId: traineeId,
    payload: { trainee_id: traineeId, changed_fields: changedFields },
  };
}

/**
 * A state change (`from` may equal `to`: a TRN received while deferred); `changes` are the canonical columns written.
 * Appended with its audit row.
 */
export function traineeStateChangedEvent(
  owner: RegisterEventOwner,
  traineeId: string,
  change: { from: string; to: string; reason: StateChangeReason; changes: Record<string, unknown> },
): NewEvent {
  return {
    api: 'register',
    ...owner,
    type: 'trainee.state_changed',
    resourceType: 'trainee',
    resourceId: traineeId,
    payload: { trainee_id: traineeId, ...change },
  };
}

/**
 * A placement or degree write, from the audit action the write records (`placement.create`, `degree.delete`, …) and
 * the record before and after (as the API shows it; null before a create and after a delete). Appended with its audit
 * row.
 */
export function nestedRecordEvent(
  owner: RegisterEventOwner,
  traineeId: string,
  action: string,
  before: unknown,
  after: unknown,
): NewEvent {
  const [kind, verb] = action.split('.') as ['placement' | 'degree', 'create' | 'update' | 'delete'];
  const record = (after ?? before) as Record<string, unknown>;
  const id = String(record[`${kind}_id`]);
  return {
    api: 'register',
    ...owner,
    type: `${kind}.${verb}d`,
    resourceType: kind,
    resourceId: id,
    parentId: traineeId,
    payload: { trainee_id: traineeId, [`${kind}_id`]: id, [kind]: after ?? null },
  };
}

/** An event's payload in `version`'s field names (fields the version does not know left out). */
export function registerPayloadInVersion(
  event: Pick<StoredEvent, 'type' | 'payload'>,
  version: RegisterVersion,
): Record<string, unknown> {
  const adapter = VERSION_ADAPTERS[version];
  const payload = { ...event.payload };
  if (Array.isArray(payload.changed_fields)) {
    payload.changed_fields = (payload.changed_fields as string[])
      .filter((name) => !adapter.unknownFields.includes(name))
      .map((name) => adapter.outputNames[name] ?? name);
  }
  if (payload.changes && typeof payload.changes === 'object')
    payload.changes = toVersionOutput(version, payload.changes as Record<string, unknown>);
  return payload;
}

/** A register event as a client of `version` reads it (feed, stream and webhook alike). */
export function registerEventBody(
  event: StoredEvent,
  version: RegisterVersion,
  cursor: string,
): Record<string, unknown> {
  return {
    id: event.id,
    cursor,
    type: event.type,
    occurred_at: event.occurred_at.toISOString(),
    environment: event.environment,
    resource: {
      type: event.resource_type,
      id: event.resource_id,
      ...(event.parent_id ? { trainee_id: event.parent_id } : {}),
    },
    data: registerPayloadInVersion(event, version),
  };
}

/** How the register's events reach its webhook subscribers (given to the event system by src/app.ts). */
export const registerEventApi: EventApiAdapter = {
  // Deliveries use the field names of the version the subscription was made with.
  webhookBody: (event, cursor, apiVersion) => registerEventBody(event, apiVersion as RegisterVersion, cursor),
  // The provider's other subscriptions and its feed see that one of its subscriptions was disabled, and why.
  subscriptionDisabled: (trx, subscription, reason) =>
    appendEvent(trx, {
      api: 'register',
      type: 'webhook.disabled',
      providerId: subscription.provider_id,
      environment: subscription.environment,
      resourceType: 'webhook',
      resourceId: subscription.id,
      payload: { webhook_id: subscription.id, url: subscription.url, reason },
    }),
};
