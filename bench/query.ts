import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import http from 'node:http';
import zlib from 'node:zlib';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import autocannon from 'autocannon';
import { runCli } from '../src/cli/run.js';
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';
import { findLatestLiveVersion } from '../src/statistics/versions/access.js';
import { describeMachine, machineLine } from './machine.js';
import { FSM_DATA_SET_ID, LARGE_DATA_SET_ID } from './datasets.js';
import { writeLargeCsv } from './large-csv.js';
import {
  duckStatements,
  fetchShapes,
  fetchVariant,
  sendVariantRaw,
  type Shape,
  type ShapeVariant,
} from './scale-shapes.js';
import { freePort, startBuiltServer, startFloorServer, stopServer, untilNoRowIndexLoading } from './server-process.js';
import { EXPORT_FORMATS, measureExports } from './query-exports.js';
import { startBusyNeighbour } from './busy-neighbour.js';

/**
 * `npm run bench [-- --requests 100] [--jit-warm-up 1000] [--data-set <id>] [--label <name>]`: the five query shapes
 * (bench/scale-shapes.ts, the same as `npm run bench:scale`) against a server started in a separate process on the
 * seeded catalogue (DATA_DIR / DATABASE_URL as configured), one request at a time over HTTP (fetch and node:http in
 * turn, see measurePaired; and autocannon with ten connections for the first shape), and the same variants as SQL in DuckDB (`@duckdb/node-api`, in process, count and
 * page like the API) over zstd Parquet of the same CSV rows, in the same run.
 *
 * Every measured request differs from every other one of the run (other options, time periods, locations, pages or
 * indicator subsets of the same shape; at most as many requests as a shape has variants), so no cache of the server
 * answers a measured request twice. The figure that counts is each shape's p50 ÷ DuckDB's p50 on the same variants:
 * on a shared machine absolute times move with the load, the ratio much less. Results go to
 * bench/results/query.json (the seeded 347,830-row data set) and bench/results/query-large.json (the 5-million-row
 * data set of bench/generate-large.ts, when present; its CSV is made again under --files-dir for DuckDB). With
 * `--busy`, a busy neighbour (bench/busy-neighbour.ts: one core kept busy) runs while the shapes are measured, and the
 * results go to query[-large]-busy.json.
 */

/** Each shape's p50 ÷ DuckDB's p50 should be at most this (issue 42). */
const GOAL_OVER_DUCKDB = 0.1;
/** Unmeasured requests per shape first (from the end of its variants, never among the measured ones). */
const WARM_UP_REQUESTS = 5;
/**
 * Unmeasured requests of the first shape (from the end of its variants, before its per-shape warm-up ones; none
 * among the measured ones) before any shape is measured, so that the first shape too is measured on a server whose
 * JIT has compiled the query path: shapes 2–5 already were, after the ten-connection run of shape 1.
 */
const JIT_WARM_UP_REQUESTS = 1000;

const root = path.resolve(import.meta.dirname, '..');
const SEED_CSV = path.join(root, 'seed/spc_pupils_fsm_ethnicity_yrgp/data.csv.gz');

interface Latency {
  n: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
}

function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    n: sorted.length,
    p50Ms: round(at(0.5)),
    p90Ms: round(at(0.9)),
    p99Ms: round(at(0.99)),
    maxMs: round(sorted.at(-1) ?? NaN),
  };
}

/** A p50 ÷ DuckDB's p50, to two decimals (the figure issue 42's goal is set in). */
function overDuckdb(measured: Latency, duckdb: Latency): number {
  return Math.round((measured.p50Ms / duckdb.p50Ms) * 100) / 100;
}

