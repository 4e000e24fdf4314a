import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, type AppDeps } from '../../src/app.js';
import {
  RowIndexStore,
  StandardEngineChooser,
  type QueryEngineChooser,
} from '../../src/statistics/query/engine/index.js';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { scaledMs } from '../helpers/machine-speed.js';
import { ABSENCE_SCHOOL, multiplyFixtureRows } from '../helpers/statistics.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';

/**
 * Slow and stalled clients of the statistics API must not take the register API or the health checks down, and
 * must not hold database connections open-ended. The app is wired as src/server.ts wires it (openRuntime: one pool
 * per API, readiness on its own). The fixture version is pointed at a view repeating its 216 rows 1,000 times
 * (216,000 rows, a CSV of about 40 MB, far more than socket buffers), so a reader that stops reading stalls the cursor.
 */
let database: TestDatabase;
let provider: TestProvider;

beforeAll(async () => {
  database = await createTestDatabase();
  await multiplyFixtureRows(database.db, 'some_rows', 1000);
  provider = await createProviderWithToken(database.db);
});

afterAll(async () => {
  await database?.drop();
});

interface Served {
  app: FastifyInstance;
  runtime: Runtime;
  base: string;
}

const served: Served[] = [];

async function serve(
  env: Record<string, string>,
  deps: Pick<AppDeps, 'rowIndexes' | 'queryEngines'> = {},
): Promise<Served> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    QUERY_VERSION_CACHE_MS: '0',
    QUERY_INDEX_MEMORY_MB: '0',
    DATABASE_POOL_MAX: '3',
    DATABASE_CONNECTION_TIMEOUT_MS: '1000',
    RATE_LIMIT_STATISTICS_MAX: '100000',
    RATE_LIMIT_REGISTER_MAX: '100000',
    ...env,
  });
  const runtime = await openRuntime(config, { migrate: false, applicationName: 'stalled-readers-test' });
  const app = await buildApp(config, {
    db: runtime.primary.db,
    readDb: runtime.read.db,
    healthDbs: runtime.health.map((h) => h.db),
    pools: runtime.pools(),
    logger: false,
    ...deps,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const entry = { app, runtime, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
  served.push(entry);
  // Warm up (schema compilation, first connections), so the timings below measure the stall, not a cold start.
  await fetch(`${entry.base}/api/v2026.1/trainees`, { headers: provider.auth }).then((r) => r.arrayBuffer());
  // A refused create loads what validation reads on first use (the code lists), which took 4–9 s on a loaded machine.
  await fetch(`${entry.base}/api/v2026.1/trainees`, {
    method: 'POST',
    headers: { ...provider.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ data: {} }),
  }).then((r) => r.arrayBuffer());
  await fetch(`${entry.base}/health/ready`).then((r) => r.arrayBuffer());
  return entry;
}

afterEach(async () => {
  for (const { app, runtime } of served.splice(0)) {
    // The test's own clients may leave sockets open (aborted fetches); they are not what is tested here.
    app.server.closeAllConnections();
    await app.close();
    await runtime.close();
  }
});

/** A GET whose response is never read after its headers: the client's socket buffers fill, then the server's. */
function stalledGet(
  url: string,
  headers: Record<string, string>,
): { status: Promise<number>; closed: Promise<void>; destroy(): void } {
  let request!: http.ClientRequest;
  let closedResolve!: () => void;
  const closed = new Promise<void>((resolve) => (closedResolve = resolve));
  const status = new Promise<number>((resolve) => {
    request = http.get(url, { headers, agent: false }, (response) => {
      response.pause();
      resolve(response.statusCode ?? 0);
      response.socket.once('close', closedResolve);
    });
    request.on('error', () => {
      resolve(0);
      closedResolve();
    });
  });
  return { status, closed, destroy: () => request.destroy() };
}

/**
 * Status and time of a request, with a client-side limit (status 0 when it did not answer in time): 2 s, 5 s for
 * register writes, which share the test machine's two cores with the readers' sorts and the other test files; both
 * times the machine's measured slowness (test/helpers/machine-speed.ts).
 */
async function timed(
  url: string,
  init: RequestInit = {},
  limitMs = scaledMs(2000),
): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(limitMs) });
    await res.arrayBuffer();
    return { status: res.status, ms: Date.now() - started };
  } catch {
    return { status: 0, ms: Date.now() - started };
  }
}

let created = 0;

/**
 * A register write and read, both health checks: each answers 200 within 2 s. Readiness has its own connection: had
 * it waited for the exhausted statistics pool, it would have answered 503 after DATABASE_CONNECTION_TIMEOUT_MS.
 */
