/**
 * The event system's per-instance parts, at the root of the app: the sequencer (gives appended events their
 * positions, every EVENTS_SEQUENCE_INTERVAL_MS), the hub (LISTEN connection, newest events), the stream slots, and
 * the retention purges of events and of finished webhook deliveries (hourly; any instance may run them, a second
 * run finds nothing to delete).
 * Each API mounts its own `/events` route in its scope (src/statistics/events/routes.ts, src/register/events/routes.ts)
 * and gives its adapter (how its events read to webhook subscribers) through the `apis` option: this module imports
 * neither API.
 */
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { EventApiAdapters } from './api-adapter.js';
import { ExportSlots } from '../plugins/streaming.js';
import type { FeedDeps } from './feed.js';
import { EventHub } from './hub.js';
import { purgeEvents } from './outbox-repository.js';
import { EventSequencer } from './sequencer.js';
import { purgeDeliveries } from './webhook-repository.js';
import type { NetworkDeps } from './webhook-sender.js';
import { WebhookWorker } from './webhook-worker.js';
import { webhookSettings, type WebhookSettings } from './webhooks.js';

declare module 'fastify' {
  interface FastifyInstance {
    events: FeedDeps;
    webhooks: WebhookSettings;
    /** The webhook worker's slots and attempts, for /metrics (undefined when this instance sends no webhooks). */
    webhookDelivery: { status(): { inFlight: number; attempts: number; stuck: number } } | undefined;
  }
}

const PURGE_INTERVAL_MS = 3600_000;

export interface EventsPluginOptions {
  /** Each API's adapter: how its events read to webhook subscribers. */
  apis: EventApiAdapters;
  listenConnection?: pg.ClientConfig;
  network?: NetworkDeps;
  webhookWorker?: boolean;
}

export const eventsPlugin = fp<EventsPluginOptions>(
  async (app: FastifyInstance, options) => {
    const { config, db } = app;
    const hub = new EventHub(db, {
      listenConnection: options.listenConnection,
      pollMs: config.EVENTS_POLL_MS,
      log: app.log,
    });
    const sequencer = new EventSequencer(db, { intervalMs: config.EVENTS_SEQUENCE_INTERVAL_MS, log: app.log });
    const deps: FeedDeps = {
      db,
      hub,
      sequencer,
      slots: new ExportSlots(
        config.EVENTS_STREAM_MAX_PER_CLIENT,
        config.EVENTS_STREAM_MAX_CONCURRENT,
        'event streams',
        config.EVENTS_STREAM_RESERVED_FOR_PROVIDERS,
      ),
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
        : new WebhookWorker(db, {
            config,
            hub,
            network: webhooks.network,
            policy: webhooks.policy,
            retentionDays: config.EVENTS_RETENTION_DAYS,
            apis: options.apis,
            log: app.log,
          });
    app.decorate('webhookDelivery', worker);
    const purge = () =>
      Promise.all([
        purgeEvents(db, config.EVENTS_RETENTION_DAYS).catch((error: Error) =>
          app.log.warn({ err: error.message }, 'event retention purge failed'),
        ),
        purgeDeliveries(db, config.WEBHOOK_DELIVERY_RETENTION_DAYS).catch((error: Error) =>
          app.log.warn({ err: error.message }, 'webhook delivery retention purge failed'),
        ),
      ]);
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
