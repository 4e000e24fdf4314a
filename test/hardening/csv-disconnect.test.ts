import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ABSENCE_SCHOOL, multiplyFixtureRows } from '../helpers/statistics.js';

/**
 * A client that goes away in the middle of a streamed CSV must not keep a database connection busy: the response
 * stream's destruction reaches the cursor, which is closed, and the connection goes back to the pool.
 * The fixture version is pointed at a view that repeats its 216 rows 5,000 times (1,080,000 rows).
 */
let database: TestDatabase;
let pool: DatabaseHandle;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  database = await createTestDatabase();
  await multiplyFixtureRows(database.db, 'many_rows', 5000);
  pool = createDatabase(database.url, { max: 2, applicationName: 'csv-disconnect-test' });
  // The CSV always streams from a database cursor; no in-memory index (budget 0) reads the big view meanwhile.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    QUERY_VERSION_CACHE_MS: '0',
    QUERY_INDEX_MEMORY_MB: '0',
  });
  app = await buildApp(config, { db: pool.db, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await pool?.close();
  await database?.drop();
});

function readFirstChunkThenHangUp(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: 'text/csv' } }, (response) => {
      response.once('data', (chunk: Buffer) => {
        request.destroy();
        resolve(chunk.length);
      });
    });
    request.on('error', (error) => {
      if (!request.destroyed) reject(error);
    });
  });
}

describe('client disconnect mid-CSV', () => {
  it('closes the cursor and frees the connection', async () => {
    const url = `${base}/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?geographicLevels.eq=NAT`;
    for (let i = 0; i < 3; i++) {
      expect(await readFirstChunkThenHangUp(url)).toBeGreaterThan(0);
    }
    // Three abandoned downloads on a pool of two: each gave its connection back.
    let busy = -1;
    for (let attempt = 0; attempt < 50 && busy !== 0; attempt++) {
      await new Promise((r) => setTimeout(r, 100));
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE application_name = 'csv-disconnect-test' AND state <> 'idle'`.execute(database.db);
      // Busy in the database, or checked out of the pool and not given back.
      busy = rows[0]!.n + (pool.pool.totalCount - pool.pool.idleCount);
    }
    expect(busy).toBe(0);
    expect(pool.pool.waitingCount).toBe(0);
    const after = await fetch(`${base}/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?pageSize=1`);
    expect(after.status).toBe(200);
  }, 60000);
});
