/**
 * `npm run bench:events`: the change events' costs, written to bench/results/events.json (see docs/performance.md).
 *
 * 1. Added cost on a register create: p50 of the create transaction's statements with and without the event append
 *    (`appendEvent`, the one statement a write path adds), and of `POST /trainees` as a whole (in-process inject).
 * 2. Commit → webhook received at `--rate` writes/s for `--seconds`: events appended in their own transactions at a
 *    steady rate, delivered by the app's worker to a receiver on 127.0.0.1; latency = receipt − commit (it includes
 *    the wait in the inbox until the app's sequencer gives the event its position, EVENTS_SEQUENCE_INTERVAL_MS).
 * 3. SSE fan-out: `--subscribers` streams of `/v1/events` on one instance, 100 events appended; the time until every
 *    stream has every event, and the process's memory before and with the streams open.
 *
 * Uses DATABASE_URL, or the embedded PostgreSQL under DATA_DIR (default .data/bench-events).
 */
import http from 'node:http';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { runCli } from '../src/cli/run.js';
import { loadConfig } from '../src/config.js';
import { appendEvent } from '../src/events/outbox-repository.js';
import { systemNetwork } from '../src/events/webhook-sender.js';
import { createToken } from '../src/register/tokens.js';
import { openRuntime } from '../src/runtime.js';
import { benchTrainee } from './trainee-payload.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '100' },
    seconds: { type: 'string', default: '10' },
    subscribers: { type: 'string', default: '500' },
    creates: { type: 'string', default: '300' },
  },
});

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: +percentile(sorted, 50).toFixed(3),
    p99: +percentile(sorted, 99).toFixed(3),
    max: +sorted[sorted.length - 1]!.toFixed(3),
  };
};
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const mb = (bytes: number) => +(bytes / 1024 / 1024).toFixed(1);

