import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../../../src/app.js';
import { loadConfig } from '../../../../src/config.js';
import { createDatabase, type DatabaseHandle } from '../../../../src/db/database.js';
import { findVersionsToWarm } from '../../../../src/statistics/query/engine/index/repository.js';
import type { Predicate, SortKey } from '../../../../src/statistics/query/engine/resolve.js';
import { RowIndexStore } from '../../../../src/statistics/query/engine/index.js';
import { buildRowIndex } from '../../../../src/statistics/storage/rebuild.js';
import { loadQueryVersionMeta, type VersionMeta } from '../../../../src/statistics/query/engine/version-meta-cache.js';
import { waitUntilReady } from '../../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/database.js';
import { ABSENCE_SCHOOL, fixtureVersion } from '../../../helpers/statistics.js';

/**
 * Loading a version's row index in the background: under a time bound of its own, not the requests'
 * statement_timeout (here 300 ms, and a build slowed to outlive it); a failed attempt waits before the next instead
 * of starting again on the next query, and shows in /metrics; the index built from rows is stored, and the next
 * instance loads the stored one; a starting instance is ready only once the versions in use are loaded.
 */
let database: TestDatabase;
let shortStatements: DatabaseHandle;
let meta: VersionMeta;
const apps: FastifyInstance[] = [];
// 216 rows read 20 at a time, 40 ms after each read: about 450 ms, longer than the 300 ms statement timeout.
const slowBuild = { rowsPerRead: 20, onBuildProgress: () => new Promise<void>((resolve) => setTimeout(resolve, 40)) };
const QUERY = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?page=1&pageSize=50`;

beforeAll(async () => {
  database = await createTestDatabase();
  const version = await fixtureVersion(database.db);
  meta = await loadQueryVersionMeta(database.db, version.id, version.rows_table);
  shortStatements = createDatabase(database.url, { max: 4, statementTimeoutMillis: 300 });
});
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});
afterAll(async () => {
  await shortStatements?.close();
  await database?.drop();
});

async function appWith(rowIndexes: RowIndexStore): Promise<FastifyInstance> {
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, QUERY_VERSION_CACHE_MS: '0' });
  const app = await buildApp(config, { db: shortStatements.db, logger: false, rowIndexes });
  apps.push(app);
  return app;
}

const dropStoredIndexes = () => database.db.deleteFrom('version_row_index_chunks').execute();

describe('row index loading', () => {
  it("finishes a build from rows that outlives the requests' statement timeout, stores it, and the next instance loads that", async () => {
    await dropStoredIndexes();
    // The same slow read without the store's own time bound is cancelled by the requests' statement timeout.
    await expect(
      buildRowIndex(shortStatements.db, meta, { rowsPerRead: 20, onProgress: slowBuild.onBuildProgress }),
    ).rejects.toThrow(/statement timeout/);

    const store = new RowIndexStore({ ...slowBuild, buildTimeoutMs: 60000, engineFormDb: shortStatements.db });
    const app = await appWith(store);
    const cold = await app.inject(QUERY);
    expect(cold.statusCode).toBe(200);
    expect(cold.headers['x-query-engine']).toBe('sql');
    await vi.waitFor(() => expect(store.status().outcomes.rows).toBe(1), { timeout: 20000, interval: 50 });
    const warm = await app.inject(QUERY);
    expect(warm.headers['x-query-engine']).toBe('index');
    expect(warm.json()).toEqual(cold.json());
    expect(store.status().outcomes.failed).toBe(0);
    const stored = await database.db
      .selectFrom('version_row_index_chunks')
      .select(['rows_table', 'version_id', 'part'])
      .distinct()
      .orderBy('part')
      .execute();
    expect(stored).toEqual([
      { rows_table: meta.rowsTable, version_id: meta.versionId, part: 'facets' },
      { rows_table: meta.rowsTable, version_id: meta.versionId, part: 'values' },
    ]);

    // Another instance: loaded from the engine form, never from the rows.
    const next = new RowIndexStore({
      onBuildProgress: () => {
        throw new Error('built from rows');
      },
    });
    const nextApp = await appWith(next);
    expect((await nextApp.inject(QUERY)).headers['x-query-engine']).toBe('stored');
    await vi.waitFor(() => expect(next.status().outcomes.engine_form).toBe(1), { timeout: 20000, interval: 50 });
    const fromStored = await nextApp.inject(QUERY);
    expect(fromStored.headers['x-query-engine']).toBe('index');
    expect(fromStored.json()).toEqual(cold.json());
  }, 120000);

  it('waits after a failed build instead of starting again on the next query, and shows it in /metrics and on retry', async () => {
    await dropStoredIndexes();
    const store = new RowIndexStore({ ...slowBuild, buildTimeoutMs: 100, retryAfterMs: 1500 });
    const app = await appWith(store);
    expect((await app.inject(QUERY)).headers['x-query-engine']).toBe('sql');
    await vi.waitFor(() => expect(store.status().outcomes.failed).toBe(1), { timeout: 20000, interval: 20 });
    for (let i = 0; i < 3; i++) {
      const response = await app.inject(QUERY);
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-query-engine']).toBe('sql');
      expect(store.buildsInProgress).toBe(0);
    }
    const metrics = (await app.inject('/metrics')).body;
    expect(metrics).toContain('statistics_row_index_loads_total{outcome="failed"} 1');
    expect(metrics).toContain('statistics_row_index_versions{state="backing_off"} 1');
    expect(metrics).toContain('statistics_row_index_versions{state="ready"} 0');

    // Once the wait is over, the next query tries again (and fails again: the bound is still too short).
    await new Promise((resolve) => setTimeout(resolve, 1600));
    await app.inject(QUERY);
    expect(store.buildsInProgress).toBe(1);
    await vi.waitFor(() => expect(store.status().outcomes.failed).toBe(2), { timeout: 20000, interval: 20 });
  }, 120000);

  it('an instance says ready once the row indexes of the versions in use are loaded, and its first query runs on them', async () => {
    await database.db.deleteFrom('version_row_index_uses').execute();
    const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, QUERY_VERSION_CACHE_MS: '0' });
    // Never queried, but published: loaded before the instance says ready, so its first users get the index.
    const first = await buildApp(config, { db: shortStatements.db, logger: false });
    apps.push(first);
    await waitUntilReady(first);
    expect((await first.inject(QUERY)).headers['x-query-engine']).toBe('index');
    await vi.waitFor(
      async () =>
        expect(await database.db.selectFrom('version_row_index_uses').select('rows_table').execute()).toEqual([
          { rows_table: meta.rowsTable },
        ]),
      { timeout: 20000, interval: 50 },
    );

    const next = await buildApp(config, { db: shortStatements.db, logger: false });
    apps.push(next);
    await waitUntilReady(next);
    expect((await next.inject(QUERY)).headers['x-query-engine']).toBe('index');
  }, 120000);

  it('warms the versions queried or published most recently, whichever was later; a withdrawn one only by its queries', async () => {
    const { dataSetId } = ABSENCE_SCHOOL;
    const ago = (minutes: number) => new Date(Date.now() - minutes * 60000);
    const added = await database.db
      .insertInto('data_set_versions')
      .values([
        {
          data_set_id: dataSetId,
          major: 91,
          minor: 0,
          status: 'Published',
          published_at: ago(14400),
          rows_table: 'x91',
        },
        { data_set_id: dataSetId, major: 92, minor: 0, status: 'Published', published_at: ago(60), rows_table: 'x92' },
        { data_set_id: dataSetId, major: 93, minor: 0, status: 'Draft', rows_table: 'x93' },
        { data_set_id: dataSetId, major: 94, minor: 0, status: 'Withdrawn', published_at: ago(1), rows_table: 'x94' },
        { data_set_id: dataSetId, major: 95, minor: 0, status: 'Published', published_at: ago(1), rows_table: null },
        {
          data_set_id: dataSetId,
          major: 96,
          minor: 0,
          status: 'Withdrawn',
          published_at: ago(20000),
          rows_table: 'x96',
        },
      ])
      .returning(['id', 'rows_table'])
      .execute();
    const id = (table: string) => added.find((v) => v.rows_table === table)!.id;
    try {
      await database.db.deleteFrom('version_row_index_uses').execute();
      await database.db
        .insertInto('version_row_index_uses')
        .values([
          { rows_table: 'x91', version_id: id('x91'), used_at: ago(1) },
          { rows_table: 'x93', version_id: id('x93'), used_at: ago(120) },
          { rows_table: 'x96', version_id: id('x96'), used_at: ago(180) },
        ])
        .execute();
      // The fixture version, published long before these, comes last.
      expect(await findVersionsToWarm(database.db, 10)).toEqual([
        { id: id('x91'), rowsTable: 'x91' },
        { id: id('x92'), rowsTable: 'x92' },
        { id: id('x93'), rowsTable: 'x93' },
        { id: id('x96'), rowsTable: 'x96' },
        { id: meta.versionId, rowsTable: meta.rowsTable },
      ]);
      expect(await findVersionsToWarm(database.db, 2)).toEqual([
        { id: id('x91'), rowsTable: 'x91' },
        { id: id('x92'), rowsTable: 'x92' },
      ]);
    } finally {
      await database.db.deleteFrom('version_row_index_uses').execute();
      await database.db
        .deleteFrom('data_set_versions')
        .where(
          'id',
          'in',
          added.map((v) => v.id),
        )
        .execute();
    }
  });

  it('is not ready (503) while a version in use is loading, for at most its time bound', async () => {
    await dropStoredIndexes();
    const metaOf = (versionId: number, rowsTable: string) =>
      loadQueryVersionMeta(shortStatements.db, versionId, rowsTable);
    const store = new RowIndexStore({ ...slowBuild, buildTimeoutMs: 60000 });
    const app = await appWith(store);
    await store.startWarmUp(shortStatements.db, metaOf, { versions: 4, timeoutMs: 60000 });
    const loading = await app.inject('/health/ready');
    expect(loading.statusCode).toBe(503);
    expect(loading.json().detail).toMatch(/still loading/);
    await waitUntilReady(app);
    expect((await app.inject(QUERY)).headers['x-query-engine']).toBe('index');

    // Out of time: ready although the load is not over.
    const late = new RowIndexStore({
      rowsPerRead: 20,
      onBuildProgress: () => new Promise<void>((resolve) => setTimeout(resolve, 300)),
      buildTimeoutMs: 60000,
    });
    const lateApp = await appWith(late);
    await dropStoredIndexes();
    await late.startWarmUp(shortStatements.db, metaOf, { versions: 4, timeoutMs: 300 });
    await waitUntilReady(lateApp, 10000);
    expect(late.buildsInProgress).toBe(1);
  }, 120000);

  it('keeps versions queried in turn within the budget: what queries cache gives way, never a whole index', async () => {
    const roomy = new RowIndexStore({ engineFormDb: database.db });
    const reference = (await roomy.ensure(database.db, meta))!;
    // One predicate per facet value (the frequent ones get cached bitsets, the columns of many values postings).
    const predicates: Predicate[] = [];
    for (const [column, { dictionary }] of reference.stored.facets) {
      for (const value of dictionary.slice(0, 20))
        predicates.push({ kind: 'in', column, values: [value], negated: false });
    }
    const sorts: SortKey[] = [{ column: 'time_period_id', direction: 'Desc', kind: 'integer' }];
    const expected = predicates.map((p) => reference.select(p, sorts, 0, 10));
    expect(reference.cachedBytes).toBeGreaterThan(0);

    // Room for the two versions' arrays and 64 bytes more: not for what the queries would cache.
    const budget = 2 * reference.partsBytes + 64;
    const store = new RowIndexStore({ memoryBudgetBytes: budget });
    const versions = [meta, { ...meta, versionId: meta.versionId + 1000 }];
    for (const version of versions) await store.ensure(database.db, version);
    for (let round = 0; round < 3; round++) {
      for (const version of versions) {
        const index = await store.indexFor(database.db, version);
        expect(index).toBeDefined();
        expect(predicates.map((p) => index!.select(p, sorts, 0, 10))).toEqual(expected);
        expect(store.bytes).toBeLessThanOrEqual(budget);
      }
    }
    expect(store.status()).toMatchObject({
      ready: 2,
      loading: 0,
      outcomes: { engine_form: 2, rows: 0, failed: 0, too_large: 0 },
    });
  }, 60000);
});
