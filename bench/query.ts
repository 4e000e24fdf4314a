import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { runCli } from '../src/cli/run.js';
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';
import { loadQueryVersionMeta, type VersionMeta } from '../src/statistics/query/engine/version-meta-cache.js';
import { findLatestLiveVersion } from '../src/statistics/versions/access.js';
import { FSM_DATA_SET_ID, LARGE_DATA_SET_ID, shuffle } from './datasets.js';
import { freePort, startServer, stopServer } from './server-process.js';

/**
 * `npm run bench`: the five queries of issue 8 against a server started in a separate process on the seeded
 * catalogue (DATA_DIR / DATABASE_URL as configured), with autocannon over HTTP.
 *
 * Every measured request differs from the others: each query has a list of variants of the same shape (other
 * options, time periods, locations or pages), used in turn and never repeated within a run, so the figures are
 * those of the engine, not of any cache. Then every matching row of two queries as CSV, Parquet and Arrow (time to the last
 * byte, and the server's RSS growth while it streams: `--export-runs`). Results go to bench/results/query.json (the seeded 347,830-row data set)
 * and bench/results/query-large.json (the 5-million-row data set of bench/generate-large.ts, when present).
 */
interface Variant {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

interface QueryShape {
  name: string;
  description: string;
  target: { p50Ms: number; minRequestsPerSecond?: number };
  variants: Variant[];
}

const BASE = (dataSetId: string) => `/v1/data-sets/${dataSetId}/query`;

function option(meta: VersionMeta, column: string, label: string): string {
  for (const o of meta.optionsByPublicId.values()) if (o.filter.columnName === column && o.label === label) return o.publicId;
  throw new Error(`No option "${label}" in filter ${column}`);
}

function options(meta: VersionMeta, column: string): string[] {
  return [...meta.optionsByPublicId.values()].filter((o) => o.filter.columnName === column).map((o) => o.publicId);
}

function post(dataSetId: string, body: unknown): Variant {
  return { method: 'POST', path: BASE(dataSetId), body: JSON.stringify(body) };
}

function get(dataSetId: string, query: Record<string, string>): Variant {
  return { method: 'GET', path: `${BASE(dataSetId)}?${new URLSearchParams(query).toString()}` };
}

function shapes(dataSetId: string, meta: VersionMeta): QueryShape[] {
  const periods = meta.timePeriods.filter((t) => t.code === 'AY').map((t) => t.period);
  const recent = periods.slice(-7);
  const tp = (period: string) => ({ period, code: 'AY' });
  const regions = meta.locationsByLevel.get('REG') ?? [];
  const las = meta.locationsByLevel.get('LA') ?? [];

  // 1. phase = State-funded primary, LA, 2021/22, characteristic = Total; variants: other phases, years, characteristics.
  const phases = options(meta, 'phase_type_grouping');
  const characteristics = options(meta, 'characteristic');
  const simple: Variant[] = [];
  const primary = option(meta, 'phase_type_grouping', 'State-funded primary');
  const total = option(meta, 'characteristic', 'Total');
  const indicatorSubsets = (() => {
    const ids = meta.indicators.map((i) => i.publicId);
    return Array.from({ length: (1 << ids.length) - 1 }, (_, mask) => ids.filter((_, i) => ((mask + 1) >> i) & 1));
  })();
  const simpleBody = (phase: string, characteristic: string, period: string, level: string, indicators?: string[]) => ({
    ...(indicators ? { indicators } : {}),
    criteria: { and: [{ filters: { eq: phase } }, { filters: { eq: characteristic } }, { geographicLevels: { eq: level } }, { timePeriods: { eq: tp(period) } }] },
  });
  simple.push(post(dataSetId, simpleBody(primary, total, '2021/2022', 'LA')));
  // LA variants first (measured with one connection), then REG and NAT ones (for the ten-connection run).
  for (const level of ['LA', 'REG', 'NAT']) for (const period of recent) for (const phase of phases) for (const characteristic of characteristics) {
    if (phase === primary && characteristic === total && period === '2021/2022' && level === 'LA') continue;
    simple.push(post(dataSetId, simpleBody(phase, characteristic, period, level)));
  }
  // More of the same shape for the ten-connection run: each with a subset of the indicators.
  for (const indicators of indicatorSubsets.slice(0, -1)) for (const level of ['REG', 'NAT']) for (const period of recent) for (const phase of phases) {
    for (const characteristic of characteristics) simple.push(post(dataSetId, simpleBody(phase, characteristic, period, level, indicators)));
  }

  // 2. (characteristic in [Asian - Indian, Black - Black African, Year 7] OR fsm = known eligible) AND NOT London
  //    AND time period >= 2018/19 AND level in (REG, LA), page 2; variants: other excluded regions, start years, pages.
  const fsmKnown = [...meta.optionsByPublicId.values()].find((o) => o.filter.columnName === 'fsm_eligibility' && /^Known to be eligible/.test(o.label))!.publicId;
  const complexBody = (regionCode: string, from: string, page: number) => ({
    criteria: {
      and: [
        {
          or: [
            { filters: { in: ['Asian - Indian', 'Black - Black African', 'Year 7'].map((l) => option(meta, 'characteristic', l)) } },
            { filters: { eq: fsmKnown } },
          ],
        },
        { not: { locations: { eq: { level: 'REG', code: regionCode } } } },
        { timePeriods: { gte: tp(from) } },
        { geographicLevels: { in: ['REG', 'LA'] } },
      ],
    },
    page,
    pageSize: 1000,
  });
  const complex: Variant[] = [post(dataSetId, complexBody('E12000007', '2018/2019', 2))];
  for (const page of [2, 3, 4, 5, 6, 7, 8, 9]) for (const from of periods.slice(-5)) for (const region of regions) {
    if (region.code === 'E12000007' && from === '2018/2019' && page === 2) continue;
    if (region.code) complex.push(post(dataSetId, complexBody(region.code, from, page)));
  }

  // 3. unfiltered, page 1 of 1000; variants: the other pages.
  const unfiltered: Variant[] = [];
  for (let page = 1; page <= 400; page++) unfiltered.push(get(dataSetId, { page: String(page) }));

  // 4. one location, LA E09000033, all years; variants: every other LA.
  const oneLocation: Variant[] = [get(dataSetId, { 'locations.eq': 'LA|code|E09000033' })];
  for (const la of las) if (la.code && la.code !== 'E09000033') oneLocation.push(get(dataSetId, { 'locations.eq': `LA|code|${la.code}` }));

  // 5. level REG, pageSize 10000; variants: pages, one year left out, indicator subsets.
  const indicatorIds = meta.indicators.map((i) => i.publicId);
  const subsets = Array.from({ length: (1 << indicatorIds.length) - 1 }, (_, mask) => indicatorIds.filter((_, i) => ((mask + 1) >> i) & 1));
  const bigPage: Variant[] = [get(dataSetId, { 'geographicLevels.eq': 'REG', pageSize: '10000' })];
  for (const page of ['1', '2']) for (const left of ['', ...recent]) for (const subset of subsets) {
    const query: Record<string, string> = { 'geographicLevels.eq': 'REG', pageSize: '10000', page, indicators: subset.join(',') };
    if (left) query['timePeriods.notEq'] = `${left}|AY`;
    bigPage.push(get(dataSetId, query));
  }

  return [
    {
      name: '1-simple',
      description: 'phase = State-funded primary, level LA, 2021/22 AY, characteristic = Total',
      target: { p50Ms: 5, minRequestsPerSecond: 800 },
      variants: [simple[0]!, ...shuffle(simple.slice(1).filter((v) => v.body!.includes('"LA"'))), ...shuffle(simple.slice(1).filter((v) => !v.body!.includes('"LA"')))],
    },
    {
      name: '2-complex',
      description: '(characteristic in [Asian - Indian, Black - Black African, Year 7] OR fsm known eligible) AND NOT London AND >= 2018/19 AND level in [REG, LA], page 2 of 1000',
      target: { p50Ms: 20 },
      variants: [complex[0]!, ...shuffle(complex.slice(1))],
    },
    { name: '3-unfiltered', description: 'no criteria, page 1 of 1000', target: { p50Ms: 10 }, variants: unfiltered },
    { name: '4-one-location', description: 'LA E09000033, all years', target: { p50Ms: 8 }, variants: [oneLocation[0]!, ...shuffle(oneLocation.slice(1))] },
    { name: '5-big-page', description: 'level REG, pageSize 10000', target: { p50Ms: 60 }, variants: [bigPage[0]!, ...shuffle(bigPage.slice(1))] },
  ];
}

async function send(url: string, variant: Variant): Promise<Response> {
  return fetch(`${url}${variant.path}`, {
    method: variant.method,
    headers: variant.body ? { 'content-type': 'application/json' } : {},
    body: variant.body,
  });
}

/** Until the version's in-memory index is built (the server answers from SQL meanwhile). */
async function warmUp(url: string, variant: Variant): Promise<number> {
  const started = Date.now();
  for (;;) {
    const response = await send(url, variant);
    await response.arrayBuffer();
    // QUERY_INDEX_MEMORY_MB=0 measures the SQL engine alone.
    if (response.headers.get('x-query-engine') === 'index' || process.env.QUERY_INDEX_MEMORY_MB === '0') return (Date.now() - started) / 1000;
    if (Date.now() - started > 300000) throw new Error('The row index was not ready after 300 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The server's resident set size (Linux `/proc`), in MB; undefined elsewhere. */
function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface ExportRun {
  seconds: number;
  bytes: number;
  /** The server's RSS growth over its RSS before the request, at its highest while the answer streamed. */
  rssGrowthMb?: number;
}

/** Every matching row of `variant` with `accept`: seconds to the last byte, bytes, and the server's RSS growth meanwhile. */
async function timeExport(url: string, variant: Variant, accept: string, pid: number | undefined): Promise<ExportRun> {
  const before = rssMb(pid);
  let peak = before ?? 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid) ?? 0)), 25);
  const started = performance.now();
  try {
    const response = await fetch(`${url}${variant.path}`, {
      method: variant.method,
      headers: { accept, ...(variant.body ? { 'content-type': 'application/json' } : {}) },
      body: variant.body,
    });
    if (!response.ok) throw new Error(`${accept} export answered ${response.status}: ${await response.text()}`);
    let bytes = 0;
    const reader = response.body!.getReader();
    for (let step = await reader.read(); !step.done; step = await reader.read()) bytes += step.value.byteLength;
    const seconds = (performance.now() - started) / 1000;
    return { seconds: Math.round(seconds * 1000) / 1000, bytes, ...(before === undefined ? {} : { rssGrowthMb: Math.round((peak - before) * 10) / 10 }) };
  } finally {
    clearInterval(sampler);
  }
}

