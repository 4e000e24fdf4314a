import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { childrenOf } from '../helpers/processes.js';
import { scaledMs } from '../helpers/machine-speed.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';
import { ABSENCE_SCHOOL, createDataSet, importFixtureVersion } from '../helpers/statistics.js';

/**
 * PostgreSQL frozen (postmaster and every backend SIGSTOPped: a hung host, a storage stall): no request may hang.
 * Readiness answers 503 within a second; register and statistics requests answer 503 once their client-side
 * deadline (DATABASE_QUERY_TIMEOUT_MS) or the connection timeout passes; all recover when it resumes.
 */
let dir: string;
let database: EmbeddedDatabase;
let runtime: Runtime;
let app: FastifyInstance;
let provider: TestProvider;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'frozen-db-'));
  await chmod(dir, 0o755);
  database = await startEmbeddedPostgres(dir);
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    SEED_ON_START: 'false',
    DATABASE_POOL_MAX: '3',
    // The bounds below follow from these timeouts: both are multiplied by the machine's measured slowness.
    DATABASE_CONNECTION_TIMEOUT_MS: String(scaledMs(1000)),
    DATABASE_QUERY_TIMEOUT_MS: String(scaledMs(1500)),
  });
  runtime = await openRuntime(config);
  provider = await createProviderWithToken(runtime.primary.db);
  app = await buildApp(config, {
    db: runtime.primary.db,
    readDb: runtime.read.db,
    healthDbs: runtime.health.map((h) => h.db),
    pools: runtime.pools(),
    logger: false,
  });
}, scaledMs(180000));

afterAll(async () => {
  await app?.close();
  await runtime?.close();
  await database?.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The postmaster and its children (backends, background workers). */
function clusterProcesses(postmaster: number): number[] {
  return [postmaster, ...childrenOf(postmaster)];
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone
    }
  }
}

async function timedInject(options: InjectOptions) {
  const started = Date.now();
  const res = await app.inject(options);
  return { status: res.statusCode, body: res.body, ms: Date.now() - started };
}

describe('frozen database', () => {
  it(
    'answers readiness 503 within a second and every request 503 within its deadline, then recovers when it resumes',
    async () => {
      const list = { method: 'GET' as const, url: '/api/v2026.1/trainees', headers: provider.auth };
      const create = (name: string) => ({
        method: 'POST' as const,
        url: '/api/v2026.1/trainees',
        headers: provider.auth,
        payload: { data: validTrainee({ first_names: name, last_name: `Frozen${name}` }) },
      });
      // Warm: every pool holds an open connection when the database freezes.
      expect((await timedInject(create('Alpha'))).status).toBe(201);
      expect((await timedInject(list)).status).toBe(200);
      expect((await timedInject({ method: 'GET', url: '/v1/publications' })).status).toBe(200);
      expect((await timedInject({ method: 'GET', url: '/health/ready' })).status).toBe(200);

      const pids = clusterProcesses(database.pid!);
      expect(pids.length).toBeGreaterThan(1);
      signalAll(pids, 'SIGSTOP');
      try {
        const ready = await timedInject({ method: 'GET', url: '/health/ready' });
        expect(ready.status).toBe(503);
        expect(ready.ms).toBeLessThan(scaledMs(1000));

        const [read, write, statistics, again] = await Promise.all([
          timedInject(list),
          timedInject(create('Bravo')),
          timedInject({ method: 'GET', url: '/v1/publications' }),
          timedInject({ method: 'GET', url: '/health/ready' }),
        ]);
        for (const answer of [read, write, statistics]) {
          expect(answer.status).toBe(503);
          // The deadline (1.5 s) or the connection timeout (1 s), with room for a loaded machine; never a hang.
          expect(answer.ms).toBeLessThan(scaledMs(6000));
        }
        expect(JSON.parse(read.body)).toEqual({ error: expect.any(String) });
        expect(JSON.parse(statistics.body)).toMatchObject({ status: 503 });
        expect(again.status).toBe(503);
        expect(again.ms).toBeLessThan(scaledMs(1000));
      } finally {
        signalAll(pids, 'SIGCONT');
      }

      // Recovers by itself.
      let ready = 0;
      for (let attempt = 0; attempt < 40 && ready !== 200; attempt++) {
        ready = (await timedInject({ method: 'GET', url: '/health/ready' })).status;
        if (ready !== 200) await new Promise((r) => setTimeout(r, 250));
      }
      expect(ready).toBe(200);
      expect((await timedInject(create('Charlie'))).status).toBe(201);
      expect((await timedInject(list)).status).toBe(200);
      expect((await timedInject({ method: 'GET', url: '/v1/publications' })).status).toBe(200);
    },
    scaledMs(120000),
  );
});

