import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken, type TestProvider } from '../register/helpers.js';
import { queriesWaitingForBusyConnections, reportedEventLoopDelayMs } from '../../src/plugins/load-shedding.js';
import { createPool } from '../../src/db/database.js';

let t: TestApp;
let provider: TestProvider;
beforeAll(async () => {
  // One request in progress is the bound; the event loop is not checked (a busy test machine would trip it).
  t = await buildTestApp({
    LOAD_SHED_MAX_IN_FLIGHT: '1',
    LOAD_SHED_MAX_POOL_WAITING: '1000',
    LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
    LOAD_SHED_RETRY_AFTER_S: '2',
  });
  provider = await createProviderWithToken(t.database.db);
});
afterAll(async () => {
  await t?.close();
});

/** Every connection of the test's pool checked out, so a request that needs the database waits (stays in flight). */
async function holdPool(pool: pg.Pool): Promise<pg.PoolClient[]> {
  const max = (pool.options as { max?: number }).max ?? 10;
  return Promise.all(Array.from({ length: max }, () => pool.connect()));
}

describe('load shedding', () => {
  it('answers 503 with Retry-After at once, in each API’s error format, while the instance is at its bound; probes and metrics are never refused', async () => {
    const clients = await holdPool(t.database.pool);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      for (const client of clients) client.release();
    };
    try {
      // The bound's one request: it waits for a database connection.
      const held = t.app.inject({ method: 'GET', url: '/v1/publications' });
      await new Promise((resolve) => setTimeout(resolve, 100));

      const started = performance.now();
      const statistics = await t.app.inject({ method: 'GET', url: '/v1/publications' });
      expect(performance.now() - started).toBeLessThan(1000);
      expect(statistics.statusCode).toBe(503);
      expect(statistics.headers['retry-after']).toBe('2');
      expect(statistics.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(statistics.json()).toMatchObject({
        status: 503,
        title: 'Service Unavailable',
        detail: expect.stringMatching(/busy/),
      });

      // The register API has bounds of its own: its first request is admitted (it waits for a connection too) ...
      const heldWrite = t.app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees',
        headers: provider.auth,
        payload: { data: { first_names: 'Admitted' } },
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      // ... and the next one is refused, in the register's own format.
      const register = await t.app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees',
        headers: provider.auth,
        payload: { data: { first_names: 'Shed' } },
      });
      expect(register.statusCode).toBe(503);
      expect(register.headers['retry-after']).toBe('2');
      expect(register.json()).toEqual({ error: expect.stringMatching(/busy/) });

      expect((await t.app.inject({ method: 'GET', url: '/health/live' })).statusCode).toBe(200);
      expect((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
      // Readiness says why, so a balancer prefers another instance.
      const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.statusCode).toBe(503);
      expect(ready.json().detail).toMatch(/overloaded \(too many requests in progress\)/);

      release();
      // The admitted write ran (refused by validation: 422, not 503).
      expect((await heldWrite).statusCode).toBe(422);
      release();
      expect((await held).statusCode).toBe(200);
    } finally {
      release();
    }
    // Room again: admitted, and nothing the refused write carried was stored.
    expect((await t.app.inject({ method: 'GET', url: '/v1/publications' })).statusCode).toBe(200);
    const ready = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json().load).toMatchObject({ inFlight: 0, poolWaiting: 0 });
    const stored = await t.database.db.selectFrom('trainees').select('id').where('first_names', '=', 'Shed').execute();
    expect(stored).toEqual([]);
  });
});

describe('load shedding on database pool waits', () => {
  it('refuses while requests wait for a database connection beyond LOAD_SHED_MAX_POOL_WAITING', async () => {
    // No background work of the app's own waits for the pool meanwhile (the webhook worker, the event sequencer and
    // the sandbox's simulator poll it), so the waiting count is the requests' alone.
    const waiting = await buildTestApp(
      {
        LOAD_SHED_MAX_POOL_WAITING: '1',
        LOAD_SHED_MAX_IN_FLIGHT: '1000',
        LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
        EVENTS_SEQUENCE_INTERVAL_MS: '60000',
        REGISTER_SANDBOX_POLL_MS: '60000',
      },
      { webhookWorker: false },
    );
    try {
      // The app's pools are the test database's: its `pools` dependency is { primary: pool }.
      const clients = await holdPool(waiting.database.pool);
      const held = waiting.app.inject({ method: 'GET', url: '/v1/publications' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const refused = await waiting.app.inject({ method: 'GET', url: '/v1/publications' });
      expect(refused.statusCode).toBe(503);
      expect(refused.json().detail).toMatch(/waiting for the database/);
      for (const client of clients) client.release();
      expect((await held).statusCode).toBe(200);
    } finally {
      await waiting.close();
    }
  });
});

describe('queries waiting for a busy connection', () => {
  it('are those waiting while every connection is open and in use, not those waiting for connections being opened', async () => {
    // A "database" that accepts connections and never answers: the pool's connections stay being opened.
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as AddressInfo).port;
    const opening = createPool(`postgres://nobody@127.0.0.1:${port}/none`, { max: 2, connectionTimeoutMillis: 1000 });
    const attempts = Array.from({ length: 5 }, () =>
      opening.connect().then(
        (c) => c.release(),
        () => undefined,
      ),
    );
    // Two connections being opened and three queries waiting: one waits beyond what they will take.
    expect(opening.totalCount).toBe(2);
    expect(opening.waitingCount).toBe(3);
    expect(queriesWaitingForBusyConnections(opening)).toBe(1);
    await Promise.all(attempts);
    await opening.end();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));

    // A pool of the test database with both connections open and checked out: each waiting query counts.
    const busy = createPool(t.database.url, { max: 2 });
    try {
      const held = await Promise.all([busy.connect(), busy.connect()]);
      const waiting = Array.from({ length: 3 }, () => busy.connect().then((client) => client.release()));
      expect(queriesWaitingForBusyConnections(busy)).toBe(3);
      for (const client of held) client.release();
      await Promise.all(waiting);
      expect(queriesWaitingForBusyConnections(busy)).toBe(0);
    } finally {
      await busy.end();
    }
  });
});

describe('readiness load report', () => {
  it('reports an event-loop delay the loop could not sample (Infinity from under-pressure) as the sample interval, never null', () => {
    expect(reportedEventLoopDelayMs(Number.POSITIVE_INFINITY, 250)).toBe(250);
    expect(JSON.parse(JSON.stringify({ ms: reportedEventLoopDelayMs(Number.POSITIVE_INFINITY, 250) })).ms).toBe(250);
    expect(reportedEventLoopDelayMs(12.345, 250)).toBe(12.3);
    expect(reportedEventLoopDelayMs(0, 250)).toBe(0);
  });
});
