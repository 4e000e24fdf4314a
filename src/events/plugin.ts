/**
 * The event system's per-instance parts, at the root of the app: the sequencer (gives appended events their
 * positions, every EVENTS_SEQUENCE_INTERVAL_MS), the hub (LISTEN connection, newest events), the stream slots, and
 * the retention purge (hourly; any instance may run it, a second run finds nothing to delete).
 * Each API mounts its own `/events` route in its scope (./routes.ts).
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { ExportSlots } from '../plugins/streaming.js';
import type { FeedDeps } from './feed.js';
import { EventHub } from './hub.js';
import { purgeEvents } from './outbox-repository.js';
import { EventSequencer } from './sequencer.js';
import type { NetworkDeps } from './webhook-sender.js';
import { WebhookWorker } from './webhook-worker.js';
import { webhookSettings, type WebhookSettings } from './webhooks.js';

declare module 'fastify' {
  interface FastifyInstance {
    events: FeedDeps;
    webhooks: WebhookSettings;
  }
}

const PURGE_INTERVAL_MS = 3600_000;

export const eventsPlugin = fp<{ listenConnection?: pg.ClientConfig; network?: NetworkDeps; webhookWorker?: boolean }>(
  async (app: FastifyInstance, options) => {
    const { config, db } = app;
    const hub = new EventHub(db, { listenConnection: options.listenConnection, pollMs: config.EVENTS_POLL_MS, log: app.log });
    const sequencer = new EventSequencer(db, { intervalMs: config.EVENTS_SEQUENCE_INTERVAL_MS, log: app.log });
    const deps: FeedDeps = {
      db,
      hub,
      sequencer,
      slots: new ExportSlots(config.EVENTS_STREAM_MAX_PER_CLIENT, config.EVENTS_STREAM_MAX_CONCURRENT, 'event streams'),
      retentionDays: config.EVENTS_RETENTION_DAYS,
      heartbeatMs: config.EVENTS_HEARTBEAT_MS,
      openStreams: new Set(),
    };
    app.decorate('events', deps);
    const webhooks = webhookSettings(config, options.network);
    app.decorate('webhooks', webhooks);
    const worker =
      options.webhookWorker === false
        ? undefined
        : new WebhookWorker(db, { config, hub, network: webhooks.network, policy: webhooks.policy, retentionDays: config.EVENTS_RETENTION_DAYS, log: app.log });
    const purge = () =>
      purgeEvents(db, config.EVENTS_RETENTION_DAYS).catch((error: Error) => app.log.warn({ err: error.message }, 'event retention purge failed'));
    let timer: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      sequencer.start();
      hub.start();
      worker?.start();
      timer = setInterval(() => void purge(), PURGE_INTERVAL_MS);
      timer.unref();
    });
    app.addHook('preClose', async () => {
      for (const stream of deps.openStreams) stream.end();
    });
    app.addHook('onClose', async () => {
      if (timer) clearInterval(timer);
      await sequencer.close();
      await worker?.close();
      await hub.close();
    });
  },
  { name: 'events' },
);