async function checkOthersAnswer(base: string): Promise<void> {
  for (let round = 0; round < 3; round++) {
    created += 1;
    const name = `Stall${String.fromCharCode(65 + (created % 26))}${created}`;
    const create = await timed(
      `${base}/api/v2026.1/trainees`,
      {
        method: 'POST',
        headers: { ...provider.auth, 'content-type': 'application/json' },
        body: JSON.stringify({ data: validTrainee({ first_names: name, last_name: `Reader${name}` }) }),
      },
      scaledMs(5000),
    );
    expect(create.status).toBe(201);
    const [list, live, ready] = await Promise.all([
      timed(`${base}/api/v2026.1/trainees`, { headers: provider.auth }),
      timed(`${base}/health/live`),
      timed(`${base}/health/ready`),
    ]);
    expect(list.status).toBe(200);
    expect(live.status).toBe(200);
    expect(ready.status).toBe(200);
    expect(ready.ms).toBeLessThan(scaledMs(2000));
  }
}

async function waitUntil(condition: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await condition()) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return condition();
}

const queryUrl = (base: string) => `${base}/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;

describe('stalled CSV readers', () => {
  it(
    'twelve stalled query-CSV readers (and twelve data set downloads) leave the register API and both health checks answering, and are dropped after STREAM_STALL_TIMEOUT_MS',
    async () => {
      const { base, runtime } = await serve({
        STREAM_STALL_TIMEOUT_MS: '1500',
        QUERY_CSV_MAX_PER_CLIENT: '12',
        QUERY_CSV_MAX_CONCURRENT: '12',
      });
      const readers = Array.from({ length: 12 }, () => stalledGet(queryUrl(base), { accept: 'text/csv' }));
      const downloads = Array.from({ length: 12 }, () =>
        stalledGet(`${base}/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/csv`, {}),
      );
      try {
        // The statistics pool (3) is taken by the first readers; the rest wait for a connection or get 503.
        await waitUntil(() => runtime.read.pool.totalCount - runtime.read.pool.idleCount >= 3, 10000);
        await checkOthersAnswer(base);

        // Each stalled reader is disconnected, its cursor closed and its connection given back.
        // Which of the 24 win the statistics pool's 3 connections is a race between query exports and downloads:
        // together they hold the whole pool, the others wait for a connection and get 503.
        const statuses = await Promise.all([...readers, ...downloads].map((r) => r.status));
        expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
        expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3);
        const dropped = await waitUntil(async () => {
          const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE application_name = 'stalled-readers-test' AND state <> 'idle' AND pid <> pg_backend_pid()`.execute(
            database.db,
          );
          return rows[0]!.n === 0 && runtime.read.pool.totalCount === runtime.read.pool.idleCount;
        }, scaledMs(20000));
        expect(dropped).toBe(true);
        expect((await timed(`${queryUrl(base)}?pageSize=1`)).status).toBe(200);
        await checkOthersAnswer(base);
      } finally {
        for (const r of [...readers, ...downloads]) r.destroy();
      }
    },
    scaledMs(90000),
  );

  it(
    'caps concurrent query-CSV exports: 429 beyond QUERY_CSV_MAX_PER_CLIENT per client IP, 503 beyond QUERY_CSV_MAX_CONCURRENT',
    async () => {
      const { base } = await serve({
        STREAM_STALL_TIMEOUT_MS: '60000',
        QUERY_CSV_MAX_PER_CLIENT: '2',
        QUERY_CSV_MAX_CONCURRENT: '3',
        TRUST_PROXY: 'true',
      });
      const from = (ip: string) => ({ accept: 'text/csv', 'x-forwarded-for': ip });
      const readers = [
        stalledGet(queryUrl(base), from('198.51.100.1')),
        stalledGet(queryUrl(base), from('198.51.100.1')),
      ];
      try {
        expect(await Promise.all(readers.map((r) => r.status))).toEqual([200, 200]);
        const third = await fetch(queryUrl(base), { headers: from('198.51.100.1') });
        expect(third.status).toBe(429);
        expect(await third.json()).toMatchObject({ status: 429 });
        // Another client still gets one, up to the total.
        readers.push(stalledGet(queryUrl(base), from('198.51.100.2')));
        expect(await readers[2]!.status).toBe(200);
        const overTotal = await fetch(queryUrl(base), { headers: from('198.51.100.3') });
        expect(overTotal.status).toBe(503);
        // A client gets its slot back once one of its exports ends.
        readers[0]!.destroy();
        await readers[0]!.closed;
        readers.push(stalledGet(queryUrl(base), from('198.51.100.1')));
        expect(await readers[3]!.status).toBe(200);
      } finally {
        for (const r of readers) r.destroy();
      }
    },
    scaledMs(60000),
  );

  it(
    'a burst of 64 expensive statistics requests leaves the register API and /health/live answering',
    async () => {
      const { base } = await serve({
        STREAM_STALL_TIMEOUT_MS: '5000',
        QUERY_CSV_MAX_PER_CLIENT: '64',
        QUERY_CSV_MAX_CONCURRENT: '64',
        REQUEST_TIMEOUT_MS: '5000',
        DATABASE_STATEMENT_TIMEOUT_MS: '5000',
      });
      const burst = Array.from({ length: 64 }, (_, i) =>
        i % 2 === 0
          ? fetch(`${queryUrl(base)}?pageSize=10000&page=${1 + (i % 7)}`, { signal: AbortSignal.timeout(60000) })
              .then((r) => r.arrayBuffer().then(() => r.status))
              .catch(() => 0)
          : fetch(queryUrl(base), { headers: { accept: 'text/csv' }, signal: AbortSignal.timeout(3000) })
              .then((r) => r.arrayBuffer().then(() => r.status))
              .catch(() => 0),
      );
      await new Promise((r) => setTimeout(r, 300));
      await checkOthersAnswer(base);
      const statuses = await Promise.all(burst);
      // Every statistics request got an answer of its own: served, or a clear 503 (its pool busy) / 504 (too slow).
      expect(statuses.filter((s) => s >= 500 && s !== 503 && s !== 504)).toEqual([]);
    },
    scaledMs(120000),
  );
});