/** Until the version's in-memory index answers (the server answers from the stored columns meanwhile): its seconds. */
async function warmUp(url: string, variant: ShapeVariant): Promise<number> {
  const started = Date.now();
  for (;;) {
    const response = await fetchVariant(url, variant);
    await response.arrayBuffer();
    // QUERY_INDEX_MEMORY_MB=0 measures the other engines alone.
    if (response.headers.get('x-query-engine') === 'index' || process.env.QUERY_INDEX_MEMORY_MB === '0') break;
    if (Date.now() - started > 300000) throw new Error('The row index was not ready after 300 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  const indexSeconds = (Date.now() - started) / 1000;
  // And the whole index: its values part loads after the facets answer, and would be measured with the queries (and
  // in the exports' RSS growth).
  await untilNoRowIndexLoading(url, performance.now() + 300000);
  // And until it says ready, as a balancer waits: its start-up warm-up (route schemas compiled, code lists loaded,
  // pool connections opened) runs until then and would be measured with the queries.
  while ((await fetch(`${url}/health/ready`)).status !== 200) {
    if (Date.now() - started > 300000) throw new Error('The server was not ready after 300 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return indexSeconds;
}

interface Measurement {
  connections: number;
  requests: number;
  latencyMs: { p50: number; p90: number; p99: number; mean: number; max: number };
  /** Duration runs: requests / seconds. Runs of a fixed number of requests: 1000 / mean latency (one connection). */
  requestsPerSecond: number;
  /** Whether any variant was sent twice (only possible in a duration run that outran its variants). */
  variantsRepeated: boolean;
  errors: number;
  non2xx: number;
}

async function measure(
  url: string,
  variants: ShapeVariant[],
  connections: number,
  run: { amount: number } | { duration: number },
): Promise<Measurement> {
  let next = 0;
  const result = await autocannon({
    url,
    connections,
    ...('amount' in run ? { amount: Math.min(run.amount, variants.length) } : { duration: run.duration }),
    requests: [
      {
        // Called for every request (autocannon rebuilds a request that has a setupRequest), so each one is the next variant.
        setupRequest: (request) => {
          const { http } = variants[next++ % variants.length]!;
          const headers: Record<string, string> = http.body ? { 'content-type': 'application/json' } : {};
          return {
            ...request,
            method: http.method,
            path: http.path,
            body: http.body,
            headers,
          };
        },
      },
    ],
  });
  // autocannon ends fixed-amount runs on a one-second tick, so their elapsed time says nothing; durations are exact.
  const requestsPerSecond = 'amount' in run ? 1000 / result.latency.average : result.requests.total / result.duration;
  return {
    connections,
    requests: result.requests.total,
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      mean: result.latency.average,
      max: result.latency.max,
    },
    requestsPerSecond: Math.round(requestsPerSecond * 10) / 10,
    variantsRepeated: next > variants.length,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

/** One variant over HTTP, timed client-side from the send to the last byte (sub-millisecond). */
async function timeHttp(url: string, variant: ShapeVariant): Promise<{ ms: number; engine: string }> {
  const started = performance.now();
  const response = await fetchVariant(url, variant);
  await response.arrayBuffer();
  const ms = performance.now() - started;
  if (response.status !== 200)
    throw new Error(`${variant.http.method} ${variant.http.path} answered ${response.status}`);
  return { ms, engine: response.headers.get('x-query-engine') ?? '?' };
}

/** The same variant in DuckDB: the count and the page, rows read into JS values. */
async function timeDuck(connection: DuckDBConnection, table: string, variant: ShapeVariant): Promise<number> {
  const statements = duckStatements(variant.duck, table);
  const started = performance.now();
  (await connection.runAndReadAll(statements.count)).getRows();
  (await connection.runAndReadAll(statements.page)).getRows();
  return performance.now() - started;
}

/**
 * One variant over node:http on a kept-alive connection, asking for gzip as fetch does and gunzipping the body in
 * one call: a client whose own cost is small (fetch's streams cost about 0.4 ms of a small page's time and more of a
 * large one's; docs/performance.md), so its figure is nearer the service's own time.
 */
async function timeNodeHttp(
  agent: http.Agent,
  url: string,
  variant: ShapeVariant,
): Promise<{ ms: number; engine: string }> {
  const started = performance.now();
  const { status, headers, body } = await sendVariantRaw(url, variant.http, agent);
  const coding = headers['content-encoding'];
  if (coding === 'gzip') zlib.gunzipSync(body);
  else if (coding === 'deflate') zlib.inflateSync(body);
  const ms = performance.now() - started;
  if (status !== 200) throw new Error(`${variant.http.method} ${variant.http.path} answered ${status}`);
  return { ms, engine: String(headers['x-query-engine'] ?? '?') };
}

/**
 * Each variant asked of the server and of DuckDB in turn (which goes first alternates), one at a time, so that both
 * see the machine's load of the same moments: on a shared machine that moves more than either engine does. The
 * server is asked by fetch for half the variants and by node:http for the other half (each variant once: no cache
 * answers); the ratio is fetch's, node:http's is reported beside it.
 */
async function measurePaired(
  url: string,
  agent: http.Agent,
  connection: DuckDBConnection,
  table: string,
  variants: ShapeVariant[],
) {
  const viaFetch: number[] = [];
  const viaNodeHttp: number[] = [];
  const duck: number[] = [];
  const engines: Record<string, number> = {};
  for (const [i, variant] of variants.entries()) {
    if (i % 2 === 1) duck.push(await timeDuck(connection, table, variant));
    // Clients in pairs of variants (fetch, fetch, node:http, node:http, …), so that each is asked as often right
    // after DuckDB as right after the server's previous answer.
    const byNodeHttp = Math.floor(i / 2) % 2 === 1;
    const answer = byNodeHttp ? await timeNodeHttp(agent, url, variant) : await timeHttp(url, variant);
    (byNodeHttp ? viaNodeHttp : viaFetch).push(answer.ms);
    engines[answer.engine] = (engines[answer.engine] ?? 0) + 1;
    if (i % 2 === 0) duck.push(await timeDuck(connection, table, variant));
  }
  return { http: { ...latency(viaFetch), engines }, nodeHttp: latency(viaNodeHttp), duckdb: latency(duck) };
}

/**
 * The floor of a shape: the same variants answered by bench/floor-server.ts with the bytes the service sent for each
 * (copied first, unmeasured, after the shape was measured), by the same clients in the same turns with DuckDB; the
 * warming variants first, as for the service.
 */
async function measureFloor(
  floorUrl: string,
  serviceUrl: string,
  agent: http.Agent,
  connection: DuckDBConnection,
  table: string,
  warming: ShapeVariant[],
  measured: ShapeVariant[],
) {
  for (const { http: asked } of [...warming, ...measured]) {
    const copied = await fetch(`${floorUrl}/_copy`, {
      method: 'POST',
      body: JSON.stringify({ url: serviceUrl, method: asked.method, path: asked.path, body: asked.body }),
    });
    if (copied.status !== 204) throw new Error(`The floor server could not copy ${asked.path}: ${copied.status}`);
  }
  await measurePaired(floorUrl, agent, connection, table, warming);
  const { http: viaFetch, nodeHttp, duckdb } = await measurePaired(floorUrl, agent, connection, table, measured);
  return {
    oneConnection: viaFetch,
    oneConnectionNodeHttp: nodeHttp,
    duckdb,
    overDuckdbP50: overDuckdb(viaFetch, duckdb),
    nodeHttpOverDuckdbP50: overDuckdb(nodeHttp, duckdb),
  };
}

/** The data set's rows as zstd Parquet with the file order as `row_id` (kept in `filesDir` between runs), as a DuckDB view. */
async function duckTable(duck: DuckDBConnection, filesDir: string, dataSetId: string, rows: number): Promise<string> {
  let csv = SEED_CSV;
  if (dataSetId !== FSM_DATA_SET_ID) {
    csv = path.join(filesDir, `rows-${rows}.csv.gz`);
    if (!existsSync(csv)) {
      console.log(`Generating the ${rows.toLocaleString('en-GB')} rows of bench/generate-large.ts for DuckDB ...`);
      await writeLargeCsv(SEED_CSV, `${csv}.part`, rows);
      await rename(`${csv}.part`, csv);
    }
  }
  const parquet = path.join(filesDir, `rows-${rows}.parquet`);
  if (!existsSync(parquet)) {
    await duck.run(
      `COPY (SELECT row_number() OVER () AS row_id, * FROM read_csv('${csv}', header = true, quote = '"')) TO '${parquet}.part' (FORMAT parquet, COMPRESSION zstd)`,
    );
    await rename(`${parquet}.part`, parquet);
  }
  const table = `rows_${rows}`;
  await duck.run(`CREATE OR REPLACE VIEW ${table} AS SELECT * FROM read_parquet('${parquet}')`);
  return table;
}

const TARGET_P50_MS: Record<string, number> = {
  '1-simple': 5,
  '2-complex': 20,
  '3-unfiltered': 10,
  '4-one-location': 8,
  '5-big-page': 60,
};

await runCli(async () => {
  const { values } = parseArgs({
    options: {
      // Measured requests per shape (fewer where a shape has fewer variants: none is sent twice).
      requests: { type: 'string', default: '100' },
      // Unmeasured requests before the first shape is measured (see JIT_WARM_UP_REQUESTS); 0 for none.
      'jit-warm-up': { type: 'string', default: String(JIT_WARM_UP_REQUESTS) },
      'data-set': { type: 'string', multiple: true },
      // Written to bench/results/query[-large]-<label>.json instead (e.g. a run with QUERY_VERSION_CACHE_MS=0).
      label: { type: 'string' },
      // The CSV and Parquet files DuckDB reads, kept between runs.
      'files-dir': { type: 'string', default: '.data/bench-query-files' },
      // Runs of each export (CSV, Parquet, Arrow of every matching row, bench/query-exports.ts); 0 leaves them out.
      'export-runs': { type: 'string', default: '3' },
      // Only some export formats (`parquet,arrow`), and only the exports (not the five shapes).
      'export-formats': { type: 'string', default: 'csv,parquet,arrow' },
      'exports-only': { type: 'boolean', default: false },
      // A busy neighbour (one core kept busy) while the shapes are measured; results to query[-large]-busy.json.
      busy: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const amount = Number(values.requests);
  const filesDir = path.resolve(values['files-dir']);
  await mkdir(filesDir, { recursive: true });
  const config = loadConfig();
  const runtime = await openRuntime(config, { applicationName: 'bench-query' });
  const duckInstance = await DuckDBInstance.create(':memory:');
  const duck = await duckInstance.connect();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let server: { child: ChildProcess; url: string } | undefined;
  let floorServer: ChildProcess | undefined;
  try {
    const targets: Array<{ dataSetId: string; file: string; rows: number }> = [];
    for (const [dataSetId, file] of [
      [FSM_DATA_SET_ID, 'query.json'],
      [LARGE_DATA_SET_ID, 'query-large.json'],
    ] as const) {
      if (values['data-set'] && !values['data-set'].includes(dataSetId)) continue;
      const version = await findLatestLiveVersion(runtime.read.db, dataSetId);
      if (!version) {
        console.log(
          `Data set ${dataSetId} is not loaded; skipped (${dataSetId === FSM_DATA_SET_ID ? 'npm run seed' : 'npx tsx bench/generate-large.ts'}).`,
        );
        continue;
      }
      targets.push({
        dataSetId,
        file: file.replace('.json', `${values.busy ? '-busy' : ''}${values.label ? `-${values.label}` : ''}.json`),
        rows: version.total_results,
      });
    }
    if (targets.length === 0) throw new Error('No data set to benchmark.');

    const port = await freePort();
    // The server as `npm start` runs it (the bundle, with its environment): the exports' RSS is a production figure.
    const built = startBuiltServer({
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SEED_ON_START: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_STATISTICS_MAX: '1000000000',
      ...(config.DATABASE_URL ? {} : { DATA_DIR: config.DATA_DIR }),
    });
    server = { child: built.child, url: `http://127.0.0.1:${port}` };
    await built.listening;
    console.log(`Server at ${server.url}`);
    const floorPort = await freePort();
    floorServer = await startFloorServer(floorPort);
    const floorUrl = `http://127.0.0.1:${floorPort}`;
    for (const target of targets) {
      const table = await duckTable(duck, filesDir, target.dataSetId, target.rows);
      const shapes: Shape[] = await fetchShapes(server.url, target.dataSetId);
      const warmUpSeconds = await warmUp(server.url, shapes[2]!.variants[0]!);
      const machine = describeMachine();
      console.log(
        `\n${target.dataSetId} (${target.rows.toLocaleString('en-GB')} rows): row index ready after ${warmUpSeconds.toFixed(1)} s; ${machineLine(machine)}`,
      );
      const results: Array<Record<string, unknown>> = [];
      const jitWarmUp = Number(values['jit-warm-up']);
      const neighbour = values.busy ? startBusyNeighbour() : undefined;
      try {
        if (!values['exports-only'] && jitWarmUp > 0) {
          const first = shapes[0]!.variants;
          const spare = first.slice(1 + amount, -WARM_UP_REQUESTS);
          for (const variant of spare.slice(-jitWarmUp)) await (await fetchVariant(server.url, variant)).arrayBuffer();
        }
        for (const shape of values['exports-only'] ? ([] as Shape[]) : shapes) {
          const first = shape.variants[0]!;
          const check = await fetchVariant(server.url, first);
          const body = (await check.json()) as { paging?: { totalResults: number }; results?: unknown[] };
          const duckCount = Number(
            (await duck.runAndReadAll(duckStatements(first.duck, table).count)).getRows()[0]![0],
          );
          if (body.paging?.totalResults !== duckCount)
            throw new Error(`${shape.name}: the API counts ${body.paging?.totalResults}, DuckDB ${duckCount}`);
          // A few unmeasured requests from the end of the list warm the JIT (and DuckDB's file cache); the measured ones
          // are all different from them, from the check above and from each other.
          const warming = shape.variants.slice(-WARM_UP_REQUESTS);
          await measurePaired(server.url, agent, duck, table, warming);
          const measured = shape.variants.slice(1, -WARM_UP_REQUESTS).slice(0, amount);
          const { http: single, nodeHttp, duckdb } = await measurePaired(server.url, agent, duck, table, measured);
          const floor = await measureFloor(floorUrl, server.url, agent, duck, table, warming, measured);
          const overDuckdbP50 = overDuckdb(single, duckdb);
          const nodeHttpOverDuckdbP50 = overDuckdb(nodeHttp, duckdb);
          const entry: Record<string, unknown> = {
            name: shape.name,
            description: shape.description,
            firstVariant: { totalResults: body.paging?.totalResults, results: body.results?.length },
            variantsAvailable: shape.variants.length,
            target: { p50Ms: TARGET_P50_MS[shape.name], overDuckdbP50: GOAL_OVER_DUCKDB },
            oneConnection: single,
            oneConnectionNodeHttp: nodeHttp,
            duckdb,
            overDuckdbP50,
            nodeHttpOverDuckdbP50,
            floor,
          };
          let line =
            `${shape.name.padEnd(16)} p50 ${single.p50Ms} ms  p99 ${single.p99Ms} ms  (${single.n} distinct requests)` +
            `  DuckDB p50 ${duckdb.p50Ms} ms  ÷ DuckDB ${overDuckdbP50}` +
            ` (node:http p50 ${nodeHttp.p50Ms} ms, ÷ DuckDB ${nodeHttpOverDuckdbP50});` +
            ` floor p50 ${floor.oneConnection.p50Ms} / ${floor.oneConnectionNodeHttp.p50Ms} ms,` +
            ` ÷ DuckDB ${floor.overDuckdbP50} / ${floor.nodeHttpOverDuckdbP50}`;
          if (shape.name === '1-simple') {
            const rest = shape.variants.slice(1 + single.n + nodeHttp.n, -WARM_UP_REQUESTS);
            const ten = await measure(server.url, rest, 10, { duration: 3 });
            entry.tenConnections = ten;
            line += `; 10 conn: ${ten.requestsPerSecond} req/s p50 ${ten.latencyMs.p50} ms (${ten.requests} req${ten.variantsRepeated ? ', some variants repeated' : ''})`;
          }
          console.log(line);
          results.push(entry);
        }
      } finally {
        neighbour?.stop();
      }
      const exportRuns = Number(values['export-runs']);
      const formats = values['export-formats'].split(',').filter((f) => f in EXPORT_FORMATS);
      const exports =
        exportRuns > 0 ? await measureExports(server.url, target.dataSetId, server.child.pid, exportRuns, formats) : [];
      const output = {
        benchmark: 'npm run bench (bench/query.ts)',
        dataSetId: target.dataSetId,
        rows: target.rows,
        measuredAt: new Date().toISOString(),
        machine: { ...machine, loadAverageAtEnd: os.loadavg() },
        besideBusyNeighbour: values.busy,
        method:
          'one request at a time over HTTP (fetch for half the variants, node:http on a kept-alive connection for the other half, in pairs, both asking for gzip, timed to the last byte decoded) against a separate server process, every measured request a different variant of its shape (bench/scale-shapes.ts; none sent twice in the run); ' +
          'each variant also asked of DuckDB, in turn with the server (alternating which goes first), in process (one connection) over zstd Parquet of the same CSV rows, the count and the page as SQL, rows read into JS values; ' +
          `before any shape is measured, ${jitWarmUp} unmeasured requests of other variants of the first shape (the JIT's warm-up), and ${WARM_UP_REQUESTS} of each shape before it; ` +
          'floor: after each shape, its variants once more, answered by a bare node:http server (bench/floor-server.ts, its own process) with the bytes the service sent for each, by the same clients in the same turns with DuckDB: what HTTP and the client cost by themselves',
        rowIndexReadyAfterSeconds: warmUpSeconds,
        serverSettings: {
          QUERY_VERSION_CACHE_MS: process.env.QUERY_VERSION_CACHE_MS ?? '1000 (default)',
          QUERY_INDEX_MEMORY_MB: process.env.QUERY_INDEX_MEMORY_MB ?? '1024 (default)',
        },
        overDuckdbP50: Object.fromEntries(results.map((r): [string, unknown] => [String(r.name), r.overDuckdbP50])),
        nodeHttpOverDuckdbP50: Object.fromEntries(
          results.map((r): [string, unknown] => [String(r.name), r.nodeHttpOverDuckdbP50]),
        ),
        floorOverDuckdbP50: Object.fromEntries(
          results.map((r): [string, unknown] => {
            const floor = r.floor as { overDuckdbP50: number; nodeHttpOverDuckdbP50: number };
            return [String(r.name), { fetch: floor.overDuckdbP50, nodeHttp: floor.nodeHttpOverDuckdbP50 }];
          }),
        ),
        queries: results,
        exports,
      };
      await mkdir(path.resolve('bench/results'), { recursive: true });
      await writeFile(path.resolve('bench/results', target.file), `${JSON.stringify(output, null, 2)}\n`);
      console.log(
        `÷ DuckDB p50: ${Object.values(output.overDuckdbP50).join(' / ')} (goal ≤ ${GOAL_OVER_DUCKDB} each); ` +
          `node:http: ${Object.values(output.nodeHttpOverDuckdbP50).join(' / ')}; ` +
          `the floor (bytes only) fetch ${results.map((r) => (r.floor as { overDuckdbP50: number }).overDuckdbP50).join(' / ')}, ` +
          `node:http ${results.map((r) => (r.floor as { nodeHttpOverDuckdbP50: number }).nodeHttpOverDuckdbP50).join(' / ')}` +
          `\nWrote bench/results/${target.file}`,
      );
    }
  } finally {
    agent.destroy();
    if (server) await stopServer(server.child);
    if (floorServer) await stopServer(floorServer);
    duck.closeSync();
    duckInstance.closeSync();
    await runtime.close();
  }
});
