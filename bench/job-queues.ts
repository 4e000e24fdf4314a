/**
 * `npm run bench:job-queues`: the job-queue decision of the webhook delivery, measured (docs/architecture.md,
 * "Webhooks"; figures in docs/performance.md). The same delivery work on three queues, each with two workers on one
 * database, sending to one receiver on 127.0.0.1:
 *
 * - ours: the webhook_deliveries table with a lease per subscription (two app instances' WebhookWorker);
 * - pg-boss 10 (the last major for Node 20): one queue, policy `singleton`, singletonKey = the subscription; and a
 *   `singleton` queue per subscription (a worker per queue and instance);
 * - graphile-worker 0.17 (the last minor for Node 20): a named queue (`queueName`) per subscription, which runs its
 *   jobs one at a time.
 *
 * Scenario `order`: 10 subscriptions x 20 events queued at once; the receiver answers 500 to the first attempt of
 * each subscription's 3rd event. Counted: deliveries that arrived before an earlier event of their subscription had
 * been delivered (out of order), successful sends of one event more than once (double sends), the most requests in
 * flight for one subscription, the time until all arrived.
 * Scenario `rate`: 100 events/s for 20 s across 10 subscriptions, no failures: queue -> received latency p50/p99,
 * double sends, whether all arrived.
 *
 * Needs DATABASE_URL (a database of its own: it creates the pgboss and graphile_worker schemas and migrates ours).
 * Writes bench/results/job-queues.json, with the libraries' errors counted by message (a failed attempt is one).
 */
import http from 'node:http';
import os from 'node:os';
import { mkdir, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import PgBoss from 'pg-boss';
import { Logger, makeWorkerUtils, run as runGraphile, runMigrations } from 'graphile-worker';
import { buildApp } from '../src/app.js';
import { runCli } from '../src/cli/run.js';
import { loadConfig } from '../src/config.js';
import { appendEvent } from '../src/events/outbox-repository.js';
import { STATISTICS_EVENT_TYPES } from '../src/statistics/events/service.js';
import { systemNetwork } from '../src/events/webhook-sender.js';
import { createSubscription, deleteSubscription, STATISTICS_OWNER, webhookSettings } from '../src/events/webhooks.js';
import { openRuntime } from '../src/runtime.js';

const SUBSCRIPTIONS = 10;
const ORDER_EVENTS = 20;
const FAIL_SEQ = 3;
const RATE = 100;
const RATE_SECONDS = 20;
const CONCURRENCY = 4;

interface Attempt {
  sub: number;
  seq: number;
  ok: boolean;
  at: number;
}

/** The receiver: records every attempt; with `failOnce`, the first attempt of each subscription's FAIL_SEQ answers 500. */
async function startReceiver() {
  const attempts: Attempt[] = [];
  const inFlight = new Map<number, number>();
  let maxInFlight = 0;
  let failOnce = false;
  const failed = new Set<string>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const { sub, seq } = (JSON.parse(body) as { data: { sub: number; seq: number } }).data;
      inFlight.set(sub, (inFlight.get(sub) ?? 0) + 1);
      maxInFlight = Math.max(maxInFlight, inFlight.get(sub)!);
      // A little work, so that overlapping sends of one subscription would show.
      setTimeout(() => {
        inFlight.set(sub, inFlight.get(sub)! - 1);
        const key = `${sub}:${seq}`;
        const fail = failOnce && seq === FAIL_SEQ && !failed.has(key);
        if (fail) failed.add(key);
        attempts.push({ sub, seq, ok: !fail, at: performance.now() });
        res.writeHead(fail ? 500 : 204).end();
      }, 10);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    attempts,
    get maxInFlight() {
      return maxInFlight;
    },
    reset(fail: boolean) {
      attempts.length = 0;
      maxInFlight = 0;
      failOnce = fail;
      failed.clear();
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** POSTs one event to the receiver; throws on anything but 2xx (the queue then retries it). */
async function post(url: string, sub: number, seq: number): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    body: JSON.stringify({ data: { sub, seq } }),
    headers: { 'content-type': 'application/json' },
  });
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
}

/** graphile-worker's log: errors only. */
const errors: Record<string, number> = {};
const countError = (queue: string, message: string) => {
  const key = `${queue}: ${message.replace(/\d+/g, 'N').slice(0, 120)}`;
  errors[key] = (errors[key] ?? 0) + 1;
};