await runCli(async () => {
  const config = loadConfig({
    DATA_DIR: '.data/bench-events',
    LOG_LEVEL: 'silent',
    ...process.env,
    RATE_LIMIT_REGISTER_MAX: '1000000',
    RATE_LIMIT_STATISTICS_MAX: '1000000',
    WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    EVENTS_STREAM_MAX_PER_CLIENT: '100000',
    EVENTS_STREAM_MAX_CONCURRENT: '100000',
    WEBHOOK_POLL_MS: '1000',
  });
  const runtime = await openRuntime(config, { migrate: true, applicationName: 'bench-events' });
  const app = await buildApp(config, {
    db: runtime.primary.db,
    pools: runtime.pools(),
    logger: false,
    webhookNetwork: systemNetwork,
  });
  const db = runtime.primary.db;
  const results: Record<string, unknown> = {
    machine: { cpus: os.cpus().length, node: process.version, loadAverageAtStart: os.loadavg() },
    options: { ...values, sequenceIntervalMs: config.EVENTS_SEQUENCE_INTERVAL_MS },
  };
  /** Runs one measurement; a failure is recorded (with the load average) instead of ending the run. */
  const phase = async (name: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (error) {
      results[name] = { error: (error as Error).message, loadAverage: os.loadavg() };
      console.log(name, 'failed:', (error as Error).message);
    }
  };
  try {
    // 1. Added cost on a register create.
    const ukprn = String(20000000 + (process.pid % 9999999)).slice(-8);
    await db
      .insertInto('providers')
      .values({ ukprn, name: `Bench events ${ukprn}` })
      .onConflict((oc) => oc.column('ukprn').doNothing())
      .execute();
    const provider = await db.selectFrom('providers').select('id').where('ukprn', '=', ukprn).executeTakeFirstOrThrow();
    const token = (
      await createToken(db, {
        providerUkprn: ukprn,
        environment: config.REGISTER_ENVIRONMENT,
        secret: config.REGISTER_TOKEN_SECRET,
      })
    ).token;
    const creates: number[] = [];
    for (let i = 0; i < Number(values.creates); i++) {
      const payload = JSON.stringify({
        data: benchTrainee(
          'Events',
          `Bench${process.pid}x${i}`.replace(/\d/g, (d) => 'abcdefghij'[Number(d)]!),
          {},
        ),
      });
      const start = process.hrtime.bigint();
      const res = await app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload,
      });
      if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
      creates.push(ms(start));
    }
    const withEvent: number[] = [];
    const without: number[] = [];
    for (let i = 0; i < 600; i++) {
      const append = i % 2 === 0;
      const start = process.hrtime.bigint();
      await db.transaction().execute(async (trx) => {
        await sql`UPDATE providers SET updated_at = now() WHERE id = ${provider.id}`.execute(trx);
        if (append)
          await appendEvent(trx, {
            api: 'register',
            type: 'trainee.updated',
            providerId: provider.id,
            environment: config.REGISTER_ENVIRONMENT,
            resourceType: 'trainee',
            resourceId: 'bench',
            payload: { changed_fields: ['first_names'] },
          });
      });
      (append ? withEvent : without).push(ms(start));
    }
    const a = stats(withEvent);
    const b = stats(without);
    results.createCost = {
      postTraineesMs: stats(creates),
      writeTransactionWithEventMs: a,
      writeTransactionWithoutEventMs: b,
      addedP50Ms: +(a.p50 - b.p50).toFixed(3),
    };
    console.log('create cost', results.createCost);

    await app.listen({ port: 0, host: '127.0.0.1' });
    // 2. Commit → webhook received.
    await phase('commitToWebhook', async () => {
      const commitTimes = new Map<string, number>();
      const latencies: number[] = [];
      const receiver = http.createServer((req, res) => {
        const id = String(req.headers['webhook-id']);
        const committed = commitTimes.get(id);
        if (committed !== undefined) latencies.push(performance.now() - committed);
        req.resume();
        res.writeHead(204).end();
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      const port = (receiver.address() as AddressInfo).port;
      const sub = await app.inject({
        method: 'POST',
        url: '/api/v2026.1/webhooks',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ data: { url: `http://127.0.0.1:${port}/hook`, event_types: ['trainee.updated'] } }),
      });
      if (sub.statusCode !== 201) throw new Error(`subscription answered ${sub.statusCode}: ${sub.body}`);
      const total = Number(values.rate) * Number(values.seconds);
      const interval = 1000 / Number(values.rate);
      const began = performance.now();
      const writes: Promise<void>[] = [];
      for (let i = 0; i < total; i++) {
        const due = began + i * interval;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        writes.push(
          db
            .transaction()
            .execute(async (trx) => {
              const { id } = await appendEvent(trx, {
                api: 'register',
                type: 'trainee.updated',
                providerId: provider.id,
                environment: config.REGISTER_ENVIRONMENT,
                resourceType: 'trainee',
                resourceId: `w${i}`,
                payload: { changed_fields: ['email'] },
              });
              return id;
            })
            .then((id) => void commitTimes.set(id, performance.now())),
        );
      }
      await Promise.all(writes);
      const deadline = performance.now() + 30_000;
      while (latencies.length < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      results.commitToWebhook = {
        rate: Number(values.rate),
        seconds: Number(values.seconds),
        received: latencies.length,
        of: total,
        latencyMs: stats(latencies),
      };
      console.log('commit → webhook', results.commitToWebhook);
      await app.inject({
        method: 'DELETE',
        url: `/api/v2026.1/webhooks/${sub.json<{ data: { id: string } }>().data.id}`,
        headers: { authorization: `Bearer ${token}` },
      });
      receiver.close();
    });

    // 3. SSE fan-out.
    await phase('sseFanOut', async () => {
      global.gc?.();
      const before = process.memoryUsage();
      const subscribers = Number(values.subscribers);
      const appPort = (app.server.address() as AddressInfo).port;
      const counts = new Array<number>(subscribers).fill(0);
      const requests: http.ClientRequest[] = [];
      const agent = new http.Agent({ maxSockets: subscribers + 10 });
      await Promise.all(
        Array.from(
          { length: subscribers },
          (_, i) =>
            new Promise<void>((resolve, reject) => {
              const req = http.get(
                {
                  host: '127.0.0.1',
                  port: appPort,
                  path: '/v1/events',
                  agent,
                  headers: { accept: 'text/event-stream' },
                },
                (res) => {
                  res.setEncoding('utf8');
                  res.on('data', (chunk: string) => (counts[i]! += (chunk.match(/^event: /gm) ?? []).length));
                  resolve();
                },
              );
              req.on('error', reject);
              requests.push(req);
            }),
        ),
      );
      const open = process.memoryUsage();
      const events = 100;
      const start = performance.now();
      for (let i = 0; i < events; i++) {
        await db.transaction().execute((trx) =>
          appendEvent(trx, {
            api: 'statistics',
            type: 'data_set.created',
            resourceType: 'data_set',
            resourceId: `bench-${i}`,
            payload: { i },
          }),
        );
      }
      const fanDeadline = performance.now() + 60_000;
      while (counts.some((c) => c < events) && performance.now() < fanDeadline)
        await new Promise((r) => setTimeout(r, 20));
      const allDelivered = performance.now() - start;
      const during = process.memoryUsage();
      results.sseFanOut = {
        subscribers,
        events,
        complete: counts.every((c) => c >= events),
        msUntilEverySubscriberHadEveryEvent: +allDelivered.toFixed(1),
        rssMb: { before: mb(before.rss), streamsOpen: mb(open.rss), afterEvents: mb(during.rss) },
        heapUsedMb: { before: mb(before.heapUsed), streamsOpen: mb(open.heapUsed), afterEvents: mb(during.heapUsed) },
        note: 'the subscribers are in the same process as the service, so the memory includes their client sockets',
      };
      console.log('SSE fan-out', results.sseFanOut);
      for (const req of requests) req.destroy();
      agent.destroy();
    });
  } finally {
    await app.close();
    await runtime.close();
  }
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/events.json', `${JSON.stringify(results, null, 2)}\n`);
  console.log('wrote bench/results/events.json');
});
