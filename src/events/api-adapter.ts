/**
 * What an API gives the event system (feed, stream, outbox, sequencer, hub, webhook delivery), which knows neither
 * API: each API imports src/events, never the reverse. The composition root (src/app.ts) hands each API's adapter to
 * the events plugin; an API's routes hand its feed renderer to `serveFeed` (src/events/feed.ts).
 */
import type { Executor } from '../db/database.js';
import type { StoredEvent } from './outbox-repository.js';
import type { EventApi } from './tables.js';

/** The subscription being disabled after sustained failure, as an API's adapter needs it. */
export interface DisabledSubscription {
  id: string;
  url: string;
  provider_id: number | null;
  environment: 'production' | 'sandbox' | null;
}

export interface EventApiAdapter {
  /** A webhook delivery's body: the event as a subscriber reads it (`apiVersion`: the subscription's, for a versioned API). */
  webhookBody(event: StoredEvent, cursor: string, apiVersion: string | null): Record<string, unknown>;
  /** Runs in the transaction that disables one of the API's subscriptions (e.g. appends an event saying so). */
  subscriptionDisabled?(trx: Executor, subscription: DisabledSubscription, reason: string): Promise<unknown>;
}

/** One adapter per API whose events the log holds. */
export type EventApiAdapters = Record<EventApi, EventApiAdapter>;
