import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { migrateToLatestOrThrow } from '../../src/db/migrate.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { importDataSetVersion } from '../../src/statistics/import/import.js';
import { seedCatalogue } from '../../src/statistics/seed/service.js';
import {
  createReplica,
  ensureDatabase,
  initPrimary,
  pgUrl,
  standbySettings,
  startServer,
  stopServer,
  waitForReplay,
  type PgServer,
} from '../../bench/cluster/postgres.js';
import { freePort, killAllSync, waitFor } from '../../bench/cluster/processes.js';
import { TOPOLOGY } from '../../bench/cluster/topology.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import { waitUntilReady } from '../helpers/app.js';
import { createProviderWithToken, validTrainee } from '../register/helpers.js';

/**
 * A real PostgreSQL primary and a streaming replica (the embedded binaries, made by bench/cluster/postgres.ts as
 * `npm run cluster` makes them), and the service wired as src/server.ts wires it with DATABASE_READ_URL. Pausing
 * WAL replay on the replica makes the two servers tell apart: what the replica has not replayed is on the primary only.
 */
const dir = path.resolve('.test-data', `replica-${process.pid}`);
let primary: PgServer;
let replica: PgServer;
let replicaSettings: Record<string, string>;
let primaryHandle: DatabaseHandle;
let replicaAdmin: pg.Client;
const runtimes: Runtime[] = [];
const apps: FastifyInstance[] = [];
let app: FastifyInstance;
let originalTitle: string;

async function serviceOn(maxLagMs: number): Promise<FastifyInstance> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: pgUrl(primary.port),
    DATABASE_READ_URL: pgUrl(replica.port),
    DATABASE_READ_MAX_LAG_MS: String(maxLagMs),
    SEED_ON_START: 'false',
    RATE_LIMIT_REGISTER_MAX: '10000',
    QUERY_VERSION_CACHE_MS: '0',
  });
  const runtime = await openRuntime(config);
  runtimes.push(runtime);
  const built = await buildApp(config, {
    db: runtime.primary.db,
    readDb: runtime.read.db,
    readRouting: runtime.readRouting,
    pools: { primary: runtime.primary.pool, read: runtime.read.pool },
    logger: false,
  });
  apps.push(built);
  await waitUntilReady(built);
  return built;
}

async function readiness(target: FastifyInstance) {
  const response = await target.inject({ method: 'GET', url: '/health/ready' });
  expect(response.statusCode).toBe(200);
  return response.json().statisticsReads as { reads: string; replica: string; lagMs: number | null };
}

async function publicationTitle(target: FastifyInstance): Promise<{ status: number; title?: string }> {
  const response = await target.inject({ method: 'GET', url: `/v1/publications/${ABSENCE_SCHOOL.publicationId}` });
  return { status: response.statusCode, title: response.statusCode === 200 ? response.json().title : undefined };
}

async function connectReplicaAdmin(): Promise<void> {
  replicaAdmin = new pg.Client({ connectionString: pgUrl(replica.port) });
  replicaAdmin.on('error', () => undefined); // terminated when the replica is stopped
  await replicaAdmin.connect();
}

beforeAll(async () => {
  const logDir = path.join(dir, 'logs');
  const [primaryPort, replicaPort] = await Promise.all([freePort(), freePort()]);
  primary = { name: 'test-primary', dir: path.join(dir, 'primary'), port: primaryPort };
  replica = { name: 'test-replica', dir: path.join(dir, 'replica'), port: replicaPort };
  await initPrimary(primary.dir);
  await startServer(primary, TOPOLOGY.primarySettings, logDir);
  await ensureDatabase(primary.port);
  await createReplica(primary, replica.dir);
  replicaSettings = { ...TOPOLOGY.replicaSettings, ...standbySettings(primary.port) };
  await startServer(replica, replicaSettings, logDir);

  // Schema and one data set, written on the primary only; the replica gets them by streaming.
  primaryHandle = createDatabase(pgUrl(primary.port), { max: 4 });
  await migrateToLatestOrThrow(primaryHandle.db);
  await seedCatalogue(primaryHandle, { dataSetIds: [ABSENCE_SCHOOL.dataSetId] });
  await waitForReplay(primary.port, replica.port);
  originalTitle = (
    await primaryHandle.db
      .selectFrom('publications')
      .select('title')
      .where('id', '=', ABSENCE_SCHOOL.publicationId)
      .executeTakeFirstOrThrow()
  ).title;

  await connectReplicaAdmin();
  app = await serviceOn(60000);
}, 180000);

