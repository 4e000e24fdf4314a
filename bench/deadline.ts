import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.js';
import { FSM_DATA_SET_ID } from './datasets.js';
import { freePort, startServer, stopServer } from './server-process.js';

/**
 * `npm run bench:deadline`: how long the heaviest statistics requests on the seeded 347,830-row data set wait for the
 * database before their response starts (time to the response headers, which a CSV stream sends with its first
 * rows), against DATABASE_STATISTICS_DEADLINE_MS, past which a call is failed if the database does not answer a
 * probe either; and their total time (a stream runs on past the deadline). Measured on the SQL engine (`QUERY_INDEX_MEMORY_MB=0`: what a version answers with
 * before its row index is loaded, the slowest case) against a server in its own process (DATA_DIR / DATABASE_URL as
 * configured, seeded), each request `REPEAT` times in turn. Writes bench/results/deadline.json.
 */
const REPEAT = 5;
const config = loadConfig();
const base = `/v1/data-sets/${FSM_DATA_SET_ID}`;
const json = { 'content-type': 'application/json' };

interface Probe {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

const probes: Probe[] = [
  { name: 'meta', method: 'GET', path: `${base}/meta` },
  { name: 'versions', method: 'GET', path: `${base}/versions` },
  { name: 'query, unfiltered, page 1 of 1000', method: 'POST', path: `${base}/query`, headers: json, body: 'null' },
  {
    name: 'query, unfiltered, page 300 of 1000 (offset 299,000)',
    method: 'POST',
    path: `${base}/query`,
    headers: json,
    body: JSON.stringify({ page: 300, pageSize: 1000 }),
  },
  {
    name: 'query, level REG, pageSize 10000',
    method: 'POST',
    path: `${base}/query`,
    headers: json,
    body: JSON.stringify({ criteria: { geographicLevels: { eq: 'REG' } }, pageSize: 10000 }),
  },
  { name: 'query CSV, every row (347,830)', method: 'GET', path: `${base}/query`, headers: { accept: 'text/csv' } },
  { name: 'data file CSV', method: 'GET', path: `${base}/csv` },
];

const port = await freePort();
const child = await startServer({
  ...process.env,
  PORT: String(port),
  HOST: '127.0.0.1',
  LOG_LEVEL: 'warn',
  SEED_ON_START: 'false',
  RATE_LIMIT_STATISTICS_MAX: '1000000000',
  QUERY_INDEX_MEMORY_MB: '0',
});

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const results = [];
try {
  for (const probe of probes) {
    const firstByteMs: number[] = [];
    const totalMs: number[] = [];
    let bytes = 0;
    for (let i = 0; i < REPEAT; i++) {
      const started = performance.now();
      const response = await fetch(`http://127.0.0.1:${port}${probe.path}`, {
        method: probe.method,
        headers: probe.headers,
        body: probe.body,
      });
      firstByteMs.push(performance.now() - started);
      if (response.status !== 200) throw new Error(`${probe.name}: ${response.status} ${await response.text()}`);
      bytes = 0;
      const reader = response.body!.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) bytes += read.value.byteLength;
      totalMs.push(performance.now() - started);
    }
    const entry = {
      name: probe.name,
      request: `${probe.method} ${probe.path}${probe.body ? ` ${probe.body}` : ''}${probe.headers?.accept ? ` (Accept: ${probe.headers.accept})` : ''}`,
      bytes,
      firstByteMs: { median: Math.round(median(firstByteMs)), max: Math.round(Math.max(...firstByteMs)) },
      totalMs: { median: Math.round(median(totalMs)), max: Math.round(Math.max(...totalMs)) },
    };
    console.log(
      `${entry.name}: first byte ${entry.firstByteMs.median} ms (max ${entry.firstByteMs.max}), total ${entry.totalMs.median} ms (max ${entry.totalMs.max}), ${bytes} bytes`,
    );
    results.push(entry);
  }
} finally {
  await stopServer(child);
}

const output = {
  measuredAt: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    node: process.version,
    loadAverageAtEnd: os.loadavg(),
  },
  dataSetId: FSM_DATA_SET_ID,
  settings: {
    QUERY_INDEX_MEMORY_MB: '0',
    DATABASE_STATISTICS_DEADLINE_MS: config.DATABASE_STATISTICS_DEADLINE_MS,
    repeat: REPEAT,
  },
  slowestFirstByteMs: Math.max(...results.map((r) => r.firstByteMs.max)),
  requests: results,
};
await mkdir(path.resolve('bench/results'), { recursive: true });
await writeFile(path.resolve('bench/results/deadline.json'), `${JSON.stringify(output, null, 2)}\n`);
console.log(
  `Slowest first byte ${output.slowestFirstByteMs} ms (deadline ${config.DATABASE_STATISTICS_DEADLINE_MS} ms). Wrote bench/results/deadline.json`,
);
