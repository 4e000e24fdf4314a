import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { RowIndexStore } from '../../src/statistics/query/engine/index.js';
import { buildRowIndex, RowIndexTooLargeError } from '../../src/statistics/storage/rebuild.js';
import { loadQueryVersionMeta, VersionMetaCache } from '../../src/statistics/query/engine/version-meta-cache.js';
import { ResolvedVersionCache } from '../../src/statistics/versions/resolved-version-cache.js';
import { DataSetMetaViewCache } from '../../src/statistics/meta/service.js';
import { KeptBodies } from '../../src/http/kept-bodies.js';
import { VersionSummaryCache } from '../../src/statistics/versions/summaries.js';
import { gunzipSync } from 'node:zlib';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';

/** The statistics API's in-process caches are bounded by bytes, not by entry counts. */
let database: TestDatabase;
let version: { id: number; rows_table: string };

beforeAll(async () => {
  database = await createTestDatabase();
  const row = await database.db
    .selectFrom('data_set_versions')
    .select(['id', 'rows_table'])
    .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
    .executeTakeFirstOrThrow();
  version = { id: row.id, rows_table: row.rows_table! };
  // The same rows under a second name: a second index of the same size.
  await sql`CREATE VIEW stats_data.same_rows AS SELECT * FROM ${sql.table(`stats_data.${version.rows_table}`)}`.execute(
    database.db,
  );
});
afterAll(async () => {
  await database?.drop();
});

/** The test database, counting the queries sent through it. */
function countingQueries() {
  const counted = { queries: 0, db: database.db };
  counted.db = database.db.withPlugin({
    transformQuery: (args) => {
      counted.queries += 1;
      return args.node;
    },
    transformResult: async (args) => args.result,
  });
  return counted;
}