describe('frozen database, default deadlines', () => {
  it(
    'answers register calls 503 within seconds (a token lookup on a pooled connection too), every one within 10 s',
    async () => {
      // The default client-side deadline (statement timeout + 5 s) is for long statistics statements; the register's
      // short statements, the token lookup included, have DATABASE_SHORT_QUERY_TIMEOUT_MS (3 s by default).
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        DATABASE_URL: database.url,
        SEED_ON_START: 'false',
        DATABASE_POOL_MAX: '3',
        // Every call looks its token up (no cache), so the lookup on a frozen database is what is measured.
        REGISTER_TOKEN_CACHE_MS: '0',
      });
      const defaults = await openRuntime(config, { migrate: false });
      const defaultApp = await buildApp(config, {
        db: defaults.primary.db,
        readDb: defaults.read.db,
        healthDbs: defaults.health.map((h) => h.db),
        logger: false,
      });
      const timed = async (options: InjectOptions) => {
        const started = Date.now();
        const res = await defaultApp.inject(options);
        return { status: res.statusCode, ms: Date.now() - started };
      };
      const info = { method: 'GET' as const, url: '/api/v2026.1/info', headers: provider.auth };
      const list = { method: 'GET' as const, url: '/api/v2026.1/trainees', headers: provider.auth };
      try {
        expect((await timed(info)).status).toBe(200);
        expect((await timed(list)).status).toBe(200);
        const pids = clusterProcesses(database.pid!);
        signalAll(pids, 'SIGSTOP');
        try {
          const lookup = await timed(info);
          expect(lookup.status).toBe(503);
          // 3 s deadline, with room for a loaded machine (it took over 12 s with the statistics deadline).
          expect(lookup.ms).toBeLessThan(scaledMs(6000));
          const answers = await Promise.all([
            timed(info),
            timed(list),
            timed({
              method: 'POST',
              url: '/api/v2026.1/trainees',
              headers: provider.auth,
              payload: { data: validTrainee({ last_name: 'FrozenDelta' }) },
            }),
          ]);
          for (const answer of answers) {
            expect(answer.status).toBe(503);
            // The short deadline on a pooled connection, or the connection timeout (5 s) on a new one.
            expect(answer.ms).toBeLessThan(scaledMs(10000));
          }
        } finally {
          signalAll(pids, 'SIGCONT');
        }
      } finally {
        await defaultApp.close();
        await defaults.close();
      }
    },
    scaledMs(120000),
  );
});

