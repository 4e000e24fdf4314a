import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { asyncBufferFromUrl, parquetMetadataAsync, parquetRead } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { describeMachine, machineLine, type MachineDescription } from './machine.js';
import { FSM_DATA_SET_ID } from './datasets.js';
import { writeLargeCsv } from './large-csv.js';
import { duckStatements, fetchShapes, fetchVariant, type Shape, type ShapeVariant } from './scale-shapes.js';
import { freePort, startBuiltServer, stopServer, untilNoRowIndexLoading } from './server-process.js';
import { SERVICE_PROCESS_ENV } from '../src/process-env.js';
import { startBusyNeighbour } from './busy-neighbour.js';

/**
 * `npm run bench:scale [-- --rows 5000000[,20000000]]`: the statistics API at catalogue scale, against DuckDB in
 * process on the same rows. For the seeded 347,830-row data set and each `--rows` size (made by repeating it over
 * earlier years, bench/large-csv.ts), in a fresh embedded PostgreSQL under `--data-dir`:
 *
 * - imports the file with the real importer (`npm run import`, its own process): rows/s and the process's peak RSS;
 *   then again beside a busy neighbour (`bench/busy-neighbour.ts`), as a draft deleted after;
 * - storage of the version in PostgreSQL (its stored row index, its row table if it has one, the stored gzip of the
 *   data file) against the same rows as zstd Parquet written by DuckDB (which also gives DuckDB's CSV read rate);
 * - starts the server cold (its own process) and sends the five query shapes of `npm run bench` in turn until the
 *   row index answers: the time from the spawn to that, and p50/p99 of each shape during that cold window;
 * - p50/p99 of each shape warm (row index) and with the index off (`QUERY_INDEX_MEMORY_MB=0`: the cold path, the
 *   stored columns read per query, which answers every version not in memory), and the server's RSS with the index;
 * - the same variants as SQL in DuckDB (`@duckdb/node-api`, count and page, like the API) over the Parquet;
 * - at the largest size, a catalogue of `--catalogue` (4) versions of it under `--catalogue-memory-mb` (512) of
 *   QUERY_INDEX_MEMORY_MB: every shape asked of each version in turn from a cold server's first request (first
 *   use), then the same of the next server (a restart) once it says ready.
 *
 * Every figure goes to bench/results/scale.json (merged per size, so a 20M run keeps the 5M figures) and the table
 * between the `scale-table` markers of docs/performance.md, with the machine's load average.
 * The service is driven only through its CLI and HTTP API. Generated CSV and Parquet files are kept in
 * `<data-dir>-files` between runs; the database is made anew each run.
 */

const root = path.resolve(import.meta.dirname, '..');
const SEED_SOURCE = path.join(root, 'seed/spc_pupils_fsm_ethnicity_yrgp');
const SEED_ROWS = 347830;
const PUBLICATION_ID = '638482b6-d015-4798-a1a4-e2311253b3e1';
const RESULTS_FILE = path.join(root, 'bench/results/scale.json');
const DOCS_FILE = path.join(root, 'docs/performance.md');

const { values } = parseArgs({
  options: {
    rows: { type: 'string', multiple: true, default: ['5000000'] },
    'data-dir': { type: 'string', default: '.data/bench-scale' },
    // Measured requests per shape and engine (each a different variant).
    requests: { type: 'string', default: '60' },
    // How long the cold server may take before its row index answers.
    'cold-limit-seconds': { type: 'string', default: '300' },
    // At the largest size: this many versions of that size under QUERY_INDEX_MEMORY_MB=--catalogue-memory-mb (0: none).
    catalogue: { type: 'string', default: '4' },
    'catalogue-memory-mb': { type: 'string', default: '512' },
    // Only rewrites the table in docs/performance.md from bench/results/scale.json.
    'table-only': { type: 'boolean', default: false },
  },
  strict: true,
});
const sizes = [...new Set([SEED_ROWS, ...values.rows.flatMap((r) => r.split(',')).map(Number)])];
for (const rows of sizes)
  if (!Number.isInteger(rows) || rows < 1)
    throw new Error(`--rows must be positive integers (got ${values.rows.join(' ')})`);
const requestsPerShape = Number(values.requests);
const catalogueVersions = Number(values.catalogue);
const catalogueMemoryMb = Number(values['catalogue-memory-mb']);
const largestSize = Math.max(...sizes);
const coldLimitMs = Number(values['cold-limit-seconds']) * 1000;
const dataDir = path.resolve(values['data-dir']);
const filesDir = `${dataDir}-files`;

interface Latency {
  n: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function latency(samples: number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  const round = (x: number) => Math.round(x * 10) / 10;
  return { n: sorted.length, p50Ms: round(at(0.5)), p99Ms: round(at(0.99)), maxMs: round(sorted.at(-1) ?? NaN) };
}

/** Peak (VmHWM) and current (VmRSS) resident memory of a process, in MB, from /proc. */
async function memoryOf(pid: number): Promise<{ peakMb: number; rssMb: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(status.match(new RegExp(`${key}:\\s+(\\d+)`))?.[1] ?? NaN);
    return { peakMb: Math.round(kb('VmHWM') / 1024), rssMb: Math.round(kb('VmRSS') / 1024) };
  } catch {
    return undefined;
  }
}

interface ImportBesideNeighbour {
  importerSeconds: number;
  rowsPerSecond: number;
  peakRssMb: number;
}

/** The seconds an import or rebuild reports of itself (`… rows in 12.3 s`); NaN where it does not. */
function secondsReported(output: string): number {
  return Number(output.match(/rows in ([\d.]+) s/)?.[1] ?? NaN);
}