afterAll(async () => {
  for (const built of apps) await built.close();
  for (const runtime of runtimes) await runtime.close();
  await replicaAdmin?.end().catch(() => undefined);
  await primaryHandle?.close();
  if (replica) await stopServer(replica);
  if (primary) await stopServer(primary);
  killAllSync();
  await rm(dir, { recursive: true, force: true });
}, 60000);

describe('a streaming replica behind DATABASE_READ_URL', () => {
  it('really replicates: the replica is in recovery and streams from the primary', async () => {
    const { rows } = await replicaAdmin.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
    expect(rows[0]!.standby).toBe(true);
    const primaryAdmin = await primaryHandle.pool.query<{ state: string }>(
      `SELECT state FROM pg_stat_replication WHERE application_name = 'replica'`,
    );
    expect(primaryAdmin.rows.map((r) => r.state)).toEqual(['streaming']);
  });

  it('serves a statistics read from the replica and a register write (and its read-back) from the primary', async () => {
    expect((await readiness(app)).reads).toBe('replica');
    await replicaAdmin.query('SELECT pg_wal_replay_pause()');
    try {
      await primaryHandle.db
        .updateTable('publications')
        .set({ title: 'Changed on the primary' })
        .where('id', '=', ABSENCE_SCHOOL.publicationId)
        .execute();
      // The replica has not replayed the change: the statistics API answers with what the replica holds.
      expect(await publicationTitle(app)).toEqual({ status: 200, title: originalTitle });

      const provider = await createProviderWithToken(primaryHandle.db);
      const created = await app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees',
        headers: { ...provider.auth, 'content-type': 'application/json' },
        payload: JSON.stringify({ data: validTrainee() }),
      });
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().data.trainee_id as string;
      // Read back at once, although the replica has not got it: the register never reads from the replica.
      const read = await app.inject({ method: 'GET', url: `/api/v2026.1/trainees/${id}`, headers: provider.auth });
      expect(read.statusCode).toBe(200);
      expect((await primaryHandle.pool.query('SELECT 1 FROM trainees WHERE id = $1', [id])).rowCount).toBe(1);
      expect((await replicaAdmin.query('SELECT 1 FROM trainees WHERE id = $1', [id])).rowCount).toBe(0);
      expect((await readiness(app)).reads).toBe('replica');
    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
    }
    await waitForReplay(primary.port, replica.port);
    expect(await publicationTitle(app)).toEqual({ status: 200, title: 'Changed on the primary' });
  });

  it('takes a replica lagging beyond DATABASE_READ_MAX_LAG_MS out of reads, and brings it back once caught up', async () => {
    const strict = await serviceOn(300);
    await waitFor(
      'the strict service to read from the replica',
      async () => (await readiness(strict)).reads === 'replica',
      10000,
    );
    await replicaAdmin.query('SELECT pg_wal_replay_pause()');
    try {
      await primaryHandle.db
        .updateTable('publications')
        .set({ title: 'Only on the primary yet' })
        .where('id', '=', ABSENCE_SCHOOL.publicationId)
        .execute();
      const lagging = await waitFor(
        'the replica to be reported lagging',
        async () => {
          const status = await readiness(strict);
          return status.replica === 'lagging' ? status : undefined;
        },
        10000,
      );
      expect(lagging.reads).toBe('primary');
      expect(lagging.lagMs).toBeGreaterThan(300);
      // Reads went to the primary: the change the replica has not replayed is visible.
      expect(await publicationTitle(strict)).toEqual({ status: 200, title: 'Only on the primary yet' });
      // The lenient service (bound 60 s) still reads the replica, and says how far behind it is once its own check
      // (every 500 ms, on its own timer) has run since the change.
      const lenient = await waitFor(
        'the lenient service to report the lag',
        async () => {
          const status = await readiness(app);
          return (status.lagMs ?? 0) > 0 ? status : undefined;
        },
        10000,
      );
      expect(lenient.reads).toBe('replica');
      expect(await publicationTitle(app)).toEqual({ status: 200, title: 'Changed on the primary' });
    } finally {
      await replicaAdmin.query('SELECT pg_wal_replay_resume()');
    }
    await waitFor('reads back on the replica', async () => (await readiness(strict)).reads === 'replica', 10000);
    expect(await publicationTitle(strict)).toEqual({ status: 200, title: 'Only on the primary yet' });
  });

  it('falls back to the primary while the replica is down (503 at most, never a 500), and returns to it', async () => {
    await stopServer(replica);
    try {
      const seen: number[] = [];
      const answer = await waitFor(
        'a statistics answer from the primary',
        async () => {
          const result = await publicationTitle(app);
          seen.push(result.status);
          return result.status === 200 ? result : undefined;
        },
        10000,
      );
      expect(answer.title).toBe('Only on the primary yet');
      expect(
        seen.every((status) => status === 200 || status === 503),
        `statuses ${seen.join(',')}`,
      ).toBe(true);
      const status = await readiness(app);
      expect(status).toMatchObject({ reads: 'primary', replica: 'down' });
      const query = await app.inject({
        method: 'GET',
        url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?pageSize=1`,
      });
      expect(query.statusCode).toBe(200);
      expect(query.json().paging.totalResults).toBe(ABSENCE_SCHOOL.rows);
    } finally {
      await startServer(replica, replicaSettings, path.join(dir, 'logs'));
      await replicaAdmin.end().catch(() => undefined);
      await connectReplicaAdmin();
    }
    await waitFor('reads back on the replica', async () => (await readiness(app)).reads === 'replica', 15000);
  });

  it('never shows a new version on the replica before its rows: catalogue row and stored rows arrive together', async () => {
    const probe = new pg.Client({ connectionString: pgUrl(replica.port) });
    await probe.connect();
    const observations: Array<'absent' | number> = [];
    const apiStatuses: number[] = [];
    let importing = true;
    const watchReplica = (async () => {
      // Each time the replica shows the version's catalogue row, its stored rows (row index chunks) are there, all of them.
      while (importing || observations.at(-1) === 'absent') {
        const { rows } = await probe.query<{ rows_table: string }>(
          'SELECT rows_table FROM data_set_versions WHERE data_set_id = $1 AND major = 2 AND minor = 0',
          [ABSENCE_SCHOOL.dataSetId],
        );
        if (rows[0]) {
          const count = await probe.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM version_row_index_chunks WHERE rows_table = $1',
            [rows[0].rows_table],
          );
          observations.push(count.rows[0]!.n);
        } else {
          observations.push('absent');
        }
        const response = await app.inject({
          method: 'GET',
          url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?dataSetVersion=2.0&pageSize=1`,
        });
        apiStatuses.push(response.statusCode);
        if (response.statusCode === 200) expect(response.json().paging.totalResults).toBe(ABSENCE_SCHOOL.rows);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    try {
      await importDataSetVersion(primaryHandle, {
        dataSetId: ABSENCE_SCHOOL.dataSetId,
        version: '2.0',
        dataPath: ABSENCE_SCHOOL.dataPath,
        metaPath: ABSENCE_SCHOOL.metaPath,
      });
      await waitForReplay(primary.port, replica.port);
    } finally {
      importing = false;
      await watchReplica;
      await probe.end();
    }
    expect(observations[0]).toBe('absent');
    const chunks = observations.at(-1) as number;
    expect(chunks).toBeGreaterThan(2);
    expect(observations.filter((o) => o !== 'absent').every((o) => o === chunks)).toBe(true);
    expect(
      apiStatuses.every((status) => status === 404 || status === 200),
      `statuses ${[...new Set(apiStatuses)].join(',')}`,
    ).toBe(true);
  });
});
