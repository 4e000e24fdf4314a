import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { migrateToLatestOrThrow } from '../../src/db/migrate.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

describe('database outage', () => {
  let dir: string;
  let server: EmbeddedDatabase;
  let handle: DatabaseHandle;
  let app: FastifyInstance;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'outage-'));
    await chmod(dir, 0o755);
    server = await startEmbeddedPostgres(dir);
    handle = createDatabase(server.url, { max: 3, connectionTimeoutMillis: 1000 });
    await migrateToLatestOrThrow(handle.db);
    const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: server.url, SEED_ON_START: 'false' });
    app = await buildApp(config, { db: handle.db, pools: { primary: handle.pool }, logger: false });
  }, 120000);

  afterAll(async () => {
    await app?.close();
    await handle?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 problems while the database is down, and recovers by itself when it returns', async () => {
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/v1/publications' })).statusCode).toBe(200);

    await server.stop();
    const started = Date.now();
    const ready = await app.inject({ method: 'GET', url: '/health/ready' });
    expect(ready.statusCode).toBe(503);
    const api = await app.inject({ method: 'GET', url: '/v1/publications' });
    expect(api.statusCode).toBe(503);
    expect(api.json()).toMatchObject({ status: 503 });
    expect(api.body).not.toMatch(/ECONNREFUSED|at .*\.js|stack/i);
    // Bounded: no request hangs on a dead database.
    expect(Date.now() - started).toBeLessThan(10000);

    await server.start();
    expect((await app.inject({ method: 'GET', url: '/health/ready' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/v1/publications' })).statusCode).toBe(200);
  }, 60000);
});

describe('statistics request timeout', () => {
  let t: TestApp;
  let blocker: pg.Client;

  beforeAll(async () => {
    t = await buildTestApp({ REQUEST_TIMEOUT_MS: '300' });
    blocker = new pg.Client({ connectionString: t.database.url });
    await blocker.connect();
  });
  afterAll(async () => {
    await blocker?.end().catch(() => {});
    await t?.close();
  });

  it('answers 504 when a statistics request runs past REQUEST_TIMEOUT_MS, and frees the connection', async () => {
    // Hold a lock the publications query must wait for, so the request is slow for certain.
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE publications IN ACCESS EXCLUSIVE MODE');
    const res = await t.app.inject({ method: 'GET', url: '/v1/publications' });
    expect(res.statusCode).toBe(504);
    expect(res.json()).toMatchObject({ status: 504, title: 'Gateway Timeout' });
    await blocker.query('ROLLBACK');
    expect((await t.app.inject({ method: 'GET', url: '/v1/publications' })).statusCode).toBe(200);
  });
});

describe('pool exhausted', () => {
  let t: TestApp;
  let app: FastifyInstance;
  let small: DatabaseHandle;

  beforeAll(async () => {
    t = await buildTestApp();
    // One connection, and a short wait for it: the pool of a busy instance.
    small = createDatabase(t.database.url, { max: 1, connectionTimeoutMillis: 300 });
    app = await buildApp(t.config, { db: small.db, logger: false });
  });
  afterAll(async () => {
    await app?.close();
    await small?.close();
    await t?.close();
  });

  it('makes a request wait a bounded time for a connection, then answers 503, and serves again once one is free', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // Take the only connection and keep it.
    const holder = small.db.connection().execute(async () => held);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    const res = await app.inject({ method: 'GET', url: '/v1/publications' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ status: 503 });
    expect(Date.now() - started).toBeLessThan(3000);
    release();
    await holder;
    expect((await app.inject({ method: 'GET', url: '/v1/publications' })).statusCode).toBe(200);
  });
});