/** graphile-worker's log: errors counted (a failed attempt is one). */
const silentGraphileLogger = new Logger(() => (level, message) => {
  if ((level as string) === 'error') countError('graphile-worker', message.split('\n')[0]!);
});

interface Queue {
  name: string;
  start(): Promise<void>;
  enqueue(sub: number, seq: number): Promise<void>;
  stop(): Promise<void>;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

function summarise(receiver: Receiver, expected: number, queuedAt: Map<string, number>) {
  const firstOk = new Map<string, number>();
  let okSends = 0;
  for (const a of receiver.attempts) {
    if (!a.ok) continue;
    okSends += 1;
    const key = `${a.sub}:${a.seq}`;
    if (!firstOk.has(key)) firstOk.set(key, a.at);
  }
  let outOfOrder = 0;
  for (const [key, at] of firstOk) {
    const [sub, seq] = key.split(':').map(Number) as [number, number];
    const before = firstOk.get(`${sub}:${seq - 1}`);
    if (seq > 0 && (before === undefined || before > at)) outOfOrder += 1;
  }
  const latencies = [...firstOk].map(([key, at]) => at - queuedAt.get(key)!).sort((a, b) => a - b);
  return {
    delivered: firstOk.size,
    of: expected,
    outOfOrder,
    doubleSends: okSends - firstOk.size,
    maxInFlightPerSubscription: receiver.maxInFlight,
    latencyMs: latencies.length
      ? {
          p50: +percentile(latencies, 50).toFixed(1),
          p99: +percentile(latencies, 99).toFixed(1),
          max: +latencies.at(-1)!.toFixed(1),
        }
      : null,
  };
}

async function waitFor(receiver: Receiver, expected: number, timeoutMs: number): Promise<number> {
  const start = performance.now();
  const distinct = () => new Set(receiver.attempts.filter((a) => a.ok).map((a) => `${a.sub}:${a.seq}`)).size;
  while (distinct() < expected && performance.now() - start < timeoutMs) await new Promise((r) => setTimeout(r, 50));
  return performance.now() - start;
}

async function measure(queue: Queue, receiver: Receiver) {
  await queue.start();
  const result: Record<string, unknown> = {};
  try {
    // order
    receiver.reset(true);
    let queuedAt = new Map<string, number>();
    const began = performance.now();
    for (let seq = 0; seq < ORDER_EVENTS; seq++) {
      for (let sub = 0; sub < SUBSCRIPTIONS; sub++) {
        await queue.enqueue(sub, seq);
        queuedAt.set(`${sub}:${seq}`, performance.now());
      }
    }
    await waitFor(receiver, SUBSCRIPTIONS * ORDER_EVENTS, 60_000);
    await new Promise((r) => setTimeout(r, 1000));
    result.order = {
      ...summarise(receiver, SUBSCRIPTIONS * ORDER_EVENTS, queuedAt),
      msUntilAllDelivered: +(performance.now() - began - 1000).toFixed(0),
    };
    console.log(queue.name, 'order', result.order);

    // rate
    receiver.reset(false);
    queuedAt = new Map();
    const total = RATE * RATE_SECONDS;
    const start = performance.now();
    // One subscription's events are queued one after another (each 100 ms after the last), so that their order is
    // their sequence on every queue; different subscriptions' overlap.
    const chains = Array.from({ length: SUBSCRIPTIONS }, () => Promise.resolve());
    for (let i = 0; i < total; i++) {
      const wait = start + (i * 1000) / RATE - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const sub = i % SUBSCRIPTIONS;
      const seq = Math.floor(i / SUBSCRIPTIONS);
      chains[sub] = chains[sub]!.then(() => queue.enqueue(sub, seq)).then(
        () => void queuedAt.set(`${sub}:${seq}`, performance.now()),
      );
    }
    await Promise.all(chains);
    const enqueueSeconds = (performance.now() - start) / 1000;
    await waitFor(receiver, total, 30_000);
    await new Promise((r) => setTimeout(r, 1000));
    result.rate = {
      eventsPerSecond: RATE,
      seconds: RATE_SECONDS,
      achievedEnqueueSeconds: +enqueueSeconds.toFixed(1),
      ...summarise(receiver, total, queuedAt),
    };
    console.log(queue.name, 'rate', result.rate);
  } finally {
    await queue.stop();
  }
  return result;
}

await runCli(async () => {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('DATABASE_URL required: a database of its own for this benchmark');
  const config = loadConfig({
    ...process.env,
    LOG_LEVEL: 'silent',
    WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    WEBHOOK_POLL_MS: '1000',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
    WEBHOOK_RETRY_BASE_MS: '1000',
    WEBHOOK_RETRY_MAX_MS: '5000',
  });
  const receiver = await startReceiver();
  const results: Record<string, unknown> = {
    machine: { cpus: os.cpus().length, node: process.version, loadAverageAtStart: os.loadavg() },
    setup: {
      subscriptions: SUBSCRIPTIONS,
      workers: 2,
      concurrencyPerWorker: CONCURRENCY,
      orderEventsPerSubscription: ORDER_EVENTS,
      failedFirstAttemptOfEvent: FAIL_SEQ,
    },
  };

  // Ours: two app instances (each its own pool and WebhookWorker) on one database.
  const runtimes = [
    await openRuntime(config, { migrate: true, applicationName: 'bench-job-queues-a' }),
    await openRuntime(config, { applicationName: 'bench-job-queues-b' }),
  ];
  const db = runtimes[0]!.primary.db;
  // A clean start for the two libraries' schemas (the database is this benchmark's own).
  await sql`DROP SCHEMA IF EXISTS pgboss CASCADE`.execute(db);
  await sql`DROP SCHEMA IF EXISTS graphile_worker CASCADE`.execute(db);
  const settings = webhookSettings(config, systemNetwork);
  const dataSets: string[] = [];
  const subscriptions: string[] = [];
  let apps: Awaited<ReturnType<typeof buildApp>>[] = [];
  const ours: Queue = {
    name: 'ours (deliveries table, lease per subscription)',
    async start() {
      const publication = (
        await sql<{
          id: string;
        }>`INSERT INTO publications (id, title, slug, summary) VALUES (gen_random_uuid(), 'Bench job queues', 'bench-job-queues-' || gen_random_uuid(), '') RETURNING id`.execute(
          db,
        )
      ).rows[0]!.id;
      for (let i = 0; i < SUBSCRIPTIONS; i++) {
        const { rows } = await sql<{
          id: string;
        }>`INSERT INTO data_sets (id, publication_id, title, summary, status) VALUES (gen_random_uuid(), ${publication}, ${`Bench ${i}`}, '', 'Draft') RETURNING id`.execute(
          db,
        );
        dataSets.push(rows[0]!.id);
      }
      for (const dataSet of dataSets)
        subscriptions.push(
          (
            await createSubscription(
              db,
              STATISTICS_OWNER,
              { url: receiver.url },
              STATISTICS_EVENT_TYPES,
              settings,
              dataSet,
            )
          ).id,
        );
      apps = await Promise.all(
        runtimes.map((r) => buildApp(config, { db: r.primary.db, logger: false, webhookNetwork: systemNetwork })),
      );
      await Promise.all(apps.map((a) => a.ready()));
    },
    async enqueue(sub, seq) {
      await db.transaction().execute((trx) =>
        appendEvent(trx, {
          api: 'statistics',
          type: 'data_set.created',
          resourceType: 'data_set',
          resourceId: dataSets[sub]!,
          payload: { sub, seq },
        }),
      );
    },
    async stop() {
      await Promise.all(apps.map((a) => a.close()));
      for (const id of subscriptions) await deleteSubscription(db, STATISTICS_OWNER, id);
    },
  };

  // pg-boss 10: one queue, one active job per singletonKey (the subscription).
  let bosses: PgBoss[] = [];
  const pgBoss: Queue = {
    name: 'pg-boss 10 (singleton queue, singletonKey per subscription)',
    async start() {
      bosses = [
        new PgBoss({ connectionString: databaseUrl, max: 6, schedule: false }),
        new PgBoss({ connectionString: databaseUrl, max: 6, schedule: false }),
      ];
      for (const boss of bosses) {
        boss.on('error', (error) => countError('pg-boss', error.message));
        await boss.start();
      }
      await bosses[0]!.createQueue('deliver', { name: 'deliver', policy: 'singleton', retryLimit: 20, retryDelay: 1 });
      for (const boss of bosses) {
        for (let i = 0; i < CONCURRENCY; i++) {
          await boss.work<{ sub: number; seq: number }>(
            'deliver',
            { batchSize: 1, pollingIntervalSeconds: 0.5 },
            async ([job]) => post(receiver.url, job!.data.sub, job!.data.seq),
          );
        }
      }
    },
    async enqueue(sub, seq) {
      await bosses[0]!.send('deliver', { sub, seq }, { singletonKey: `s${sub}` });
    },
    async stop() {
      for (const boss of bosses) await boss.stop({ graceful: true, wait: true, timeout: 5000 });
    },
  };

  // pg-boss 10, a queue per subscription (policy singleton): a worker per queue and instance, each polling.
  let perQueueBosses: PgBoss[] = [];
  const pgBossPerQueue: Queue = {
    name: 'pg-boss 10 (a singleton queue per subscription)',
    async start() {
      perQueueBosses = [
        new PgBoss({ connectionString: databaseUrl, max: 6, schedule: false }),
        new PgBoss({ connectionString: databaseUrl, max: 6, schedule: false }),
      ];
      for (const boss of perQueueBosses) {
        boss.on('error', (error) => countError('pg-boss per queue', error.message));
        await boss.start();
      }
      for (let sub = 0; sub < SUBSCRIPTIONS; sub++) {
        await perQueueBosses[0]!.createQueue(`deliver-${sub}`, {
          name: `deliver-${sub}`,
          policy: 'singleton',
          retryLimit: 20,
          retryDelay: 1,
        });
        for (const boss of perQueueBosses) {
          await boss.work<{ sub: number; seq: number }>(
            `deliver-${sub}`,
            { batchSize: 1, pollingIntervalSeconds: 0.5 },
            async ([job]) => post(receiver.url, job!.data.sub, job!.data.seq),
          );
        }
      }
    },
    async enqueue(sub, seq) {
      await perQueueBosses[0]!.send(`deliver-${sub}`, { sub, seq });
    },
    async stop() {
      for (const boss of perQueueBosses) await boss.stop({ graceful: true, wait: true, timeout: 5000 });
    },
  };

  // graphile-worker 0.17: a named queue per subscription (its jobs run one at a time).
  let pools: pg.Pool[] = [];
  let runners: Awaited<ReturnType<typeof runGraphile>>[] = [];
  let utils: Awaited<ReturnType<typeof makeWorkerUtils>>;
  const graphile: Queue = {
    name: 'graphile-worker 0.17 (queueName per subscription)',
    async start() {
      pools = [
        new pg.Pool({ connectionString: databaseUrl, max: 6 }),
        new pg.Pool({ connectionString: databaseUrl, max: 6 }),
      ];
      await runMigrations({ pgPool: pools[0]! });
      utils = await makeWorkerUtils({ pgPool: pools[0]! });
      const taskList = {
        deliver: async (payload: unknown) => {
          const { sub, seq } = payload as { sub: number; seq: number };
          await post(receiver.url, sub, seq);
        },
      };
      runners = await Promise.all(
        pools.map((pgPool) =>
          runGraphile({
            pgPool,
            taskList,
            concurrency: CONCURRENCY,
            noHandleSignals: true,
            pollInterval: 500,
            logger: silentGraphileLogger,
          }),
        ),
      );
    },
    async enqueue(sub, seq) {
      await utils.addJob('deliver', { sub, seq }, { queueName: `s${sub}`, maxAttempts: 20 });
    },
    async stop() {
      await Promise.all(runners.map((r) => r.stop()));
      await utils.release();
      await Promise.all(pools.map((p) => p.end()));
    },
  };

  try {
    for (const queue of [ours, pgBoss, pgBossPerQueue, graphile]) {
      try {
        results[queue.name] = await measure(queue, receiver);
      } catch (error) {
        results[queue.name] = { error: (error as Error).message };
        console.log(queue.name, 'failed:', (error as Error).message);
      }
    }
  } finally {
    await receiver.close();
    for (const r of runtimes) await r.close();
  }
  results.errors = errors;
  results.loadAverageAtEnd = os.loadavg();
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/job-queues.json', `${JSON.stringify(results, null, 2)}\n`);
  console.log('wrote bench/results/job-queues.json');
});
