import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { withRequestDeadline } from '../../src/db/database.js';
import { RowIndexStore } from '../../src/statistics/query/engine/index.js';
import { loadQueryVersionMeta } from '../../src/statistics/query/engine/version-meta-cache.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL, fixtureVersion, multiplyFixtureRows } from '../helpers/statistics.js';

/**
 * The statistics API's database deadline per request (DATABASE_STATISTICS_DEADLINE_MS, here 500 ms) on a database
 * that answers (a frozen one: test/hardening/frozen-database.test.ts): a call that is slow (here: waiting for a lock
 * another session holds) runs on past it; background work a request starts (a row index load) is not bound by it;
 * and a stream that has started runs on past it.
 */
let t: TestApp;
let store: RowIndexStore;
let locker: pg.Client;
const DEADLINE_MS = 500;
const BASE = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}`;

beforeAll(async () => {
  // Cold queries on SQL: these requests are held up by locks on the row table. (The stored columns' reads run under
  // the same deadline: withPooledClient.)
  store = new RowIndexStore({ buildTimeoutMs: 60000, storedColumns: false });
  t = await buildTestApp(
    { DATABASE_STATISTICS_DEADLINE_MS: String(DEADLINE_MS), QUERY_VERSION_CACHE_MS: '0' },
    { rowIndexes: store },
  );
  locker = new pg.Client({ connectionString: t.database.url });
  await locker.connect();
});

afterAll(async () => {
  await locker?.end();
  await t?.close();
});

/** Runs `fn` while another session holds an exclusive lock on `table` (every read of it waits). */
async function whileLocked<T>(table: string, fn: () => Promise<T>): Promise<T> {
  await locker.query('BEGIN');
  await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
  try {
    return await fn();
  } finally {
    await locker.query('COMMIT');
  }
}

async function timedGet(url: string, headers: Record<string, string> = {}) {
  const started = Date.now();
  const response = await t.app.inject({ method: 'GET', url, headers });
  return { response, ms: Date.now() - started };
}

describe('statistics request deadline', () => {
  it('lets a call on a database that still answers run past the deadline (a slow statement is not a frozen database)', async () => {
    const { rows_table: rowsTable } = await fixtureVersion(t.database.db);
    /** Sends the request while `table` is locked, and releases the lock three deadlines later. */
    const releaseAfter = async <T>(table: string, request: () => Promise<T>) => {
      const answer = await whileLocked(table, async () => {
        const pending = request();
        await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 3));
        return { pending };
      });
      return answer.pending;
    };

    const dataSet = await releaseAfter('data_sets', () => timedGet(BASE));
    expect(dataSet.response.statusCode).toBe(200);
    expect(dataSet.ms).toBeGreaterThanOrEqual(DEADLINE_MS * 3 - 50);

    const csv = await releaseAfter(`stats_data.${rowsTable}`, () => timedGet(`${BASE}/query`, { accept: 'text/csv' }));
    expect(csv.response.statusCode).toBe(200);
    expect(csv.ms).toBeGreaterThanOrEqual(DEADLINE_MS * 3 - 50);
    expect(csv.response.body.split('\n').filter(Boolean)).toHaveLength(ABSENCE_SCHOOL.rows + 1);
  });

  it("does not bind a row index load started by a request: the load outlives the request's deadline and then answers", async () => {
    store.forget();
    const before = store.status().outcomes;
    const query = `${BASE}/query?page=1&pageSize=10`;
    await whileLocked('version_row_index_chunks', async () => {
      // The request answers from SQL and starts the load, whose first read waits for the lock.
      const cold = await timedGet(query);
      expect(cold.response.statusCode).toBe(200);
      expect(cold.response.headers['x-query-engine']).toBe('sql');
      await new Promise((resolve) => setTimeout(resolve, DEADLINE_MS * 3));
      expect(store.status()).toMatchObject({ loading: 1, outcomes: { failed: 0 } });
    });
    await vi.waitFor(() => expect(store.status().ready).toBe(1), { timeout: 20000, interval: 50 });
    expect(store.status().outcomes).toMatchObject({ engine_form: before.engine_form + 1, failed: before.failed });
    const warm = await timedGet(query);
    expect(warm.response.headers['x-query-engine']).toBe('index');
    expect(warm.response.json().paging.totalResults).toBe(ABSENCE_SCHOOL.rows);
  });

  it('detaches the row index load from the request that starts it, also on a database that stops answering', async () => {
    const own = new RowIndexStore({ buildTimeoutMs: 60000 });
    const version = await fixtureVersion(t.database.db);
    const meta = await loadQueryVersionMeta(t.database.db, version.id, version.rows_table);
    await whileLocked('version_row_index_chunks', async () => {
      // A request whose database calls fail at its deadline (no probe: as on a frozen database) starts the load.
      const started = withRequestDeadline({ until: Date.now() + 200, applies: () => true }, () =>
        own.indexFor(t.database.db, meta),
      );
      expect(await started).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 800));
      expect(own.status()).toMatchObject({ loading: 1, outcomes: { failed: 0 } });
    });
    await vi.waitFor(() => expect(own.status().ready).toBe(1), { timeout: 20000, interval: 50 });
    expect(own.status().outcomes).toMatchObject({ engine_form: 1, failed: 0 });
  });

  it('lets a CSV export that has started run past the deadline (a client reading slowly gets every row)', async () => {
    const copies = 100;
    await multiplyFixtureRows(t.database.db, 'deadline_many_rows', copies);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const started = Date.now();
    const result = await new Promise<{ status: number; lines: number; complete: boolean }>((resolve, reject) => {
      const request = http.get(
        `http://127.0.0.1:${port}${BASE}/query`,
        { headers: { accept: 'text/csv' }, agent: false },
        (response) => {
          let text = '';
          let paused = false;
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            text += chunk;
            if (paused) return;
            // Reads nothing for three deadlines after the first bytes: the export's later reads start after it.
            paused = true;
            response.pause();
            setTimeout(() => response.resume(), DEADLINE_MS * 3);
          });
          response.on('end', () =>
            resolve({
              status: response.statusCode!,
              lines: text.split('\n').filter(Boolean).length,
              complete: response.complete,
            }),
          );
          response.on('error', reject);
        },
      );
      request.on('error', reject);
    });
    expect(Date.now() - started).toBeGreaterThan(DEADLINE_MS * 3);
    expect(result).toEqual({ status: 200, lines: ABSENCE_SCHOOL.rows * copies + 1, complete: true });
  });
});
