import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { createDatabase, type DatabaseHandle } from '../../../src/db/database.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { ABSENCE_SCHOOL, fixtureVersion } from '../../helpers/statistics.js';

/**
 * A query that runs past the statement timeout answers 504 and gives its connection back to the pool.
 * The fixture version is pointed at a view that sleeps, on an app whose pool has a 300 ms statement timeout.
 */
let database: TestDatabase;
let slow: DatabaseHandle;
let app: FastifyInstance;
let rowsTable: string;

beforeAll(async () => {
  database = await createTestDatabase();
  const version = await fixtureVersion(database.db);
  rowsTable = version.rows_table;
  await sql`CREATE VIEW stats_data.slow_rows AS SELECT * FROM ${sql.table(`stats_data.${rowsTable}`)} WHERE (SELECT pg_sleep(2)) IS NOT NULL`.execute(
    database.db,
  );
  slow = createDatabase(database.url, { max: 2, statementTimeoutMillis: 300 });
  // No in-memory row index (budget 0): this test is about the SQL engine.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.url,
    QUERY_VERSION_CACHE_MS: '0',
    QUERY_INDEX_MEMORY_MB: '0',
  });
  app = await buildApp(config, { db: slow.db, logger: false });
});

afterAll(async () => {
  await app?.close();
  await slow?.close();
  await database?.drop();
});

describe('statement timeout', () => {
  it('answers 504 and frees the connection', async () => {
    const url = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;
    expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200);

    await database.db
      .updateTable('data_set_versions')
      .set({ rows_table: 'slow_rows' })
      .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
      .execute();
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const response = await app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: 'null',
      });
      expect(response.statusCode).toBe(504);
      expect(response.json()).toMatchObject({ status: 504, title: 'Gateway Timeout' });
      expect(Date.now() - started).toBeLessThan(1900);
    }
    // Three timed-out requests on a pool of two: the connections came back.
    expect(slow.pool.waitingCount).toBe(0);
    await database.db
      .updateTable('data_set_versions')
      .set({ rows_table: rowsTable })
      .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
      .execute();
    const after = await app.inject({ method: 'GET', url });
    expect(after.statusCode).toBe(200);
    expect(after.json().paging.totalResults).toBe(216);
  });
});
