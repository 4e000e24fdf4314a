/**
 * One per instance: a LISTEN connection on the events channel and the newest events, read once per wake-up and
 * handed to every live stream (and the webhook dispatcher) in memory. 500 streams cost one query per commit burst,
 * not 500. A stream that is behind (resuming from a cursor) reads its own pages until it reaches the hub's position.
 * Notifications can be lost while the listener reconnects, so the hub also reads every `pollMs`.
 */
import pg from 'pg';
import type { Db } from '../db/database.js';
import { CoalescedTask } from './coalesced.js';
import { eventLogState, listenForEventBatches, readEventsAfter, type StoredEvent } from './outbox-repository.js';

/** A run of consecutive positions `(from, to]` and the events in it (all of them, every scope). */
export interface EventBatch {
  from: number;
  to: number;
  events: StoredEvent[];
}

export type BatchListener = (batch: EventBatch) => void;

const BATCH_LIMIT = 1000;

export interface EventHubOptions {
  /** Connection settings of the LISTEN connection (the primary's); none: polling only. */
  listenConnection?: pg.ClientConfig;
  pollMs: number;
  log: { warn(obj: object, msg: string): void };
}

export class EventHub {
  private position = -1;
  private readonly listeners = new Set<BatchListener>();
  private readonly reads: CoalescedTask;
  private client: pg.Client | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private reconnectDelay = 100;
  private reconnecting = false;
  /** The LISTEN connection being made, if one is (ended by close, so that none is left behind). */
  private connecting: pg.Client | undefined;

  constructor(
    private readonly db: Db,
    private readonly options: EventHubOptions,
  ) {
    this.reads = new CoalescedTask(
      () => this.readNew(),
      (error) => options.log.warn({ err: error.message }, 'event hub could not read new events'),
    );
  }

  /** The last position handed to listeners. */
  get current(): number {
    return this.position;
  }

  start(): void {
    this.wake();
    // Not awaited: an instance's start (and its first answers) does not wait for a connection that only speeds up
    // delivery; `listen` reads what was committed meanwhile once it listens.
    if (this.options.listenConnection) this.listen().catch((error: Error) => this.reconnectLater(error));
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
  }

  subscribe(listener: BatchListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads what was appended since the last read (once, however many wake-ups arrive meanwhile). */
  wake(): void {
    this.reads.wake();
  }

  private async readNew(): Promise<void> {
    // The first read only finds where the log ends now: streams read what came before themselves.
    if (this.position < 0) {
      this.position = (await eventLogState(this.db)).lastPosition;
      return;
    }
    for (;;) {
      const rows = await readEventsAfter(this.db, this.position, BATCH_LIMIT);
      if (rows.length === 0) {
        // Purged past the hub (an idle instance), or nothing new.
        return;
      }
      const batch = { from: this.position, to: rows[rows.length - 1]!.position, events: rows };
      this.position = batch.to;
      for (const listener of this.listeners) listener(batch);
      if (rows.length < BATCH_LIMIT) return;
    }
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ ...this.options.listenConnection, application_name: 'education-api-events' });
    client.on('error', (error) => this.reconnectLater(error));
    client.on('notification', () => this.wake());
    this.connecting = client;
    try {
      await client.connect();
      await listenForEventBatches(client);
    } finally {
      this.connecting = undefined;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.reconnectDelay = 100;
    // Whatever was committed while not listening.
    this.wake();
  }

  private reconnectLater(error: Error): void {
    if (this.closed || this.reconnecting) return;
    this.reconnecting = true;
    this.options.log.warn({ err: error.message }, 'event listener connection lost; reconnecting');
    const old = this.client;
    this.client = undefined;
    old?.end().catch(() => {});
    const delay = this.reconnectDelay;
    this.reconnectDelay = Math.min(5000, delay * 2);
    setTimeout(() => {
      this.reconnecting = false;
      if (!this.closed && !this.client) this.listen().catch((e: Error) => this.reconnectLater(e));
    }, delay).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.listeners.clear();
    await this.reads.stop();
    await Promise.all([this.connecting?.end().catch(() => {}), this.client?.end().catch(() => {})]);
  }
}