describe('statistics cache bounds', () => {
  it('keeps version metadata within its byte budget', async () => {
    const roomy = new VersionMetaCache();
    const meta = await roomy.load(database.db, version.id, version.rows_table);
    expect(roomy.size).toBe(1);
    const oneVersion = roomy.bytes;
    // Labels, ids and lookup maps of the fixture's filters, locations and time periods: kilobytes, not a count of 1.
    expect(oneVersion).toBeGreaterThan(5000);
    expect(await roomy.load(database.db, version.id, version.rows_table)).toBe(meta);

    // A budget below one version's size: the metadata is still served, but not kept.
    const tight = new VersionMetaCache(Math.floor(oneVersion / 2));
    expect((await tight.load(database.db, version.id, version.rows_table)).versionId).toBe(version.id);
    expect(tight.size).toBe(0);
    expect(tight.bytes).toBe(0);
  });

  it("keeps the meta endpoint's views within their byte budget; concurrent requests share one read", async () => {
    const roomy = new DataSetMetaViewCache();
    const counted = countingQueries();
    const [whole, filtersOnly] = await Promise.all([
      roomy.load(counted.db, version.id),
      roomy.load(counted.db, version.id, ['Filters']),
    ]);
    // One read of the five sections (filters and their options are two queries): six, not twelve.
    expect(counted.queries).toBe(6);
    expect(whole.filters.length).toBeGreaterThan(0);
    expect(whole.locations.length).toBeGreaterThan(0);
    expect(filtersOnly).toEqual({ ...whole, indicators: [], geographicLevels: [], locations: [], timePeriods: [] });
    const oneVersion = roomy.bytes;
    expect(oneVersion).toBeGreaterThan(5000);
    expect(await roomy.load(counted.db, version.id)).toBe(whole);
    expect(counted.queries).toBe(6);

    // A budget below one view's size: the view is still served, but not kept.
    const tight = new DataSetMetaViewCache(Math.floor(oneVersion / 2));
    expect(await tight.load(database.db, version.id)).toEqual(whole);
    expect(tight.bytes).toBe(0);
  });

  it("keeps the meta endpoint's answers within their byte budget; concurrent first requests serialize once", async () => {
    const json = JSON.stringify({
      filters: Array.from({ length: 2000 }, (_, i) => ({ id: `f${i}`, label: `Option ${i}` })),
    });
    let made = 0;
    const serialize = async () => {
      made += 1;
      return json;
    };
    const roomy = new KeptBodies(10 * 1024 * 1024);
    const [first, second] = await Promise.all([roomy.fetch('1:', serialize), roomy.fetch('1:', serialize)]);
    expect(made).toBe(1);
    expect(second).toBe(first);
    expect(first.body.toString()).toBe(json);
    expect(gunzipSync(first.gzip).toString()).toBe(json);
    const oneBody = roomy.bytes;
    // The JSON and its two compressed forms.
    expect(oneBody).toBeGreaterThan(json.length);

    // Room for two: the least recently used third is dropped, and made again when asked for.
    const two = new KeptBodies(Math.floor(oneBody * 2.5));
    for (const key of ['1:', '2:', '3:']) await two.fetch(key, serialize);
    expect(two.bytes).toBeLessThanOrEqual(Math.floor(oneBody * 2.5));
    made = 0;
    await two.fetch('3:', serialize);
    expect(made).toBe(0);
    await two.fetch('1:', serialize);
    expect(made).toBe(1);

    // A budget below one body's size: the body is still answered, but not kept.
    const tight = new KeptBodies(Math.floor(oneBody / 2));
    expect((await tight.fetch('1:', serialize)).body.toString()).toBe(json);
    expect(tight.bytes).toBe(0);
  });

  it('keeps version summaries within their byte budget, and reads only those it does not hold', async () => {
    const counted = countingQueries();
    const roomy = new VersionSummaryCache();
    const first = (await roomy.load(counted.db, [version.id])).get(version.id)!;
    // Filters, indicators, levels, time periods: one query each.
    expect(counted.queries).toBe(4);
    expect(first.filters.length).toBeGreaterThan(0);
    expect(first.timePeriods.start).not.toBe('');
    expect((await roomy.load(counted.db, [version.id])).get(version.id)).toBe(first);
    expect(counted.queries).toBe(4);
    // One kept and one not (an id with no rows gets an empty summary): only the other is read.
    const both = await roomy.load(counted.db, [version.id, 999999]);
    expect(counted.queries).toBe(8);
    expect(both.get(999999)).toEqual({
      timePeriods: { start: '', end: '' },
      geographicLevels: [],
      filters: [],
      indicators: [],
    });
    const oneVersion = new VersionSummaryCache();
    await oneVersion.load(database.db, [version.id]);

    // A budget below one summary's size: still answered, but not kept.
    const tight = new VersionSummaryCache(Math.floor(oneVersion.bytes / 2));
    expect((await tight.load(database.db, [version.id])).get(version.id)).toEqual(first);
    expect(tight.bytes).toBe(0);
  });

  it('keeps resolved versions within their byte budget whatever the keys clients send', () => {
    const cache = new ResolvedVersionCache<{ id: number; label: string }>(60000, 256 * 1024);
    for (let i = 0; i < 20000; i++)
      cache.set(`${ABSENCE_SCHOOL.dataSetId}|${'9'.repeat(400)}${i}`, { id: i, label: `version ${i}` });
    expect(cache.bytes).toBeLessThanOrEqual(256 * 1024);
    expect(cache.bytes).toBeGreaterThan(128 * 1024);
    // The most recent are kept, the oldest evicted.
    expect(cache.get(`${ABSENCE_SCHOOL.dataSetId}|${'9'.repeat(400)}19999`)).toEqual({
      id: 19999,
      label: 'version 19999',
    });
    expect(cache.get(`${ABSENCE_SCHOOL.dataSetId}|${'9'.repeat(400)}0`)).toBeUndefined();
  });

  it('keeps row indexes within QUERY_INDEX_MEMORY_MB, least recently used evicted, too large never kept', async () => {
    const first = await loadQueryVersionMeta(database.db, version.id, version.rows_table);
    const second = await loadQueryVersionMeta(database.db, version.id, 'same_rows');
    const probe = new RowIndexStore();
    const one = (await probe.ensure(database.db, first))!.bytes;
    expect(one).toBeGreaterThan(0);

    const store = new RowIndexStore({ memoryBudgetBytes: Math.floor(one * 1.5) });
    expect(await store.ensure(database.db, first)).toBeDefined();
    expect(await store.ensure(database.db, second)).toBeDefined();
    // Both do not fit: the older one was evicted.
    expect(store.bytes).toBeLessThanOrEqual(Math.floor(one * 1.5));
    expect(await store.indexFor(database.db, first)).toBeUndefined();
    expect(await store.indexFor(database.db, second)).toBeDefined();

    // Smaller than the index without its values too.
    const tiny = new RowIndexStore({ memoryBudgetBytes: Math.floor(one / 8) });
    expect(await tiny.ensure(database.db, first)).toBeUndefined();
    expect(tiny.bytes).toBe(0);
  });

  it('builds each version once, at most maxConcurrentBuilds at a time; the others stay on SQL meanwhile', async () => {
    const first = await loadQueryVersionMeta(database.db, version.id, version.rows_table);
    const second = await loadQueryVersionMeta(database.db, version.id, 'same_rows');
    const store = new RowIndexStore({ maxConcurrentBuilds: 1 });
    expect(await store.indexFor(database.db, first)).toBeUndefined();
    expect(await store.indexFor(database.db, first)).toBeUndefined();
    expect(await store.indexFor(database.db, second)).toBeUndefined();
    expect(store.buildsInProgress).toBe(1);
    expect(await store.ensure(database.db, first)).toBeDefined();
    expect(store.buildsInProgress).toBe(0);
    // Now the second may start.
    expect(await store.indexFor(database.db, second)).toBeUndefined();
    expect(store.buildsInProgress).toBe(1);
    expect(await store.ensure(database.db, second)).toBeDefined();
  });

  it('refuses a build whose size estimate is over the budget before reading any row, and does not try again', async () => {
    const first = await loadQueryVersionMeta(database.db, version.id, version.rows_table);
    await expect(buildRowIndex(database.db, first, { maxBytes: 1 })).rejects.toBeInstanceOf(RowIndexTooLargeError);
    const store = new RowIndexStore({ memoryBudgetBytes: 1 });
    expect(await store.ensure(database.db, first)).toBeUndefined();
    expect(await store.indexFor(database.db, first)).toBeUndefined();
    expect(store.buildsInProgress).toBe(0);
    expect(store.bytes).toBe(0);
  });
});
