import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDatabase } from '../src/db/database.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { migrateToLatestOrThrow } from '../src/db/migrate.js';
import { importDataSetVersion } from '../src/statistics/import/import.js';
import { progressBar } from '../src/statistics/import/progress.js';
import { describeMachine, machineLine } from './machine.js';

/**
 * `npm run bench:import [-- --rows 5000000]`: imports spc_pupils_fsm_ethnicity_yrgp (347,830 rows, 72 MB of CSV), or
 * with `--rows` that many of its rows repeated over earlier years (bench/large-csv.ts, written by a child process so
 * that this one's peak memory is the import's), into a fresh database and writes seconds, rows/s and peak memory to
 * bench/results/import.json (import-<rows>.json with `--rows`). Targets: at most 5 s and 300 MB peak RSS for the
 * 347,830 rows (issue 3), at least 250,000 rows/s and at most 500 MB for 5,000,000 (issue 23). Uses
 * BENCH_DATABASE_URL's server when set, else a throwaway embedded PostgreSQL. Runs the import RUNS times (default 3)
 * into separate databases and reports each and the median.
 */
const root = path.resolve(import.meta.dirname, '..');
const source = path.join(root, 'seed/spc_pupils_fsm_ethnicity_yrgp');
const runs = Number(process.env.RUNS ?? 3);
const { values: args } = parseArgs({ options: { rows: { type: 'string' } }, strict: true });
const generatedRows = args.rows === undefined ? undefined : Number(args.rows);
if (generatedRows !== undefined && (!Number.isInteger(generatedRows) || generatedRows < 1))
  throw new Error(`--rows must be a positive integer (got ${args.rows})`);
const generatedPath = path.join(os.tmpdir(), `bench-import-${process.pid}.csv.gz`);
if (generatedRows !== undefined) {
  console.log(`Generating ${generatedRows.toLocaleString('en-GB')} rows ...`);
  execFileSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '-e',
      `import('./bench/large-csv.ts').then((m) => m.writeLargeCsv(${JSON.stringify(path.join(source, 'data.csv.gz'))}, ${JSON.stringify(generatedPath)}, ${generatedRows}))`,
    ],
    { cwd: root, stdio: 'inherit' },
  );
}
const dataPath = generatedRows === undefined ? path.join(source, 'data.csv.gz') : generatedPath;

let embedded: EmbeddedDatabase | undefined;
const clusterDir = path.join(os.tmpdir(), `bench-import-${process.pid}`);
let adminUrl = process.env.BENCH_DATABASE_URL;
if (!adminUrl) {
  console.log('Starting a throwaway embedded PostgreSQL ...');
  embedded = await startEmbeddedPostgres(clusterDir, { database: 'postgres' });
  adminUrl = embedded.url;
}

const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
};

interface Run {
  seconds: number;
  rowsPerSecond: number;
  rows: number;
  timings: Record<string, number>;
}
// Measured before the runs: the host as they found it.
const machine = describeMachine();
console.log(machineLine(machine));
const results: Run[] = [];
try {
  for (let i = 0; i < runs; i++) {
    const name = `bench_import_${process.pid}_${i}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const handle = createDatabase(withDatabase(adminUrl, name), { max: 2 });
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
      const result = await importDataSetVersion(handle, {
        dataSetId: 'c5292537-e29a-4dba-a361-8363d2fb08f1',
        version: '1.0',
        dataPath,
        metaPath: path.join(source, 'meta.csv'),
        onProgress: progressBar(`run ${i + 1}/${runs}`, process.stdout),
      });
      const round = (n: number) => Math.round(n * 1000) / 1000;
      const run = {
        seconds: round(result.seconds),
        rowsPerSecond: Math.round(result.rows / result.seconds),
        rows: result.rows,
        timings: Object.fromEntries(Object.entries(result.timings).map(([k, v]) => [k, round(v)])),
      };
      results.push(run);
      console.log(
        `run ${i + 1}: ${run.rows} rows in ${run.seconds} s (${run.rowsPerSecond} rows/s) ${JSON.stringify(run.timings)}`,
      );
    } finally {
      await handle.close();
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await cleanup.end();
    }
  }
} finally {
  if (embedded) {
    await embedded.stop();
    await rm(clusterDir, { recursive: true, force: true });
  }
  await rm(generatedPath, { force: true });
}

const sorted = [...results].sort((a, b) => a.seconds - b.seconds);
const median = sorted[Math.floor(sorted.length / 2)]!;
const peakRssMb = Math.round(process.resourceUsage().maxRSS / 1024);
const targets: { seconds?: number; rowsPerSecond?: number; peakRssMb: number } =
  generatedRows === undefined ? { seconds: 5, peakRssMb: 300 } : { rowsPerSecond: 250000, peakRssMb: 500 };
const report = {
  benchmark:
    generatedRows === undefined
      ? 'import spc_pupils_fsm_ethnicity_yrgp (data.csv.gz, 347,830 rows, 72 MB of CSV)'
      : `import spc_pupils_fsm_ethnicity_yrgp repeated to ${generatedRows.toLocaleString('en-GB')} rows (bench/large-csv.ts)`,
  measuredAt: new Date().toISOString(),
  machine,
  medianSeconds: median.seconds,
  medianRowsPerSecond: median.rowsPerSecond,
  peakRssMb,
  mallocMmapThreshold: process.env.MALLOC_MMAP_THRESHOLD_ ?? null,
  targets,
  meetsTargets:
    median.seconds <= (targets.seconds ?? Infinity) &&
    median.rowsPerSecond >= (targets.rowsPerSecond ?? 0) &&
    peakRssMb <= targets.peakRssMb,
  runs: results,
  note: 'Seconds are wall time of importDataSetVersion (read, metadata, the row index made and stored, stored file, changes, commit). Peak RSS is the importing Node process (PostgreSQL runs in its own process).',
};
await mkdir(path.join(root, 'bench/results'), { recursive: true });
const resultFile = `bench/results/${generatedRows === undefined ? 'import' : `import-${generatedRows}`}.json`;
await writeFile(path.join(root, resultFile), `${JSON.stringify(report, null, 2)}\n`);
console.log(`median ${median.seconds} s, ${median.rowsPerSecond} rows/s, peak RSS ${peakRssMb} MB -> ${resultFile}`);
