import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createDatabase, type DatabaseHandle } from '../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';

/**
 * The 504 of the errors table for endpoints 4 (data set) and 8 (meta): a read that waits past the statement timeout
 * (here: behind a lock another session holds) answers 504 Gateway Timeout as ProblemDetails, and its connection
 * goes back to the pool.
 */
let database: TestDatabase;
let slow: DatabaseHandle;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  slow = createDatabase(database.url, { max: 2, statementTimeoutMillis: 300 });
  app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url }), { db: slow.db, logger: false });
});

afterAll(async () => {
  await app?.close();
  await slow?.close();
  await database?.drop();
});

describe('timeouts', () => {
  // The meta of a version is kept once read (DataSetMetaViewCache), so its read is held up before its first answer;
  // a read that failed is not kept, so each of the three requests tries again.
  it.each([
    ['data set summary', `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}`, 'data_sets', true],
    ['meta', `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/meta?types=Filters`, 'version_filters', false],
  ])('%s answers 504 when its read is held up', async (_name, url, table, answerFirst) => {
    if (answerFirst) expect((await app.inject({ url })).statusCode).toBe(200);
    const locker = await database.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      for (let i = 0; i < 3; i++) {
        const response = await app.inject({ url });
        expect(response.statusCode).toBe(504);
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(response.json()).toMatchObject({ status: 504, title: 'Gateway Timeout', traceId: expect.any(String) });
      }
      // Three timed-out requests on a pool of two: the connections came back.
      expect(slow.pool.waitingCount).toBe(0);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
    expect((await app.inject({ url })).statusCode).toBe(200);
  });
});