const loadAverage = () => os.loadavg().map((x) => Math.round(x * 100) / 100);

/** Runs a CLI of the service compiled, as production runs it (`node dist/src/cli/<name>.js`, the service process environment), sampling its peak RSS. */
async function runServiceCli(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ output: string; seconds: number; peakRssMb: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [`dist/src/cli/${name}.js`, ...args], {
    cwd: root,
    env: { ...env, ...SERVICE_PROCESS_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let peakRssMb = 0;
  const sampler = setInterval(() => {
    void memoryOf(child.pid!).then((m) => {
      if (m && m.peakMb > peakRssMb) peakRssMb = m.peakMb;
    });
  }, 100);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(sampler);
  if (code !== 0) throw new Error(`npm run ${name} failed (${code}):\n${output.slice(-2000)}`);
  return { output, seconds: (performance.now() - started) / 1000, peakRssMb };
}

async function send(
  url: string,
  variant: ShapeVariant,
): Promise<{ ms: number; engine: string; totalResults?: number; status: number }> {
  const started = performance.now();
  const response = await fetchVariant(url, variant);
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200)
    throw new Error(`${variant.http.method} ${variant.http.path} answered ${response.status}: ${text.slice(0, 500)}`);
  const total = text.match(/"totalResults":(\d+)/)?.[1];
  return {
    ms,
    engine: response.headers.get('x-query-engine') ?? '?',
    totalResults: total ? Number(total) : undefined,
    status: response.status,
  };
}

/** `count` requests per shape, each a different variant, one at a time; the first two of each are unmeasured. */
async function measureHttp(
  url: string,
  shapes: Shape[],
  count: number,
  offset: number,
): Promise<Record<string, Latency & { engines: Record<string, number> }>> {
  const result: Record<string, Latency & { engines: Record<string, number> }> = {};
  for (const shape of shapes) {
    const samples: number[] = [];
    const engines: Record<string, number> = {};
    for (let i = 0; i < count + 2; i++) {
      const answer = await send(url, shape.variants[(offset + i) % shape.variants.length]!);
      if (i < 2) continue;
      samples.push(answer.ms);
      engines[answer.engine] = (engines[answer.engine] ?? 0) + 1;
    }
    result[shape.name] = { ...latency(samples), engines };
  }
  return result;
}

async function measureDuck(
  connection: DuckDBConnection,
  shapes: Shape[],
  count: number,
  offset: number,
): Promise<Record<string, Latency>> {
  const result: Record<string, Latency> = {};
  for (const shape of shapes) {
    const samples: number[] = [];
    for (let i = 0; i < count + 2; i++) {
      const statements = duckStatements(shape.variants[(offset + i) % shape.variants.length]!.duck, 'scale_rows');
      const started = performance.now();
      (await connection.runAndReadAll(statements.count)).getRows();
      (await connection.runAndReadAll(statements.page)).getRows();
      if (i >= 2) samples.push(performance.now() - started);
    }
    result[shape.name] = latency(samples);
  }
  return result;
}

/**
 * A catalogue larger than memory: `versions` versions of the same rows (the first already imported, the others
 * imported now as data sets of their own), a cold server with QUERY_INDEX_MEMORY_MB=`memoryMb`, and every shape asked
 * of every version in turn, `count` rounds (each request a different variant), from the server's first request on;
 * then a second server on the same database (a restart), the same rounds once its /health/ready says ready.
 */
async function measureCatalogue(
  rows: number,
  csv: string,
  first: string,
  env: NodeJS.ProcessEnv,
  databaseUrl: string,
  duckP50: Record<string, number>,
  versions: number,
  memoryMb: number,
  count: number,
): Promise<CatalogueResult> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const dataSetIds = [first];
  const importSeconds: number[] = [];
  try {
    for (let k = 2; k <= versions; k++) {
      const id = `c${k}000000-0000-4000-8000-${String(rows).padStart(12, '0')}`;
      await client.query(
        `INSERT INTO data_sets (id, publication_id, title, summary, status) VALUES ($1, $2, $3, '', 'Draft') ON CONFLICT (id) DO NOTHING`,
        [id, PUBLICATION_ID, `Scale benchmark catalogue ${k}: ${rows.toLocaleString('en-GB')} rows`],
      );
      console.log(`  catalogue: importing version ${k} of ${versions} ...`);
      const imported = await runServiceCli(
        'import',
        ['--data-set', id, '--version', '1.0', '--data', csv, '--meta', path.join(SEED_SOURCE, 'meta.csv')],
        env,
      );
      importSeconds.push(Math.round(imported.seconds * 10) / 10);
      dataSetIds.push(id);
    }
  } finally {
    await client.end();
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const serverEnv = {
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SEED_ON_START: 'false',
    RATE_LIMIT_STATISTICS_MAX: '1000000000',
    QUERY_INDEX_MEMORY_MB: String(memoryMb),
  };
  const overDuckdb = (shapes: Record<string, Latency>) =>
    Object.fromEntries(
      Object.entries(shapes).map(([name, l]) => [name, Math.round((l.p50Ms / duckP50[name]!) * 100) / 100]),
    );
  // First use: a cold server that no version was ever asked of, measured from its first request.
  let shapesOf: Shape[][];
  let firstUse: Record<string, Latency & { engines: Record<string, number> }>;
  const coldServer = startBuiltServer(serverEnv);
  try {
    await coldServer.listening;
    shapesOf = await Promise.all(dataSetIds.map((id) => fetchShapes(url, id)));
    firstUse = await catalogueRounds(url, shapesOf, count);
  } finally {
    await stopServer(coldServer.child);
  }
  // A restart (a deploy): the next instance loads the versions in use before it says ready, and a balancer sends it
  // requests only then.
  const started = performance.now();
  const server = startBuiltServer(serverEnv);
  try {
    await server.listening;
    for (;;) {
      if ((await fetch(`${url}/health/ready`)).status === 200) break;
      if (performance.now() - started > 120000)
        throw new Error('the restarted catalogue server was not ready within 120 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const readySeconds = Math.round((performance.now() - started) / 10) / 100;
    const shapes = await catalogueRounds(url, shapesOf, count);
    const metrics = (await (await fetch(`${url}/metrics`)).text())
      .split('\n')
      .filter((line) => line.startsWith('statistics_row_index'));
    const memory = await memoryOf(server.child.pid!);
    return {
      versions: dataSetIds.length,
      memoryBudgetMb: memoryMb,
      importSeconds,
      firstUse,
      firstUseOverDuckdbP50: overDuckdb(firstUse),
      restartReadySeconds: readySeconds,
      shapes,
      overDuckdbP50: overDuckdb(shapes),
      serverRssMb: { atEnd: memory?.rssMb ?? NaN, peak: memory?.peakMb ?? NaN },
      metrics,
    };
  } finally {
    await stopServer(server.child);
  }
}

/** Every shape asked of every version in turn, `count` rounds (each request a different variant). */
async function catalogueRounds(
  url: string,
  shapesOf: Shape[][],
  count: number,
): Promise<Record<string, Latency & { engines: Record<string, number> }>> {
  const samples = new Map<string, { ms: number[]; engines: Record<string, number> }>();
  for (let round = 0; round < count; round++) {
    for (let v = 0; v < shapesOf.length; v++) {
      for (const shape of shapesOf[(v + round) % shapesOf.length]!) {
        const answer = await send(url, shape.variants[(round * 7 + v) % shape.variants.length]!);
        const entry = samples.get(shape.name) ?? { ms: [], engines: {} };
        entry.ms.push(answer.ms);
        entry.engines[answer.engine] = (entry.engines[answer.engine] ?? 0) + 1;
        samples.set(shape.name, entry);
      }
    }
  }
  return Object.fromEntries([...samples].map(([name, s]) => [name, { ...latency(s.ms), engines: s.engines }]));
}

interface CatalogueResult {
  versions: number;
  memoryBudgetMb: number;
  /** Importing the versions after the first (seconds each). */
  importSeconds: number[];
  /** First use: every request from the first of a server no version was asked of before, the versions in turn. */
  firstUse?: Record<string, Latency & { engines: Record<string, number> }>;
  firstUseOverDuckdbP50?: Record<string, number>;
  /** The next instance (a restart): seconds from its start to /health/ready (the versions in use loaded). */
  restartReadySeconds?: number;
  /** The same requests to that instance once ready (before 2026-11-27 evening: the first use, there was no restart). */
  shapes: Record<string, Latency & { engines: Record<string, number> }>;
  overDuckdbP50: Record<string, number>;
  serverRssMb: { atEnd: number; peak: number };
  /** The row index lines of /metrics at the end (loads by outcome, versions held, bytes). */
  metrics: string[];
  /** Set by hand when the figures come from another run than the rest of their size (says which). */
  note?: string;
}

/**
 * What an analyst's range reader fetches of the version's Parquet download (`GET /v1/data-sets/{id}/parquet`) to read
 * one column of one row group: hyparquet over HTTP (footer, then that column chunk's byte range), bytes counted.
 */
async function readOneColumnOfOneRowGroup(
  url: string,
  dataSetId: string,
): Promise<NonNullable<SizeResult['parquetRangeRead']>> {
  let fetched = 0;
  const counting = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await fetch(input, init);
    const body = new Uint8Array(await response.arrayBuffer());
    fetched += body.byteLength;
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const file = await asyncBufferFromUrl({ url: `${url}/v1/data-sets/${dataSetId}/parquet`, fetch: counting });
  const metadata = await parquetMetadataAsync(file, { initialFetchSize: 1 << 16 });
  const rowGroup = Math.floor(metadata.row_groups.length / 2);
  const start = metadata.row_groups.slice(0, rowGroup).reduce((n, g) => n + Number(g.num_rows), 0);
  const end = start + Number(metadata.row_groups[rowGroup]!.num_rows);
  const meta = (await (await fetch(`${url}/v1/data-sets/${dataSetId}/meta`)).json()) as {
    filters: Array<{ column: string }>;
  };
  let read = 0;
  await parquetRead({
    file,
    metadata,
    compressors,
    columns: [meta.filters[0]!.column],
    rowStart: start,
    rowEnd: end,
    rowFormat: 'array',
    onComplete: (rows: unknown[][]) => (read = rows.length),
  });
  if (read !== end - start)
    throw new Error(`The range reader read ${read} rows of row group ${rowGroup}, not ${end - start}`);
  return {
    rowGroups: metadata.row_groups.length,
    rowGroup,
    fileMb: Math.round((file.byteLength / 1e6) * 10) / 10,
    fetchedKb: Math.round(fetched / 1000),
    fetchedShare: Math.round((fetched / file.byteLength) * 10000) / 10000,
  };
}

interface SizeResult {
  rows: number;
  /** The host this size was measured on (a run of other sizes keeps this one's figures, and its host). */
  machine?: MachineDescription;
  /** A range reader (hyparquet over HTTP) reading one filter column of the middle row group of the Parquet download. */
  parquetRangeRead?: { rowGroups: number; rowGroup: number; fileMb: number; fetchedKb: number; fetchedShare: number };
  catalogue?: CatalogueResult;
  dataSetId: string;
  measuredAt: string;
  loadAverage: { atStart: number[]; atEnd: number[] };
  import: {
    seconds: number;
    importerSeconds: number;
    rowsPerSecond: number;
    peakRssMb: number;
    phases?: Record<string, number>;
    /** The same import beside a busy neighbour (absent in runs before 2026-11-30). */
    besideBusyNeighbour?: ImportBesideNeighbour;
  };
  storage: {
    rowTable?: { heapMb: number; indexesMb: number; toastMb: number; totalMb: number };
    storedRowIndexMb: { facets: number; values: number };
    storedFileGzipMb: number;
    totalMb: number;
    parquetZstdMb: number;
    rowsOverParquet?: number;
    totalOverParquet: number;
    /** The version's Parquet copy of record (written by the import) and what the version's data takes over it. */
    parquetCopyMb: number;
    versionOverParquetCopy: number;
  };
  /** The engine form rebuilt from the Parquet copy (`npm run stats-admin -- rebuild-storage`), in its own process. */
  rebuildFromParquetSeconds: number;
  duckdb: { csvToParquetSeconds: number; csvRowsPerSecond: number };
  coldStart: {
    listeningSeconds: number;
    rowIndexAnsweringSeconds: number | null;
    coldWindow: Record<string, Latency & { engines: Record<string, number> }>;
  };
  warm: Record<string, Latency & { engines: Record<string, number> }>;
  /** With the index off (QUERY_INDEX_MEMORY_MB=0): what answers a version not in memory. */
  coldPath: Record<string, Latency & { engines: Record<string, number> }>;
  duckdbQueries: Record<string, Latency>;
  coldPathOverDuckdbP50: Record<string, number>;
  serverRssMb: { withIndex: number; peak: number };
  countsAgree: Record<string, { api: number | undefined; duckdb: number }>;
}

const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

async function measureSize(rows: number, databaseUrl: string, duck: DuckDBConnection): Promise<SizeResult> {
  const atStart = loadAverage();
  const dataSetId = rows === SEED_ROWS ? FSM_DATA_SET_ID : `b5000000-0000-4000-8000-${String(rows).padStart(12, '0')}`;
  let csv = path.join(SEED_SOURCE, 'data.csv.gz');
  if (rows !== SEED_ROWS) {
    csv = path.join(filesDir, `rows-${rows}.csv.gz`);
    if (!existsSync(csv)) {
      console.log(`Generating ${rows.toLocaleString('en-GB')} rows ...`);
      await writeLargeCsv(path.join(SEED_SOURCE, 'data.csv.gz'), `${csv}.part`, rows);
      await rename(`${csv}.part`, csv);
    }
  }
  const env = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO data_sets (id, publication_id, title, summary, status) VALUES ($1, $2, $3, '', 'Draft') ON CONFLICT (id) DO NOTHING`,
      [dataSetId, PUBLICATION_ID, `Scale benchmark: ${rows.toLocaleString('en-GB')} rows`],
    );

    // Import with the real importer, in its own process.
    console.log(`Importing ${rows.toLocaleString('en-GB')} rows ...`);
    const importVersion = (version: string, ...options: string[]) =>
      runServiceCli(
        'import',
        [
          '--data-set',
          dataSetId,
          '--version',
          version,
          ...options,
          '--data',
          csv,
          '--meta',
          path.join(SEED_SOURCE, 'meta.csv'),
        ],
        env,
      );
    const imported = await importVersion('1.0');
    const importerSeconds = secondsReported(imported.output);
    // The importer's `Phases: read 1.2 s, metadata 0.1 s, …` line.
    const phases = Object.fromEntries(
      [...(imported.output.match(/Phases: (.*)\./)?.[1] ?? '').matchAll(/(\w+) ([\d.]+) s/g)].map((m) => [
        m[1]!,
        Number(m[2]),
      ]),
    );
    console.log(
      `  ${importerSeconds} s in the importer (${JSON.stringify(phases)}), ${imported.seconds.toFixed(1)} s wall, peak RSS ${imported.peakRssMb} MB`,
    );

    // Storage in PostgreSQL.
    const {
      rows: [version],
    } = await client.query<{
      rows_table: string;
      total_results: number;
      file_bytes: string;
      parquet_bytes: string | null;
    }>(
      `SELECT v.rows_table, v.total_results, (SELECT octet_length(f.content_gzip)::bigint FROM data_set_version_files f WHERE f.version_id = v.id) AS file_bytes,
              (SELECT octet_length(p.bytes)::bigint FROM data_set_version_parquet p WHERE p.version_id = v.id) AS parquet_bytes
         FROM data_set_versions v WHERE v.data_set_id = $1`,
      [dataSetId],
    );
    if (!version || version.total_results !== rows)
      throw new Error(`The import of ${dataSetId} has ${version?.total_results} rows, expected ${rows}`);
    // Its row table, where it has one (the importer writes none by default: the stored row index holds the rows).
    const {
      rows: [sizes],
    } = await client.query<{ heap: string; indexes: string; total: string }>(
      `SELECT coalesce(pg_relation_size(t), 0) AS heap, coalesce(pg_indexes_size(t), 0) AS indexes, coalesce(pg_total_relation_size(t), 0) AS total
         FROM (SELECT to_regclass($1) AS t) r`,
      [`stats_data.${version.rows_table}`],
    );

    // The same rows as zstd Parquet, written by DuckDB (with the file order as row_id).
    const parquet = path.join(filesDir, `rows-${rows}.parquet`);
    await rm(parquet, { force: true });
    const converted = performance.now();
    await duck.run(
      `COPY (SELECT row_number() OVER () AS row_id, * FROM read_csv('${csv}', header = true, quote = '"')) TO '${parquet}' (FORMAT parquet, COMPRESSION zstd)`,
    );
    const csvToParquetSeconds = (performance.now() - converted) / 1000;
    const parquetBytes = (await stat(parquet)).size;
    await duck.run(`CREATE OR REPLACE VIEW scale_rows AS SELECT * FROM read_parquet('${parquet}')`);
    // The row index's engine form (both parts), read by every instance instead of the rows.
    const { rows: storedParts } = await client.query<{ part: string; bytes: string }>(
      `SELECT part, sum(octet_length(bytes))::bigint AS bytes FROM version_row_index_chunks WHERE rows_table = $1 GROUP BY part`,
      [version.rows_table],
    );
    const storedPart = (part: string) => Number(storedParts.find((p) => p.part === part)?.bytes ?? 0);
    const heap = Number(sizes!.heap);
    const indexes = Number(sizes!.indexes);
    const total = Number(sizes!.total);
    const storedIndex = storedPart('facets') + storedPart('values');
    const file = Number(version.file_bytes ?? 0);
    const storage = {
      rowTable: { heapMb: mb(heap), indexesMb: mb(indexes), toastMb: mb(total - heap - indexes), totalMb: mb(total) },
      storedRowIndexMb: { facets: mb(storedPart('facets')), values: mb(storedPart('values')) },
      storedFileGzipMb: mb(file),
      // All the version's data in PostgreSQL: its rows (stored row index, row table if any) and the data file's gzip.
      totalMb: mb(total + storedIndex + file),
      parquetZstdMb: mb(parquetBytes),
      rowsOverParquet: Math.round(((total + storedIndex) / parquetBytes) * 10) / 10,
      totalOverParquet: Math.round(((total + storedIndex + file) / parquetBytes) * 10) / 10,
      parquetCopyMb: mb(Number(version.parquet_bytes ?? 0)),
      // The issue's measure: CSV + Parquet copy + engine form over the Parquet copy alone.
      versionOverParquetCopy:
        Math.round(
          ((file + Number(version.parquet_bytes ?? 0) + storedIndex) /
            Math.max(1, Number(version.parquet_bytes ?? 0))) *
            10,
        ) / 10,
    };
    // The engine form rebuilt from the Parquet copy, as an instance does when its form is stale or corrupt.
    const rebuilt = await runServiceCli(
      'stats-admin',
      ['rebuild-storage', '--data-set', dataSetId, '--version', '1.0'],
      env,
    );
    const rebuildFromParquetSeconds = secondsReported(rebuilt.output);
    console.log(
      `  Parquet copy ${storage.parquetCopyMb} MB (version ${storage.versionOverParquetCopy}x it); engine form rebuilt from it in ${rebuildFromParquetSeconds} s`,
    );
    console.log(
      `  storage ${storage.totalMb} MB (row table ${storage.rowTable.totalMb}, stored row index ${mb(storedIndex)}, file ${storage.storedFileGzipMb}) vs Parquet ${storage.parquetZstdMb} MB`,
    );

    // The same import again beside a busy neighbour (one core kept busy), as a draft deleted after, so the storage
    // above and the server below see one version.
    const neighbour = startBusyNeighbour();
    let besideBusyNeighbour: ImportBesideNeighbour;
    try {
      const busy = await importVersion('1.1', '--draft');
      const seconds = secondsReported(busy.output);
      besideBusyNeighbour = {
        importerSeconds: seconds,
        rowsPerSecond: Math.round(rows / seconds),
        peakRssMb: busy.peakRssMb,
      };
    } finally {
      neighbour.stop();
    }
    await runServiceCli('stats-admin', ['delete-draft', '--data-set', dataSetId, '--version', '1.1'], env);
    console.log(
      `  beside a busy neighbour: ${besideBusyNeighbour.importerSeconds} s in the importer (${besideBusyNeighbour.rowsPerSecond} rows/s), peak RSS ${besideBusyNeighbour.peakRssMb} MB`,
    );

    // The server, cold: spawn, then the five shapes in turn until the row index answers. The import's dirty pages
    // are written first, so the figure is the server's start, not the database's checkpoint after a 5M-row import
    // (on 2026-11-27 the server took 4.5 s to listen right after the import, 0.9-1.9 s on the same database later).
    await client.query('CHECKPOINT');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const serverEnv = {
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
      SEED_ON_START: 'false',
      RATE_LIMIT_STATISTICS_MAX: '1000000000',
    };
    // The variants of the shapes are made from the version's metadata before the timed start, so the cold window
    // counts the server's time, not this client's making them (0.1 s) or its first fetch; with QUERY_INDEX_WARM_VERSIONS=0
    // this server neither loads nor notes the use of any row index.
    const first = startBuiltServer({ ...serverEnv, QUERY_INDEX_WARM_VERSIONS: '0' });
    let shapes: Shape[];
    try {
      await first.listening;
      shapes = await fetchShapes(url, dataSetId);
    } finally {
      await stopServer(first.child);
    }
    const cold = startBuiltServer(serverEnv);
    const spawned = performance.now();
    let coldStart: SizeResult['coldStart'];
    let warm: SizeResult['warm'];
    let serverRssMb: SizeResult['serverRssMb'];
    let parquetRangeRead: SizeResult['parquetRangeRead'];
    const countsAgree: SizeResult['countsAgree'] = {};
    try {
      const listeningSeconds = await cold.listening;
      // What a client asks first; its answer is the one read above.
      await (await fetch(`${url}/v1/data-sets/${dataSetId}/meta`)).arrayBuffer();
      const coldSamples = new Map<string, { ms: number[]; engines: Record<string, number> }>(
        shapes.map((s) => [s.name, { ms: [], engines: {} }]),
      );
      let readySeconds: number | null = null;
      for (let i = 0; readySeconds === null && performance.now() - spawned < coldLimitMs; i++) {
        for (const shape of shapes) {
          const answer = await send(url, shape.variants[i % shape.variants.length]!);
          if (answer.engine === 'index') {
            readySeconds = (performance.now() - spawned) / 1000;
            break;
          }
          const samples = coldSamples.get(shape.name)!;
          samples.ms.push(answer.ms);
          samples.engines[answer.engine] = (samples.engines[answer.engine] ?? 0) + 1;
        }
      }
      coldStart = {
        listeningSeconds: Math.round(listeningSeconds * 100) / 100,
        rowIndexAnsweringSeconds: readySeconds === null ? null : Math.round(readySeconds * 100) / 100,
        coldWindow: Object.fromEntries(
          [...coldSamples].map(([name, s]) => [name, { ...latency(s.ms), engines: s.engines }]),
        ),
      };
      console.log(
        `  cold start: listening after ${coldStart.listeningSeconds} s, row index answering after ${coldStart.rowIndexAnsweringSeconds ?? `more than ${coldLimitMs / 1000}`} s`,
      );
      // Warm means the whole index: the index answers once its facets are in, and until its values part is in too a
      // page's values come from PostgreSQL by row id (at 20M rows that took the first shape's whole run).
      await untilNoRowIndexLoading(url, spawned + coldLimitMs);
      warm = await measureHttp(url, shapes, requestsPerShape, 1000);
      for (const shape of shapes) {
        const variant = shape.variants[0]!;
        const api = (await send(url, variant)).totalResults;
        const counted = (await duck.runAndReadAll(duckStatements(variant.duck, 'scale_rows').count)).getRows()[0]![0];
        countsAgree[shape.name] = { api, duckdb: Number(counted) };
      }
      const memory = await memoryOf(cold.child.pid!);
      serverRssMb = { withIndex: memory?.rssMb ?? NaN, peak: memory?.peakMb ?? NaN };
      const rangeRead = await readOneColumnOfOneRowGroup(url, dataSetId);
      parquetRangeRead = rangeRead;
      console.log(
        `  range read of the Parquet download: one column of row group ${rangeRead.rowGroup} of ${rangeRead.rowGroups}: ${rangeRead.fetchedKb} KB of ${rangeRead.fileMb} MB (${(rangeRead.fetchedShare * 100).toFixed(2)} %)`,
      );
    } finally {
      await stopServer(cold.child);
    }

    // The cold path alone: what answers a version that is not in memory.
    const coldServer = startBuiltServer({ ...serverEnv, QUERY_INDEX_MEMORY_MB: '0' });
    let coldPath: SizeResult['coldPath'];
    try {
      await coldServer.listening;
      coldPath = await measureHttp(url, shapes, requestsPerShape, 2000);
    } finally {
      await stopServer(coldServer.child);
    }

    const duckdbQueries = await measureDuck(duck, shapes, requestsPerShape, 2000);
    const catalogue =
      catalogueVersions > 1 && rows === largestSize
        ? await measureCatalogue(
            rows,
            csv,
            dataSetId,
            env,
            databaseUrl,
            Object.fromEntries(Object.entries(duckdbQueries).map(([name, l]) => [name, l.p50Ms])),
            catalogueVersions,
            catalogueMemoryMb,
            requestsPerShape,
          )
        : undefined;
    if (catalogue) console.log(JSON.stringify({ catalogue }, null, 1));
    const result: SizeResult = {
      rows,
      dataSetId,
      measuredAt: new Date().toISOString(),
      loadAverage: { atStart, atEnd: loadAverage() },
      import: {
        seconds: Math.round(imported.seconds * 100) / 100,
        importerSeconds,
        rowsPerSecond: Math.round(rows / importerSeconds),
        peakRssMb: imported.peakRssMb,
        phases,
        besideBusyNeighbour,
      },
      storage,
      rebuildFromParquetSeconds,
      duckdb: {
        csvToParquetSeconds: Math.round(csvToParquetSeconds * 100) / 100,
        csvRowsPerSecond: Math.round(rows / csvToParquetSeconds),
      },
      coldStart,
      warm,
      coldPath,
      duckdbQueries,
      coldPathOverDuckdbP50: Object.fromEntries(
        shapes.map((s) => [s.name, Math.round((coldPath[s.name]!.p50Ms / duckdbQueries[s.name]!.p50Ms) * 100) / 100]),
      ),
      serverRssMb,
      parquetRangeRead,
      countsAgree,
      ...(catalogue ? { catalogue } : {}),
    };
    console.log(
      JSON.stringify(
        { warm: result.warm, coldPath: result.coldPath, duckdb: result.duckdbQueries, countsAgree },
        null,
        1,
      ),
    );
    return result;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The table in docs/performance.md

function fmt(n: number | null | undefined, digits = 0): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '—';
  return n.toLocaleString('en-GB', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function renderTable(results: SizeResult[]): string {
  const sorted = [...results].sort((a, b) => a.rows - b.rows);
  const head = `| Figure (\`npm run bench:scale\`) | ${sorted.map((r) => `${fmt(r.rows)} rows`).join(' | ')} |\n|---|${sorted.map(() => '---').join('|')}|`;
  const row = (label: string, cell: (r: SizeResult) => string) => `| ${label} | ${sorted.map(cell).join(' | ')} |`;
  const shapeNames = Object.keys(sorted[0]?.warm ?? {});
  const lines = [
    head,
    row(
      'measured at (UTC), load average 1/5/15 min at start → end',
      (r) =>
        `${r.measuredAt.slice(0, 16).replace('T', ' ')}, ${r.loadAverage.atStart.join('/')} → ${r.loadAverage.atEnd.join('/')}`,
    ),
    row(
      "import: rows/s (importer's own time) / peak RSS of the importing process",
      (r) =>
        `${fmt(r.import.rowsPerSecond)} rows/s (${fmt(r.import.importerSeconds, 1)} s) / ${fmt(r.import.peakRssMb)} MB`,
    ),
    row('import beside a busy neighbour (one core kept busy by `bench/busy-neighbour.ts`): rows/s / peak RSS', (r) =>
      r.import.besideBusyNeighbour
        ? `${fmt(r.import.besideBusyNeighbour.rowsPerSecond)} rows/s (${fmt(r.import.besideBusyNeighbour.importerSeconds, 1)} s) / ${fmt(r.import.besideBusyNeighbour.peakRssMb)} MB`
        : 'not recorded',
    ),
    row(
      'import phases, s (read, metadata, row table, its indexes, row index, Parquet copy after the row index, file, changes, commit)',
      (r) =>
        r.import.phases
          ? Object.values(r.import.phases)
              .map((seconds) => fmt(seconds, 1))
              .join(' / ')
          : 'not recorded',
    ),
    row('DuckDB reads the CSV (to Parquet)', (r) => `${fmt(r.duckdb.csvRowsPerSecond)} rows/s`),
    row(
      'Parquet copy of record (written by the import): size; the version (data file + copy + engine form) ÷ the copy',
      (r) =>
        r.storage.parquetCopyMb === undefined
          ? 'not recorded'
          : `${fmt(r.storage.parquetCopyMb, 1)} MB; ${fmt(r.storage.versionOverParquetCopy, 1)}×`,
    ),
    row('engine form rebuilt from the Parquet copy (`stats-admin rebuild-storage`, own process)', (r) =>
      r.rebuildFromParquetSeconds === undefined ? 'not recorded' : `${fmt(r.rebuildFromParquetSeconds, 1)} s`,
    ),
    row('range reader (hyparquet over HTTP): one column of one row group of the Parquet download, fetched', (r) =>
      r.parquetRangeRead
        ? `${fmt(r.parquetRangeRead.fetchedKb)} KB of ${fmt(r.parquetRangeRead.fileMb, 1)} MB (${fmt(r.parquetRangeRead.fetchedShare * 100, 2)} %, ${r.parquetRangeRead.rowGroups} row groups)`
        : 'not recorded',
    ),
    row('storage in PostgreSQL: all (row table + stored row index + data file gzip)', (r) =>
      r.storage.rowTable
        ? `${fmt(r.storage.totalMb)} MB (${fmt(r.storage.rowTable.totalMb)} + ${fmt(r.storage.storedRowIndexMb.facets + r.storage.storedRowIndexMb.values, 1)} + ${fmt(r.storage.storedFileGzipMb, 1)})`
        : 'not recorded',
    ),
    row(
      'stored row index (deflated): facets part / values part',
      (r) => `${fmt(r.storage.storedRowIndexMb.facets, 1)} MB / ${fmt(r.storage.storedRowIndexMb.values, 1)} MB`,
    ),
    row(
      'zstd Parquet of the same rows; PostgreSQL ÷ Parquet: the rows / all',
      (r) =>
        `${fmt(r.storage.parquetZstdMb, 1)} MB; ${fmt(r.storage.rowsOverParquet, 1)}× / ${fmt(r.storage.totalOverParquet, 1)}×`,
    ),
    row(
      'server start → listening / → row index answering',
      (r) =>
        `${fmt(r.coldStart.listeningSeconds, 1)} s / ${r.coldStart.rowIndexAnsweringSeconds === null ? 'never (limit)' : `${fmt(r.coldStart.rowIndexAnsweringSeconds, 1)} s`}`,
    ),
    row(
      'server RSS with the row index (without: it was never ready)',
      (r) => `${fmt(r.serverRssMb.withIndex)} MB${r.coldStart.rowIndexAnsweringSeconds === null ? ' (without)' : ''}`,
    ),
    ...shapeNames.map((name) =>
      row(`${name}: p50 / p99 ms — cold window`, (r) => {
        const c = r.coldStart.coldWindow[name];
        return c && c.n ? `${fmt(c.p50Ms, 1)} / ${fmt(c.p99Ms, 1)} (n ${c.n})` : '—';
      }),
    ),
    ...shapeNames.map((name) =>
      row(
        `${name}: p50 / p99 ms — cold path (index off: stored columns) · DuckDB · cold ÷ DuckDB p50`,
        (r) =>
          `${fmt(r.coldPath?.[name]?.p50Ms, 1)} / ${fmt(r.coldPath?.[name]?.p99Ms, 1)} (${enginesOf(r.coldPath?.[name]?.engines ?? {})}) · ${fmt(r.duckdbQueries[name]?.p50Ms, 1)} / ${fmt(r.duckdbQueries[name]?.p99Ms, 1)} · ${fmt(r.coldPathOverDuckdbP50?.[name], 2)}×`,
      ),
    ),
    ...shapeNames.map((name) =>
      row(`${name}: p50 / p99 ms — warm (row index; "SQL" where the index never answered)`, (r) => {
        const warm = r.warm[name];
        return `${fmt(warm?.p50Ms, 1)} / ${fmt(warm?.p99Ms, 1)}${warm && !warm.engines.index ? ' (SQL)' : ''}`;
      }),
    ),
    row(
      'catalogue: versions of this size under QUERY_INDEX_MEMORY_MB; a restarted server: start → ready, RSS at the end',
      (r) =>
        r.catalogue
          ? `${r.catalogue.versions} under ${fmt(r.catalogue.memoryBudgetMb)} MB; ${r.catalogue.restartReadySeconds === undefined ? '(no restart measured)' : `${fmt(r.catalogue.restartReadySeconds, 1)} s`}, RSS ${fmt(r.catalogue.serverRssMb.atEnd)} MB (peak ${fmt(r.catalogue.serverRssMb.peak)})${r.catalogue.note ? `; ${r.catalogue.note}` : ''}`
          : '—',
    ),
    ...shapeNames.map((name) =>
      row(
        `${name}: p50 / p99 ms — catalogue, first use: every request from a cold server's first (engines) · ÷ DuckDB p50`,
        (r) => {
          const c = r.catalogue?.firstUse?.[name];
          return c
            ? `${fmt(c.p50Ms, 1)} / ${fmt(c.p99Ms, 1)} (${enginesOf(c.engines)}) · ${fmt(r.catalogue!.firstUseOverDuckdbP50?.[name], 2)}×`
            : '—';
        },
      ),
    ),
    ...shapeNames.map((name) =>
      row(`${name}: p50 / p99 ms — catalogue, a restarted server once ready (engines) · ÷ DuckDB p50`, (r) => {
        const c = r.catalogue?.firstUse ? r.catalogue.shapes[name] : undefined;
        return c
          ? `${fmt(c.p50Ms, 1)} / ${fmt(c.p99Ms, 1)} (${enginesOf(c.engines)}) · ${fmt(r.catalogue!.overDuckdbP50[name], 2)}×`
          : '—';
      }),
    ),
  ];
  return lines.join('\n');
}

const enginesOf = (engines: Record<string, number>) =>
  Object.entries(engines)
    .map(([engine, n]) => `${engine} ${n}`)
    .join(', ');

async function writeDocsTable(results: SizeResult[]): Promise<void> {
  const docs = await readFile(DOCS_FILE, 'utf8');
  const start = '<!-- scale-table:start (written by npm run bench:scale) -->';
  const end = '<!-- scale-table:end -->';
  const block = `${start}\n${renderTable(results)}\n${end}`;
  const from = docs.indexOf(start);
  const to = docs.indexOf(end);
  if (from === -1 || to === -1) throw new Error(`docs/performance.md has no ${start} … ${end} markers`);
  await writeFile(DOCS_FILE, docs.slice(0, from) + block + docs.slice(to + end.length));
}

// ---------------------------------------------------------------------------------------------------------------

if (values['table-only']) {
  await writeDocsTable((JSON.parse(await readFile(RESULTS_FILE, 'utf8')) as { sizes: SizeResult[] }).sizes);
  process.exit(0);
}
await mkdir(filesDir, { recursive: true });
// The service runs compiled, as `npm start` runs it.
console.log('Building the service (npm run build) ...');
execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
console.log(`Starting the embedded PostgreSQL of ${dataDir} ...`);
const embedded = await startEmbeddedPostgres(dataDir, { database: 'postgres' });
// A fresh database each run (kept afterwards for looking into; the next run drops it).
const admin = new pg.Client({ connectionString: embedded.url });
await admin.connect();
await admin.query('DROP DATABASE IF EXISTS bench_scale WITH (FORCE)');
await admin.query('CREATE DATABASE bench_scale');
await admin.end();
const databaseUrl = Object.assign(new URL(embedded.url), { pathname: '/bench_scale' }).toString();
const duckInstance = await DuckDBInstance.create(':memory:');
const duck = await duckInstance.connect();
try {
  await runServiceCli('migrate', [], { ...process.env, DATABASE_URL: databaseUrl });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query(
    `INSERT INTO publications (id, title, slug, summary) VALUES ($1, 'Scale benchmark', 'scale-benchmark', '') ON CONFLICT (id) DO NOTHING`,
    [PUBLICATION_ID],
  );
  await client.end();
  const previous = existsSync(RESULTS_FILE)
    ? ((JSON.parse(await readFile(RESULTS_FILE, 'utf8')) as { sizes: SizeResult[] }).sizes ?? [])
    : [];
  const bySize = new Map(previous.map((r) => [r.rows, r]));
  for (const rows of sizes) {
    const machine = describeMachine();
    console.log(machineLine(machine));
    const result = await measureSize(rows, databaseUrl, duck);
    bySize.set(rows, { ...result, machine });
    const report = {
      benchmark: 'npm run bench:scale (bench/scale.ts)',
      method:
        "Import with `npm run import` in its own process (peak RSS sampled from /proc every 100 ms); storage: the stored row index's and the data file's bytes, and pg_total_relation_size of a row table where there is one; " +
        'the server spawned in its own process on the same embedded PostgreSQL (whose caches are warm from the import); latencies client-side over HTTP, one request at a time, each a different variant; ' +
        'DuckDB in process (one connection) over zstd Parquet of the same CSV rows, the count and the page of each variant as SQL, rows read into JS values.',
      sizes: [...bySize.values()].sort((a, b) => a.rows - b.rows),
    };
    await writeFile(RESULTS_FILE, `${JSON.stringify(report, null, 2)}\n`);
    await writeDocsTable(report.sizes);
    console.log(
      `Wrote ${path.relative(root, RESULTS_FILE)} and the table in docs/performance.md (${rows.toLocaleString('en-GB')} rows)`,
    );
  }
} finally {
  duck.closeSync();
  duckInstance.closeSync();
  await embedded.stop();
}