describe('streamed query CSV and the statement timeout', () => {
  /** Reads an export with a pause after the first chunk; resolves with its line count, or rejects when it is cut off. */
  function slowRead(url: string, pauseMs: number, accept = 'text/csv'): Promise<number> {
    return new Promise((resolve, reject) => {
      const request = http.get(url, { headers: { accept }, agent: false }, (response) => {
        let lines = 0;
        let paused = false;
        response.on('data', (chunk: Buffer) => {
          for (const byte of chunk) if (byte === 10) lines++;
          if (!paused) {
            paused = true;
            response.pause();
            setTimeout(() => response.resume(), pauseMs);
          }
        });
        response.on('end', () => (response.complete ? resolve(lines) : reject(new Error('cut off'))));
        response.on('aborted', () => reject(new Error('cut off')));
        response.on('error', reject);
      });
      request.on('error', reject);
    });
  }

  it(
    'is not cut by DATABASE_STATEMENT_TIMEOUT_MS: a slow reader gets every row',
    async () => {
      const { base } = await serve({ DATABASE_STATEMENT_TIMEOUT_MS: '300', STREAM_STALL_TIMEOUT_MS: '10000' });
      // 216 × 1,000 rows and the header.
      expect(await slowRead(queryUrl(base), 1500)).toBe(216001);
    },
    scaledMs(60000),
  );

  it(
    'ends an export past QUERY_CSV_TIMEOUT_MS as an incomplete transfer, never as a CSV that looks complete',
    async () => {
      const { base } = await serve({ QUERY_CSV_TIMEOUT_MS: '300', STREAM_STALL_TIMEOUT_MS: '10000' });
      await expect(slowRead(queryUrl(base), 1500)).rejects.toThrow('cut off');
      // The app serves on afterwards.
      expect((await timed(`${queryUrl(base)}?pageSize=1`)).status).toBe(200);
    },
    scaledMs(60000),
  );

  it.each(['application/vnd.apache.parquet', 'application/vnd.apache.arrow.stream'])(
    'ends a %s export past QUERY_CSV_TIMEOUT_MS as an incomplete transfer, never as a file that looks complete',
    async (accept) => {
      // A Parquet answer is small enough to sit in the sockets' buffers, so a slow reader does not hold the export
      // back: its pages are slowed instead (40 ms each, 108 pages), so that the time bound falls after the first
      // bytes (a Parquet row group, 33 pages) and well before the last.
      const rowIndexes = new RowIndexStore({ memoryBudgetBytes: 0 });
      const { base } = await serve(
        { QUERY_CSV_TIMEOUT_MS: '2500', STREAM_STALL_TIMEOUT_MS: '10000' },
        { rowIndexes, queryEngines: slowExportPages(new StandardEngineChooser(rowIndexes), 40) },
      );
      await expect(slowRead(queryUrl(base), 1500, accept)).rejects.toThrow('cut off');
      expect((await timed(`${queryUrl(base)}?pageSize=1`)).status).toBe(200);
    },
    scaledMs(60000),
  );
});

/** `chooser`'s engines, with each page of an export `delayMs` late. */
function slowExportPages(chooser: QueryEngineChooser, delayMs: number): QueryEngineChooser {
  return {
    async choose(context, query, purpose) {
      const engine = await chooser.choose(context, query, purpose);
      if (purpose !== 'export') return engine;
      const slowed = Object.create(engine) as typeof engine;
      slowed.pages = (q, size, options) =>
        (async function* () {
          for await (const page of engine.pages(q, size, options)) {
            await new Promise((resolve) => setTimeout(resolve, delayMs));
            yield page;
          }
        })();
      return slowed;
    },
  };
}