describe('frozen database, statistics requests', () => {
  it(
    "answers every kind of statistics request 503 within 10 s (before a CSV's first byte too), then answers again",
    async () => {
      // Defaults (DATABASE_STATISTICS_DEADLINE_MS 7 s), except: queries on SQL (no row index answering from memory)
      // and the version resolved on every request, so that every request needs the database.
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        DATABASE_URL: database.url,
        SEED_ON_START: 'false',
        QUERY_INDEX_MEMORY_MB: '0',
        QUERY_VERSION_CACHE_MS: '0',
      });
      const defaults = await openRuntime(config, { migrate: false });
      const dataSetId = await createDataSet(defaults.primary.db, { id: ABSENCE_SCHOOL.dataSetId, status: 'Published' });
      await importFixtureVersion(defaults.primary, { dataSetId, version: '1.0' });
      const statisticsApp = await buildApp(config, {
        db: defaults.primary.db,
        readDb: defaults.read.db,
        healthDbs: defaults.health.map((h) => h.db),
        logger: false,
      });
      const base = `/v1/data-sets/${dataSetId}`;
      const requests: Record<string, InjectOptions> = {
        publications: { method: 'GET', url: '/v1/publications' },
        publication: { method: 'GET', url: `/v1/publications/${ABSENCE_SCHOOL.publicationId}` },
        dataSets: { method: 'GET', url: `/v1/publications/${ABSENCE_SCHOOL.publicationId}/data-sets` },
        dataSet: { method: 'GET', url: base },
        versions: { method: 'GET', url: `${base}/versions` },
        version: { method: 'GET', url: `${base}/versions/1.0` },
        changes: { method: 'GET', url: `${base}/versions/1.0/changes` },
        meta: { method: 'GET', url: `${base}/meta` },
        queryGet: { method: 'GET', url: `${base}/query` },
        queryPost: {
          method: 'POST',
          url: `${base}/query`,
          headers: { 'content-type': 'application/json' },
          payload: 'null',
        },
        queryCsv: { method: 'GET', url: `${base}/query`, headers: { accept: 'text/csv' } },
        dataFile: { method: 'GET', url: `${base}/csv` },
        events: { method: 'GET', url: '/v1/events' },
      };
      const timed = async (options: InjectOptions) => {
        const started = Date.now();
        const res = await statisticsApp.inject(options);
        return {
          status: res.statusCode,
          body: res.body,
          contentType: String(res.headers['content-type']),
          ms: Date.now() - started,
        };
      };
      const all = async () =>
        Object.fromEntries(
          await Promise.all(
            Object.entries(requests).map(async ([name, options]) => [name, await timed(options)] as const),
          ),
        );
      try {
        for (const [name, answer] of Object.entries(await all()))
          expect({ name, status: answer.status }).toEqual({ name, status: 200 });
        const pids = clusterProcesses(database.pid!);
        signalAll(pids, 'SIGSTOP');
        try {
          const answers = await all();
          for (const [name, answer] of Object.entries(answers)) {
            // A call on an open connection waits until the request's deadline (7 s) and a probe that gets no answer
            // (0.8 s); one that needs a new connection, until the connection timeout (5 s). Without the deadline: a 504
            // after REQUEST_TIMEOUT_MS (30 s).
            expect({ name, status: answer.status, contentType: answer.contentType }).toEqual({
              name,
              status: 503,
              contentType: 'application/problem+json; charset=utf-8',
            });
            expect(JSON.parse(answer.body)).toMatchObject({
              status: 503,
              title: 'Service Unavailable',
              detail: expect.any(String),
            });
            expect({ name, within10s: answer.ms < scaledMs(10000) }).toEqual({ name, within10s: true });
          }
        } finally {
          signalAll(pids, 'SIGCONT');
        }
        let ready = 0;
        for (let attempt = 0; attempt < 40 && ready !== 200; attempt++) {
          ready = (await timed({ method: 'GET', url: '/health/ready' })).status;
          if (ready !== 200) await new Promise((r) => setTimeout(r, 250));
        }
        expect(ready).toBe(200);
        const after = await all();
        for (const [name, answer] of Object.entries(after))
          expect({ name, status: answer.status }).toEqual({ name, status: 200 });
        expect(JSON.parse(after.queryPost!.body).paging.totalResults).toBe(ABSENCE_SCHOOL.rows);
        expect(after.queryCsv!.body.split('\n').filter(Boolean)).toHaveLength(ABSENCE_SCHOOL.rows + 1);
      } finally {
        await statisticsApp.close();
        await defaults.close();
      }
    },
    scaledMs(120000),
  );
});