const EXPORT_FORMATS = { csv: 'text/csv', parquet: 'application/vnd.apache.parquet', arrow: 'application/vnd.apache.arrow.stream' } as const;

/**
 * Every matching row of two query shapes (the unfiltered data set and level REG) as CSV, Parquet and Arrow, `runs`
 * times each in turn: the median time to the last byte, Parquet's against CSV's, and the server's RSS growth.
 */
async function measureExports(url: string, dataSetId: string, pid: number | undefined, runs: number, formats: string[]) {
  const queries = [
    { name: 'unfiltered', variant: { method: 'GET', path: BASE(dataSetId) } as Variant },
    { name: 'level REG', variant: { method: 'GET', path: `${BASE(dataSetId)}?geographicLevels.eq=REG` } as Variant },
  ];
  const results = [];
  for (const query of queries) {
    const byFormat: Record<string, ExportRun[]> = Object.fromEntries(formats.map((f) => [f, []]));
    for (let run = 0; run < runs; run++) {
      for (const format of formats) byFormat[format]!.push(await timeExport(url, query.variant, EXPORT_FORMATS[format as keyof typeof EXPORT_FORMATS], pid));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const summary = Object.fromEntries(
      Object.entries(byFormat).map(([format, list]) => [
        format,
        { medianSeconds: median(list.map((r) => r.seconds)), bytes: list[0]!.bytes, maxRssGrowthMb: Math.max(...list.map((r) => r.rssGrowthMb ?? 0)), runs: list },
      ]),
    ) as unknown as Partial<Record<keyof typeof EXPORT_FORMATS, { medianSeconds: number; bytes: number; maxRssGrowthMb: number }>>;
    const ratio = summary.parquet && summary.csv ? Math.round((summary.parquet.medianSeconds / summary.csv.medianSeconds) * 100) / 100 : undefined;
    const shown = Object.entries(summary).map(([format, s]) => `${format} ${s.medianSeconds} s (${(s.bytes / 1e6).toFixed(1)} MB, RSS +${s.maxRssGrowthMb} MB)`);
    console.log(`export ${query.name.padEnd(11)} ${shown.join('  ')}${ratio === undefined ? '' : `  Parquet/CSV ${ratio}x`}`);
    results.push({ name: query.name, path: query.variant.path, parquetToCsvTimeRatio: ratio, target: { parquetToCsvTimeRatioAtMost: 2, parquetRssGrowthMbBelow: 100 }, ...summary });
  }
  return results;
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

async function measure(url: string, variants: Variant[], connections: number, run: { amount: number } | { duration: number }): Promise<Measurement> {
  let next = 0;
  const result = await autocannon({
    url,
    connections,
    ...('amount' in run ? { amount: Math.min(run.amount, variants.length) } : { duration: run.duration }),
    requests: [
      {
        setupRequest: (request) => {
          const variant = variants[next++ % variants.length]!;
          const headers: Record<string, string> = variant.body ? { 'content-type': 'application/json' } : {};
          return {
            ...request,
            method: variant.method,
            path: variant.path,
            body: variant.body,
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
    latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, mean: result.latency.average, max: result.latency.max },
    requestsPerSecond: Math.round(requestsPerSecond * 10) / 10,
    variantsRepeated: next > variants.length,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

await runCli(async () => {
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '300' },
      // Runs of each export (CSV, Parquet, Arrow of every matching row); 0 leaves the exports out.
      'export-runs': { type: 'string', default: '3' },
      // Only some export formats (`parquet,arrow`), and only the exports (not the five queries).
      'export-formats': { type: 'string', default: 'csv,parquet,arrow' },
      'exports-only': { type: 'boolean', default: false },
      'data-set': { type: 'string', multiple: true },
      // Written to bench/results/query[-large]-<label>.json instead (e.g. a run with QUERY_VERSION_CACHE_MS=0).
      label: { type: 'string' },
    },
    strict: true,
  });
  const amount = Number(values.requests);
  const config = loadConfig();
  const runtime = await openRuntime(config, { applicationName: 'bench-query' });
  let server: { child: ChildProcess; url: string } | undefined;
  try {
    const targets: Array<{ dataSetId: string; file: string; meta: VersionMeta; rows: number }> = [];
    for (const [dataSetId, file] of [
      [FSM_DATA_SET_ID, 'query.json'],
      [LARGE_DATA_SET_ID, 'query-large.json'],
    ] as const) {
      if (values['data-set'] && !values['data-set'].includes(dataSetId)) continue;
      const version = await findLatestLiveVersion(runtime.read.db, dataSetId);
      if (!version?.rows_table) {
        console.log(`Data set ${dataSetId} is not loaded; skipped (${dataSetId === FSM_DATA_SET_ID ? 'npm run seed' : 'npx tsx bench/generate-large.ts'}).`);
        continue;
      }
      const labelled = values.label ? file.replace('.json', `-${values.label}.json`) : file;
      targets.push({ dataSetId, file: labelled, meta: await loadQueryVersionMeta(runtime.read.db, version.id, version.rows_table), rows: version.total_results });
    }
    if (targets.length === 0) throw new Error('No data set to benchmark.');

    const port = await freePort();
    server = {
      child: await startServer({
        ...process.env, PORT: String(port), HOST: '127.0.0.1', SEED_ON_START: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_STATISTICS_MAX: '1000000000',
        ...(config.DATABASE_URL ? {} : { DATA_DIR: config.DATA_DIR }),
      }),
      url: `http://127.0.0.1:${port}`,
    };
    console.log(`Server at ${server.url}`);
    for (const target of targets) {
      const queries = shapes(target.dataSetId, target.meta);
      const warmUpSeconds = await warmUp(server.url, queries[2]!.variants[0]!);
      console.log(`\n${target.dataSetId} (${target.rows.toLocaleString('en-GB')} rows): row index ready after ${warmUpSeconds.toFixed(1)} s`);
      const results = [];
      for (const query of values['exports-only'] ? [] : queries) {
        const check = await send(server.url, query.variants[0]!);
        const body = (await check.json()) as { paging?: { totalResults: number }; results?: unknown[] };
        // A few unmeasured requests from the end of the list warm the JIT; the measured ones are all different.
        for (const variant of query.variants.slice(-5)) await (await send(server.url, variant)).arrayBuffer();
        const measured = query.variants.slice(0, -5);
        const single = await measure(server.url, measured, 1, { amount });
        const entry: Record<string, unknown> = {
          name: query.name,
          description: query.description,
          firstVariant: { totalResults: body.paging?.totalResults, results: body.results?.length },
          variantsAvailable: measured.length,
          target: query.target,
          oneConnection: single,
        };
        let line = `${query.name.padEnd(16)} total ${String(body.paging?.totalResults).padStart(9)}  p50 ${single.latencyMs.p50} ms  p99 ${single.latencyMs.p99} ms  (1 conn, ${single.requests} req)`;
        if (query.name === '1-simple') {
          const rest = measured.slice(single.requests);
          const ten = await measure(server.url, rest, 10, { duration: 3 });
          entry.tenConnections = ten;
          line += `; 10 conn: ${ten.requestsPerSecond} req/s p50 ${ten.latencyMs.p50} ms (${ten.requests} req in 3 s${ten.variantsRepeated ? ', some variants repeated' : ''})`;
        }
        console.log(line);
        results.push(entry);
      }
      const exportRuns = Number(values['export-runs']);
      const formats = values['export-formats'].split(',').filter((f) => f in EXPORT_FORMATS);
      const exports = exportRuns > 0 ? await measureExports(server.url, target.dataSetId, server.child.pid, exportRuns, formats) : [];
      const output = {
        benchmark: 'npm run bench (bench/query.ts)',
        dataSetId: target.dataSetId,
        rows: target.rows,
        measuredAt: new Date().toISOString(),
        machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, loadAverageAtEnd: os.loadavg() },
        method: 'autocannon over HTTP against a separate server process; every measured request is a different variant of the query shape (no repeats); no result cache exists',
        rowIndexReadyAfterSeconds: warmUpSeconds,
        serverSettings: {
          QUERY_VERSION_CACHE_MS: process.env.QUERY_VERSION_CACHE_MS ?? '1000 (default)',
          QUERY_INDEX_MEMORY_MB: process.env.QUERY_INDEX_MEMORY_MB ?? '1024 (default)',
        },
        queries: results,
        exports,
      };
      await mkdir(path.resolve('bench/results'), { recursive: true });
      await writeFile(path.resolve('bench/results', target.file), `${JSON.stringify(output, null, 2)}\n`);
      console.log(`Wrote bench/results/${target.file}`);
    }
  } finally {
    if (server) await stopServer(server.child);
    await runtime.close();
  }
});
