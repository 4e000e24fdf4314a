import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { migrateToLatestOrThrow } from '../../src/db/migrate.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';
import { childrenOf } from '../helpers/processes.js';
import { startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * The database restarting (fast shutdown, or the postmaster and its backends killed) while register writes are in
 * flight: the server process (a separate process, as in production) must survive, answer 503 problems meanwhile,
 * recover by itself when the database is back, and lose no write it acknowledged.
 */
let dir: string;
let database: EmbeddedDatabase;
let admin: DatabaseHandle;
let provider: TestProvider;
let server: ServerProcess;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'db-restart-'));
  await chmod(dir, 0o755);
  database = await startEmbeddedPostgres(dir);
  admin = createDatabase(database.url, { max: 2 });
  await migrateToLatestOrThrow(admin.db);
  provider = await createProviderWithToken(admin.db);
  server = await startServerProcess(path.join(dir, 'unused'), {
    DATABASE_URL: database.url,
    DATABASE_POOL_MAX: '4',
    DATABASE_CONNECTION_TIMEOUT_MS: '1000',
    DATABASE_QUERY_TIMEOUT_MS: '3000',
    RATE_LIMIT_REGISTER_MAX: '1000000',
  });
}, 180000);

afterAll(async () => {
  if (server && server.child.exitCode === null) await stopServerProcess(server.child, 'SIGTERM');
  await admin?.close();
  await database?.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Names stay unique across drills (the duplicate check would refuse a repeated person). */
let n = 0;

interface Outcome {
  status: number;
  lastName: string;
  body: string;
}

/** Register writes from `workers` concurrent loops until `stop()` resolves; every answer recorded. */
function writeLoad(workers: number, stop: Promise<void>): Promise<Outcome[]> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  const outcomes: Outcome[] = [];
  const worker = async (w: number) => {
    while (!stopped) {
      n += 1;
      const tag = `${String.fromCharCode(65 + (n % 26))}${w}x${n}`;
      const lastName = `Restart${tag}`;
      try {
        const res = await fetch(`${server.url}/api/v2026.1/trainees`, {
          method: 'POST',
          headers: { ...provider.auth, 'content-type': 'application/json' },
          body: JSON.stringify({ data: validTrainee({ first_names: `Load${tag}`, last_name: lastName }) }),
          signal: AbortSignal.timeout(15000),
        });
        outcomes.push({ status: res.status, lastName, body: await res.text() });
      } catch (error) {
        outcomes.push({ status: 0, lastName, body: String(error) });
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  return Promise.all(Array.from({ length: workers }, (_, w) => worker(w))).then(() => outcomes);
}

async function drill(fault: () => Promise<void>): Promise<Outcome[]> {
  let endLoad!: () => void;
  const load = writeLoad(8, new Promise<void>((resolve) => (endLoad = resolve)));
  await new Promise((r) => setTimeout(r, 1500));
  await fault();
  await new Promise((r) => setTimeout(r, 1500));
  await database.start();
  // Recovery by itself: writes succeed again within a few seconds.
  const recoveredBy = Date.now() + 15000;
  let recovered = false;
  while (!recovered && Date.now() < recoveredBy) {
    await new Promise((r) => setTimeout(r, 500));
    const probe = await fetch(`${server.url}/health/ready`).then(
      (r) => r.status,
      () => 0,
    );
    recovered = probe === 200;
  }
  await new Promise((r) => setTimeout(r, 1500));
  endLoad();
  const outcomes = await load;
  expect(recovered).toBe(true);
  return outcomes;
}

async function expectSurvivedWithoutLoss(outcomes: Outcome[], since: number): Promise<void> {
  // The process is alive and said nothing about an unhandled error.
  expect(server.child.exitCode).toBeNull();
  expect(server.output()).not.toMatch(/Unhandled 'error' event|uncaught|Connection terminated unexpectedly\n\s+at /i);
  const statuses = new Set(outcomes.map((o) => o.status));
  // Served before and after, 503 problems during; never a 500 or a dropped connection.
  expect(outcomes.filter((o) => o.status === 201).length).toBeGreaterThan(0);
  expect(statuses.has(503)).toBe(true);
  expect([...statuses].filter((s) => s !== 201 && s !== 503)).toEqual([]);
  const unavailable = outcomes.find((o) => o.status === 503)!;
  // The register API's own error body (as the real service's), never a stack trace or a driver message.
  expect(JSON.parse(unavailable.body)).toEqual({
    error: expect.stringMatching(/temporarily unavailable|did not answer/),
  });
  // Writes at the end of the drill succeed again.
  const last = outcomes.slice(-8);
  expect(last.some((o) => o.status === 201)).toBe(true);
  // No acknowledged write is lost.
  const acknowledged = outcomes.filter((o) => o.status === 201).map((o) => o.lastName);
  const stored = await admin.db
    .selectFrom('trainees')
    .select('last_name')
    .where('created_at', '>=', new Date(since))
    .execute();
  const storedNames = new Set(stored.map((r) => r.last_name));
  expect(acknowledged.filter((name) => !storedNames.has(name))).toEqual([]);
}

describe('database restart under register write load', () => {
  it('survives a fast shutdown (pg_ctl stop -m fast) and recovers by itself', async () => {
    const since = Date.now() - 1000;
    // SIGINT is PostgreSQL's fast shutdown, what `pg_ctl stop -m fast` sends.
    const outcomes = await drill(() => database.stop());
    await expectSurvivedWithoutLoss(outcomes, since);
  }, 120000);

  it('survives the postmaster and every backend being killed, and recovers by itself', async () => {
    const since = Date.now() - 1000;
    const outcomes = await drill(async () => {
      const pid = database.pid!;
      const backends = childrenOf(pid);
      process.kill(pid, 'SIGKILL');
      for (const backend of backends) {
        try {
          process.kill(backend, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      // Wait until every one is gone, so the restart finds no process using the old shared memory.
      const until = Date.now() + 10000;
      while (
        Date.now() < until &&
        [pid, ...backends].some((p) => {
          try {
            process.kill(p, 0);
            return true;
          } catch {
            return false;
          }
        })
      ) {
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    await expectSurvivedWithoutLoss(outcomes, since);
  }, 120000);
});
