import os from 'node:os';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import pg from 'pg';
import { createDatabase } from '../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { migrateToLatestOrThrow } from '../src/db/migrate.js';
import { importDataSetVersion } from '../src/statistics/import/import.js';

/**
 * One-off comparison behind the row layout in docs/architecture.md (`npx tsx bench/import-layout.ts`): the
 * FSM data set (347,830 rows) stored as the importer stores it (one integer column per filter and location level,
 * btree per column) against the layout the issue sketched (int arrays of option and location ids, GIN-indexed).
 * Prints sizes, index build times and median query times; writes nothing to bench/results.
 */
const root = path.resolve(import.meta.dirname, '..');
const clusterDir = path.join(os.tmpdir(), `bench-layout-${process.pid}`);
let embedded: EmbeddedDatabase | undefined;
let url = process.env.BENCH_DATABASE_URL;
if (!url) {
  embedded = await startEmbeddedPostgres(clusterDir, { database: 'layout' });
  url = embedded.url;
}
const handle = createDatabase(url, { max: 2, statementTimeoutMillis: 600000 });
const client = new pg.Client({ connectionString: url });
try {
  await migrateToLatestOrThrow(handle.db);
  await handle.db
    .insertInto('publications')
    .values({ id: '638482b6-d015-4798-a1a4-e2311253b3e1', title: 'Bench', slug: 'bench' })
    .execute();
  await handle.db
    .insertInto('data_sets')
    .values({
      id: 'c5292537-e29a-4dba-a361-8363d2fb08f1',
      publication_id: '638482b6-d015-4798-a1a4-e2311253b3e1',
      title: 'FSM',
      superseding_data_set_id: null,
    })
    .execute();
  const source = path.join(root, 'seed/spc_pupils_fsm_ethnicity_yrgp');
  const result = await importDataSetVersion(handle, {
    dataSetId: 'c5292537-e29a-4dba-a361-8363d2fb08f1',
    version: '1.0',
    dataPath: path.join(source, 'data.csv.gz'),
    metaPath: path.join(source, 'meta.csv'),
  });
  const a = `stats_data.${result.rowsTable}`;
  await client.connect();
  const time = async (text: string, params: unknown[] = []) => {
    const t = performance.now();
    const r = await client.query(text, params);
    return { ms: performance.now() - t, rows: r.rows };
  };
  const median = async (text: string, params: unknown[] = []) => {
    const times: number[] = [];
    let rows: unknown[] = [];
    for (let i = 0; i < 15; i++) {
      const r = await time(text, params);
      times.push(r.ms);
      rows = r.rows;
    }
    times.sort((x, y) => x - y);
    return { ms: Math.round(times[7]! * 100) / 100, first: rows[0] };
  };
  const b = 'stats_data.layout_arrays';
  const build =
    await time(`CREATE TABLE ${b} AS SELECT id, time_period_id, geographic_level, ARRAY[f1, f2, f3] AS options,
      ARRAY[l_la, l_nat, l_reg] AS locations, i1, i2, i3 FROM ${a} ORDER BY time_period_id DESC, id`);
  const gin =
    await time(`CREATE INDEX layout_options_gin ON ${b} USING gin (options); CREATE INDEX layout_locations_gin ON ${b} USING gin (locations);
      CREATE INDEX layout_order ON ${b} (time_period_id DESC, id); ANALYZE ${b}`);
  const size = async (table: string) =>
    Math.round(
      Number((await client.query<{ s: string }>(`SELECT pg_total_relation_size('${table}') AS s`)).rows[0]!.s) /
        1024 /
        1024,
    );
  // A common option (an ethnicity), an LA and a school type.
  const pick = async (column: string) =>
    (
      await client.query<{ v: number }>(
        `SELECT ${column} AS v FROM ${a} WHERE ${column} <> 0 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1`,
      )
    ).rows[0]!.v;
  const f2 = await pick('f2');
  const f1 = await pick('f1');
  const la = await pick('l_la');
  const queries: Array<[string, string, string]> = [
    [
      'one option: count',
      `SELECT count(*) FROM ${a} WHERE f2 = ${f2}`,
      `SELECT count(*) FROM ${b} WHERE options @> ARRAY[${f2}]`,
    ],
    [
      'option AND local authority: count',
      `SELECT count(*) FROM ${a} WHERE f2 = ${f2} AND l_la = ${la}`,
      `SELECT count(*) FROM ${b} WHERE options @> ARRAY[${f2}] AND locations @> ARRAY[${la}]`,
    ],
    [
      'two options: first page of 100 in default order',
      `SELECT * FROM ${a} WHERE f2 = ${f2} AND f1 = ${f1} ORDER BY time_period_id DESC, id LIMIT 100`,
      `SELECT * FROM ${b} WHERE options @> ARRAY[${f2}, ${f1}] ORDER BY time_period_id DESC, id LIMIT 100`,
    ],
    [
      'local authority: page 20 of 100',
      `SELECT * FROM ${a} WHERE l_la = ${la} ORDER BY time_period_id DESC, id LIMIT 100 OFFSET 1900`,
      `SELECT * FROM ${b} WHERE locations @> ARRAY[${la}] ORDER BY time_period_id DESC, id LIMIT 100 OFFSET 1900`,
    ],
  ];
  console.log(
    `rows ${result.rows}; columns layout ${await size(a)} MB with its indexes (import ${result.seconds.toFixed(2)} s, of which indexes ${result.timings.indexes.toFixed(2)} s)`,
  );
  console.log(
    `arrays layout ${await size(b)} MB with GIN + order index (build ${(build.ms / 1000).toFixed(2)} s, indexes ${(gin.ms / 1000).toFixed(2)} s)`,
  );
  for (const [name, columns, arrays] of queries) {
    const x = await median(columns);
    const y = await median(arrays);
    console.log(`${name}: columns ${x.ms} ms, arrays ${y.ms} ms`);
  }
} finally {
  await client.end().catch(() => {});
  await handle.close();
  if (embedded) {
    await embedded.stop();
    await rm(clusterDir, { recursive: true, force: true });
  }
}
