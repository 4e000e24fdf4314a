import { execFile, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createDatabase } from '../../src/db/database.js';
import { createToken } from '../../src/register/tokens.js';
import { DEFAULT_SEED_DIR, readCatalogue, sourceFiles } from '../../src/statistics/seed/service.js';
import { benchTrainee } from '../trainee-payload.js';
import { startCluster, type Cluster } from './cluster.js';
import type { LoadResult, LoadSpec } from './load-generator.js';
import { killAllSync, liveGroups, portOpen, startProcess, stopProcess, waitFor, type Managed } from './processes.js';
import { setProcessPriority } from '../../src/process-priority.js';
import { SERVICE_PROCESS_ENV } from '../../src/process-env.js';
import { TOPOLOGY } from './topology.js';
import { BUSY_LOOP } from '../busy-neighbour.js';

/**
 * `npm run bench:cluster`: starts the cluster (bench/cluster/cluster.ts), runs a mixed load through HAProxy —
 * statistics reads (GET and POST queries, meta, versions) and register writes each read back at once — and, while it
 * runs, four drills: (1) kill -9 one instance and restart it, (2) SIGTERM another (rolling deploy) and restart it,
 * (3) stop the replica and start it again, (4) publish a new data set version on the primary with the import CLI.
 * Then (5) an overload drill: the statistics reads' capacity through the balancer is measured (a closed loop), then
 * twice that is offered (an open loop) for 15 s; what the instances cannot take they must refuse at once (503 with
 * Retry-After) while what they admit keeps its latency. Then checks every register write (each carries an
 * Idempotency-Key and is retried with it until answered: none lost, none stored twice), the shared rate limit, and
 * that no process outlives the cluster. Figures to bench/results/cluster.json (`--busy`: cluster-busy.json).
 *
 * `--busy`: a CPU-bound process (the same loop every run) runs beside the cluster for the whole run, as a shared host
 * or a batch job during a deploy would.
 *
 * All load comes from one client address, so the per-IP statistics limit is raised for the run; the register's
 * per-token limit stays at its default (100 a minute) and the load spreads its writes over many tokens.
 */

const RATE = Number(process.env.CLUSTER_BENCH_RATE ?? 100); // requests started per second
const BUSY = process.argv.includes('--busy');
/** `--samples FILE`: every request's sample (drill, kind, start, ms, status, instance) as JSON lines, to place a tail. */
const SAMPLES_FILE = process.argv.includes('--samples')
  ? process.argv[process.argv.indexOf('--samples') + 1]
  : undefined;
/** The overload drill: how long the capacity is measured and how long twice it is offered. */
const CAPACITY_SECONDS = 5;
const OVERLOAD_SECONDS = 15;
/** The capacity's closed loop: requests at once, what the balancer gives the two instances at most (`maxconn`). */
const CAPACITY_CONCURRENCY = 32;
/** Shed requests must be answered within this; admitted ones within the p99 goal (doubled with `--busy`). */
const SHED_GOAL_MS = 50;
/** The load generator's nice value (lower: sooner on a core) when this process may set it. */
const CLIENT_PRIORITY = -10;
/**
 * A request the client got no final answer for (a cut connection, a shed 503) is retried for at most this long: a
 * read as it is, a write with its Idempotency-Key.
 */
const RETRY_MS = 30000;
const MAX_IN_FLIGHT = 64;
/** The p99 every drill must stay within, restarts included (docs/scaling.md); a drill above it is a missed target. */
const P99_GOAL_MS = BUSY ? 500 : 250;
const PROVIDERS = 200;
const ABSENCE = '7d4e2f60-1b3c-4a8e-9f25-6c0a3b9d8e71';
const ETHNICITY = '9eee125b-5538-49b8-aa49-4fda877b5e57';
const WEEKLY = '14f4e111-506c-4bb9-86ff-6d4923acdd07';
/** The drill-4 data set: its new version is published during the load; the load does not read it. */
const PUBLISHED = 'c5292537-e29a-4dba-a361-8363d2fb08f1';

type Drill =
  | 'warm-up'
  | 'baseline'
  | 'kill -9 instance'
  | 'SIGTERM instance'
  | 'replica stop/start'
  | 'publish version'
  | 'capacity'
  | 'overload'
  | 'after';
interface Sample {
  at: number;
  drill: Drill;
  kind: 'statistics' | 'register create' | 'register read-back';
  idempotent: boolean;
  status: number;
  ms: number;
  servedBy?: string;
  wrongData?: boolean;
  /** Why the client got no answer at all (status 0). */
  error?: string;
  /** Register create: the trainee's last name, to look for failed writes in the database afterwards. */
  lastName?: string;
  /** Statistics: the request (method and path), to see which ones are slow. */
  request?: string;
  /** Refused by load shedding: 503 with Retry-After (the client retries after it). */
  shed?: boolean;
  /** The last attempt of a request the client may retry (its outcome is the request's). */
  final: boolean;
}

interface StatsRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  hash?: string;
}

const execFileAsync = promisify(execFile);
const say = (message: string) => process.stdout.write(`${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return [error instanceof Error ? error.message : String(error), cause?.code ?? cause?.message]
    .filter(Boolean)
    .join(': ');
}

/**
 * Runs load-generator.ts in a process of its own with `spec`. The client stands for clients on other machines, but
 * shares these two cores with everything it measures: it runs at a higher priority than the cluster where this
 * process may set one (root, or CAP_SYS_NICE; `prioritized` says whether it did), with a larger young generation
 * (fewer collections during the loop), a full collection before the loop (`--expose-gc`) and an old generation
 * large enough that none is needed during it, so that what it measures is the cluster's delay, not its own pauses
 * (its collections were what made shed answers late: docs/scaling.md, the runs of 2026-11-30 09:23).
 */
async function runLoadGenerator(spec: LoadSpec): Promise<LoadResult & { prioritized: boolean }> {
  const running = execFileAsync(
    process.execPath,
    [
      '--max-semi-space-size=64',
      '--expose-gc',
      '--initial-old-space-size=512',
      '--import',
      'tsx',
      path.resolve(import.meta.dirname, 'load-generator.ts'),
      JSON.stringify(spec),
    ],
    { maxBuffer: 512 * 1024 * 1024 },
  );
  // Not permitted: the client runs at the cluster's priority (the results say so).
  const prioritized = running.child.pid !== undefined && setProcessPriority(CLIENT_PRIORITY, running.child.pid);
  const { stdout } = await running;
  return { ...(JSON.parse(stdout) as LoadResult), prioritized };
}

/**
 * A read's attempt: shed (503 with Retry-After) or cut (no answer: its instance killed after the balancer could no
 * longer retry it) is tried again, after Retry-After or at once, until RETRY_MS after its first attempt.
 */
function readOutcome(status: number, retryAfter: string | null, first: number): { shed: boolean; again: boolean } {
  const shed = status === 503 && retryAfter !== null;
  return { shed, again: (shed || status === 0) && performance.now() - first < RETRY_MS };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
}

async function haproxyServers(cluster: Cluster): Promise<Record<string, string>> {
  const text = await (await fetch(`${cluster.statsUrl};csv`, { signal: AbortSignal.timeout(2000) })).text();
  const [header, ...rows] = text.trim().split('\n');
  const columns = header!.replace(/^# /, '').split(',');
  const status = columns.indexOf('status');
  const result: Record<string, string> = {};
  for (const row of rows) {
    const cells = row.split(',');
    if (cells[0] === 'instances' && cells[1] !== 'BACKEND' && !cells[1]!.endsWith('-backup'))
      result[cells[1]!] = cells[status]!;
  }
  return result;
}

let cluster: Cluster | undefined;
let neighbour: Managed | undefined;

async function main() {
  const loadBefore = loadavg();
  const started = new Date();
  say(`Load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
  process.on('exit', killAllSync);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      void (cluster?.stop() ?? Promise.resolve()).finally(() => process.exit(130));
    });
  }
  if (BUSY) {
    neighbour = startProcess('busy-neighbour', process.execPath, ['-e', BUSY_LOOP], {
      logDir: path.resolve(process.env.CLUSTER_BENCH_DIR ?? '.data/cluster-bench', 'logs'),
    });
    say(`--busy: a CPU-bound process (pid ${neighbour.pid}) runs beside the cluster`);
  }
  cluster = await startCluster({
    dir: process.env.CLUSTER_BENCH_DIR ?? '.data/cluster-bench',
    instanceEnv: { RATE_LIMIT_STATISTICS_MAX: '1000000000' },
    log: say,
  });
  const c = cluster;
  const primary = createDatabase(c.primaryUrl, { max: 4 });
  const replicaClient = new pg.Client({ connectionString: c.replicaUrl });
  replicaClient.on('error', () => undefined);

  // Providers and tokens for the writes (each token stays far below 100 requests a minute).
  const stamp = Math.floor(Date.now() / 1000) % 100000;
  const tokens: string[] = [];
  for (let i = 0; i < PROVIDERS + 1; i++) {
    const value = `1${String(stamp % 10000).padStart(4, '0')}${String(i).padStart(3, '0')}`;
    await primary.db
      .insertInto('providers')
      .values({ ukprn: value, name: `Cluster drill provider ${value}` })
      .onConflict((oc) => oc.column('ukprn').doNothing())
      .execute();
    tokens.push((await createToken(primary.db, { providerUkprn: value, environment: 'sandbox' })).token);
  }
  const rateLimitToken = tokens.pop()!;

  // Statistics requests with their expected answers, read twice before the load (identical answers only).
  const meta = (await (await fetch(`${c.url}/v1/data-sets/${ABSENCE}/meta`)).json()) as {
    filters: Array<{ options: Array<{ id: string }> }>;
    indicators: Array<{ id: string }>;
  };
  const options = meta.filters.flatMap((f) => f.options.map((o) => o.id));
  const indicators = meta.indicators.map((i) => i.id);
  const statsRequests: StatsRequest[] = [
    { method: 'GET', path: `/v1/data-sets/${ABSENCE}/query?pageSize=50` },
    {
      method: 'GET',
      path: `/v1/data-sets/${ABSENCE}/query?indicators=${indicators[0]}&filters.eq=${options[0]}&pageSize=100`,
    },
    { method: 'GET', path: `/v1/data-sets/${ETHNICITY}/query?pageSize=100` },
    { method: 'GET', path: `/v1/data-sets/${WEEKLY}/meta` },
    { method: 'GET', path: `/v1/data-sets/${ETHNICITY}/versions` },
    { method: 'GET', path: `/v1/data-sets/${ABSENCE}` },
    ...[0, 1, 2].map((i) => ({
      method: 'POST' as const,
      path: `/v1/data-sets/${ABSENCE}/query`,
      body: JSON.stringify({
        criteria: { and: [{ filters: { in: [options[i], options[i + 3]] } }] },
        indicators: [indicators[i % indicators.length], indicators[(i + 1) % indicators.length]],
        pageSize: 50,
      }),
    })),
  ];
  const send = (request: StatsRequest) =>
    fetch(`${c.url}${request.path}`, {
      method: request.method,
      headers: request.body ? { 'content-type': 'application/json' } : {},
      body: request.body,
      signal: AbortSignal.timeout(30000),
    });
  for (const request of statsRequests) {
    const [a, b] = [await send(request), await send(request)];
    const [ta, tb] = [await a.text(), await b.text()];
    if (a.status !== 200) throw new Error(`${request.method} ${request.path}: ${a.status} ${ta.slice(0, 300)}`);
    if (ta === tb) request.hash = sha(ta);
  }

  // The load.
  let drill: Drill = 'warm-up';
  const samples: Sample[] = [];
  const acknowledged = new Map<string, string>(); // trainee id → last name
  let sequence = 0;
  let inFlight = 0;
  let running = true;
  const t0 = performance.now();
  /**
   * A read, retried after a 503 with Retry-After (after that time), as a client honouring it would, and at once
   * after a cut connection (a read is safe to repeat), for at most RETRY_MS.
   */
  const oneStatistics = async () => {
    const request = statsRequests[sequence++ % statsRequests.length]!;
    const first = performance.now();
    for (;;) {
      const begin = performance.now();
      const current = drill;
      let status: number;
      let servedBy: string | undefined;
      let wrongData: boolean | undefined;
      let failure: string | undefined;
      let retryAfter: string | null = null;
      try {
        const response = await send(request);
        const text = await response.text();
        status = response.status;
        retryAfter = response.headers.get('retry-after');
        servedBy = response.headers.get('x-served-by') ?? undefined;
        if (status === 200 && request.hash) wrongData = sha(text) !== request.hash;
      } catch (error) {
        status = 0;
        failure = describeFetchError(error);
      }
      const { shed, again } = readOutcome(status, retryAfter, first);
      samples.push({
        at: begin - t0,
        drill: current,
        kind: 'statistics',
        idempotent: true,
        status,
        ms: performance.now() - begin,
        servedBy,
        wrongData,
        error: failure,
        request: `${request.method} ${request.path}`.slice(0, 160),
        shed,
        final: !again,
      });
      if (!again) return;
      if (shed) await sleep(Number(retryAfter) * 1000);
    }
  };
  const writes: Array<{ lastName: string; key: string; attempts: number; acknowledged: boolean; replayed: boolean }> =
    [];
  /**
   * A create with its Idempotency-Key, retried with the same key until it gets a final answer (a cut connection, a
   * 5xx, a 409 while the first attempt still runs, a shed 503: after Retry-After or a short pause), for at most
   * RETRY_MS; then read back at once.
   */
  const oneWrite = async () => {
    const n = sequence++;
    const token = tokens[n % tokens.length]!;
    const lastName = `Drill${stamp}n${n}`;
    const key = randomUUID();
    const body = JSON.stringify({ data: benchTrainee('Cluster', lastName) });
    const first = performance.now();
    const outcome = { lastName, key, attempts: 0, acknowledged: false, replayed: false };
    writes.push(outcome);
    let id: string | undefined;
    let servedBy: string | undefined;
    const current = drill;
    for (;;) {
      outcome.attempts++;
      const begin = performance.now();
      let status: number;
      let failure: string | undefined;
      let retryAfter: string | null = null;
      try {
        const response = await fetch(`${c.url}/api/v2026.1/trainees`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
          body,
          signal: AbortSignal.timeout(30000),
        });
        status = response.status;
        retryAfter = response.headers.get('retry-after');
        servedBy = response.headers.get('x-served-by') ?? undefined;
        const answer = (await response.json().catch(() => ({}))) as { data?: { trainee_id?: string } };
        if (status === 201 && answer.data?.trainee_id) {
          id = answer.data.trainee_id;
          outcome.replayed ||= response.headers.get('idempotent-replayed') === 'true';
        }
      } catch (error) {
        status = 0;
        failure = describeFetchError(error);
      }
      const again = (status === 0 || status >= 500 || status === 409) && performance.now() - first < RETRY_MS;
      samples.push({
        at: begin - t0,
        drill: current,
        kind: 'register create',
        idempotent: true,
        status,
        ms: performance.now() - begin,
        servedBy,
        lastName,
        error: failure,
        shed: status === 503 && retryAfter !== null,
        final: !again,
      });
      if (!again) break;
      await sleep(retryAfter !== null ? Number(retryAfter) * 1000 : 200 * Math.min(outcome.attempts, 5));
    }
    if (!id) return;
    outcome.acknowledged = true;
    acknowledged.set(id, lastName);
    // Read your write at once, through the balancer, on whichever instance: the register reads the primary. Retried
    // like a statistics read after a shed 503 or a cut connection.
    const firstRead = performance.now();
    for (;;) {
      const readBegin = performance.now();
      let readStatus: number;
      let retryAfter: string | null = null;
      try {
        const response = await fetch(`${c.url}/api/v2026.1/trainees/${id}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(30000),
        });
        readStatus = response.status;
        retryAfter = response.headers.get('retry-after');
        servedBy = response.headers.get('x-served-by') ?? undefined;
        await response.arrayBuffer();
      } catch {
        readStatus = 0;
      }
      const { shed, again } = readOutcome(readStatus, retryAfter, firstRead);
      samples.push({
        at: readBegin - t0,
        drill: current,
        kind: 'register read-back',
        idempotent: true,
        status: readStatus,
        ms: performance.now() - readBegin,
        servedBy,
        shed,
        final: !again,
      });
      if (!again) return;
      if (shed) await sleep(Number(retryAfter) * 1000);
    }
  };
  // The mixed load pauses for the overload drill, which brings its own.
  let paused = false;
  const loop = (async () => {
    let issued = 0;
    let pausedFor = 0;
    while (running) {
      if (paused) {
        const pauseStart = performance.now();
        while (paused && running) await sleep(20);
        pausedFor += performance.now() - pauseStart;
      }
      const due = Math.floor(((performance.now() - t0 - pausedFor) / 1000) * RATE);
      while (issued < due && inFlight < MAX_IN_FLIGHT) {
        issued++;
        inFlight++;
        const task = issued % 5 === 0 ? oneWrite() : oneStatistics();
        void task.finally(() => inFlight--);
      }
      await sleep(5);
    }
    await waitFor('in-flight requests', async () => inFlight === 0, 60000, 20);
  })();

  // Where each instance sends statistics reads, every 250 ms (from its /health/ready).
  const routing: Array<{ at: number; instance: string; reads: string; replica: string; lagMs: number | null }> = [];
  const routingLoop = (async () => {
    while (running) {
      await Promise.all(
        c.instances.map(async (instance) => {
          try {
            const body = (await (
              await fetch(`${instance.url}/health/ready`, { signal: AbortSignal.timeout(1000) })
            ).json()) as { statisticsReads?: { reads: string; replica: string; lagMs: number | null } };
            if (body.statisticsReads)
              routing.push({ at: performance.now() - t0, instance: instance.name, ...body.statisticsReads });
          } catch {
            // the instance is down in a drill
          }
        }),
      );
      await sleep(250);
    }
  })();
  const allUp = async () => Object.values(await haproxyServers(c)).every((s) => s === 'UP');
  const phases: Array<{ drill: Drill; from: number; to: number; notes: Record<string, unknown> }> = [];
  const phase = async (name: Drill, body: () => Promise<Record<string, unknown>>) => {
    drill = name;
    const from = performance.now() - t0;
    say(`-- ${name}`);
    const notes = await body();
    phases.push({ drill: name, from: Math.round(from), to: Math.round(performance.now() - t0), notes });
  };

  // The instances have just started: their code runs unoptimised for the first seconds of traffic (JIT), which is
  // the start, not the steady state the baseline is. Not counted (a restarted instance's start is, in its drill).
  await phase('warm-up', async () => {
    await sleep(5000);
    return {};
  });
  await phase('baseline', async () => {
    await sleep(8000);
    return {};
  });
  await phase('kill -9 instance', async () => {
    await sleep(1000);
    const killedAt = performance.now();
    await c.stopInstance(0, 'SIGKILL');
    const markedDown = await waitFor(
      'HAProxy to mark app1 down',
      async () => (await haproxyServers(c)).app1?.startsWith('DOWN') && performance.now(),
      30000,
      50,
    );
    await sleep(2000);
    const restartAt = performance.now();
    await c.startInstance(0);
    await waitFor('app1 back in HAProxy', allUp, 60000, 100);
    const backAt = performance.now();
    await sleep(3000);
    return {
      markedDownAfterMs: Math.round(markedDown - killedAt),
      restartToBackInPoolMs: Math.round(backAt - restartAt),
    };
  });
  await phase('SIGTERM instance', async () => {
    await sleep(1000);
    const termAt = performance.now();
    await c.stopInstance(1, 'SIGTERM');
    const drainedMs = performance.now() - termAt;
    const restartAt = performance.now();
    await c.startInstance(1);
    await waitFor('app2 back in HAProxy', allUp, 60000, 100);
    const backAt = performance.now();
    await sleep(3000);
    return { drainAndExitMs: Math.round(drainedMs), restartToBackInPoolMs: Math.round(backAt - restartAt) };
  });
  await phase('replica stop/start', async () => {
    await sleep(1000);
    const stopAt = performance.now();
    await c.stopReplica();
    const readsEverywhere = async (where: string) => {
      const results = await Promise.all(
        c.instances.map(
          async (i) =>
            (
              (await (await fetch(`${i.url}/health/ready`, { signal: AbortSignal.timeout(1000) })).json()) as {
                statisticsReads: { reads: string };
              }
            ).statisticsReads.reads,
        ),
      );
      return results.every((r) => r === where) && performance.now();
    };
    const fallback = await waitFor('reads on the primary', () => readsEverywhere('primary'), 30000, 50);
    await sleep(6000);
    const startAt = performance.now();
    await c.startReplica();
    const back = await waitFor('reads back on the replica', () => readsEverywhere('replica'), 60000, 100);
    await sleep(3000);
    return {
      readsOnPrimaryAfterStopMs: Math.round(fallback - stopAt),
      downForMs: Math.round(startAt - stopAt),
      readsBackOnReplicaAfterStartMs: Math.round(back - startAt),
    };
  });
  await phase('publish version', async () => {
    await sleep(1000);
    const catalogue = await readCatalogue();
    const source = catalogue.dataSets.find((d) => d.id === PUBLISHED)!.versions[0]!.source;
    const files = sourceFiles(DEFAULT_SEED_DIR, source);
    const latest = await primary.db
      .selectFrom('data_set_versions')
      .select((eb) => eb.fn.max('major').as('major'))
      .where('data_set_id', '=', PUBLISHED)
      .executeTakeFirstOrThrow();
    const version = `${Number(latest.major) + 1}.0`;
    const findOn = async (query: (sql: string, params: unknown[]) => Promise<{ rowCount: number | null }>) =>
      ((
        await query('SELECT 1 FROM data_set_versions WHERE data_set_id = $1 AND major = $2 AND minor = 0', [
          PUBLISHED,
          Number(latest.major) + 1,
        ])
      ).rowCount ?? 0) > 0;
    await replicaClient.connect();
    const begin = performance.now();
    // The import as production runs it: the built CLI (the cluster's start built it), in its own process.
    const cli = spawn(
      process.execPath,
      [
        'dist/src/cli/import.js',
        '--data-set',
        PUBLISHED,
        '--version',
        version,
        '--data',
        files.dataPath,
        '--meta',
        files.metaPath,
      ],
      {
        env: { ...process.env, ...SERVICE_PROCESS_ENV, DATABASE_URL: c.primaryUrl, LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let importOutput = '';
    cli.stdout.on('data', (chunk: Buffer) => (importOutput += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => cli.once('exit', resolve));
    // Watch primary, replica and the API (through the balancer) every 10 ms for the new version.
    const seen: Record<'primary' | 'replica' | 'api', number | undefined> = {
      primary: undefined,
      replica: undefined,
      api: undefined,
    };
    const watch = async (key: keyof typeof seen, probe: () => Promise<boolean>) => {
      await waitFor(
        `version ${version} on ${key}`,
        async () => {
          if (await probe()) {
            seen[key] = performance.now();
            return true;
          }
          return false;
        },
        300000,
        10,
      );
    };
    await Promise.all([
      watch('primary', () => findOn((sql, params) => primary.pool.query(sql, params))),
      watch('replica', () => findOn((sql, params) => replicaClient.query(sql, params))),
      watch('api', async () => {
        const response = await fetch(`${c.url}/v1/data-sets/${PUBLISHED}/versions`);
        const body = (await response.json()) as { results?: Array<{ version: string }> };
        return response.status === 200 && (body.results ?? []).some((v) => v.version === version);
      }),
    ]);
    const code = await exited;
    await sleep(3000);
    return {
      version,
      importCliExitCode: code,
      importSeconds: Math.round((seen.primary! - begin) / 100) / 10,
      // On the clock of the samples' atS, to place the slowest requests in the import (read, index, commit).
      importStartedAtS: Math.round((begin - t0) / 100) / 10,
      committedAtS: Math.round((seen.primary! - t0) / 100) / 10,
      importPhases: importOutput.match(/^Phases: (.*)\.$/m)?.[1],
      replicaShowsItAfterCommitMs: Math.round(seen.replica! - seen.primary!),
      apiShowsItAfterCommitMs: Math.round(seen.api! - seen.primary!),
    };
  });
  // The capacity and the overload come from a client process of its own (load-generator.ts), the mixed load paused.
  const generated = async (name: Drill, spec: Omit<LoadSpec, 'url' | 'requests'>) => {
    const from = performance.now() - t0;
    const result = await runLoadGenerator({ url: c.url, requests: statsRequests, ...spec });
    for (const s of result.samples) {
      const request = statsRequests[s.request]!;
      samples.push({
        at: from + s.at,
        drill: name,
        kind: 'statistics',
        idempotent: true,
        status: s.status,
        ms: s.ms,
        servedBy: s.servedBy,
        wrongData: s.wrongData,
        error: s.error,
        request: `${request.method} ${request.path}`.slice(0, 160),
        shed: s.status === 503 && s.retryAfter,
        final: true,
      });
    }
    return result;
  };
  // What the client itself cost and where it paused: a late answer that overlaps a pause of the client may be the
  // client's delay rather than the cluster's (both are reported; the goals are checked on every answer).
  const clientNotes = (result: LoadResult & { prioritized: boolean }) => {
    const lateShed = result.samples.filter((x) => x.status === 503 && x.ms > SHED_GOAL_MS);
    return {
      clientPrioritized: result.prioritized,
      clientCpuSeconds: result.clientCpuSeconds,
      clientStalls: result.clientStalls.length,
      clientStallMaxMs: Math.max(0, ...result.clientStalls.map(([, ms]) => ms)),
      lateShedDuringClientStall: lateShed.filter((x) =>
        result.clientStalls.some(([at, ms]) => at < x.at + x.ms && x.at < at + ms),
      ).length,
    };
  };
  await phase('capacity', async () => {
    paused = true;
    await waitFor('the mixed load to pause', async () => inFlight === 0, 60000, 20);
    await sleep(1000);
    // A closed loop, enough at once to keep both instances busy without queueing at the balancer.
    const result = await generated('capacity', { seconds: CAPACITY_SECONDS, concurrency: CAPACITY_CONCURRENCY });
    const answered = result.samples.filter((x) => x.status === 200).length;
    return {
      concurrency: CAPACITY_CONCURRENCY,
      okPerSecond: Math.round(answered / CAPACITY_SECONDS),
      client: clientNotes(result),
    };
  });
  const capacity = phases.find((x) => x.drill === 'capacity')!.notes.okPerSecond as number;
  await phase('overload', async () => {
    // Twice the capacity, offered at a steady rate whatever the answers take (an open loop).
    const rate = capacity * 2;
    const result = await generated('overload', { seconds: OVERLOAD_SECONDS, rate });
    paused = false;
    return { offeredPerSecond: rate, offered: result.samples.length, client: clientNotes(result) };
  });
  drill = 'after';
  running = false;
  await loop;
  await routingLoop;

  // Every acknowledged write is on the primary (and has reached the replica), as acknowledged.
  const ids = [...acknowledged.keys()];
  const onPrimary = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await primary.db
      .selectFrom('trainees')
      .select(['id', 'last_name'])
      .where('id', 'in', ids.slice(i, i + 1000))
      .execute();
    for (const row of rows) onPrimary.set(String(row.id), String(row.last_name));
  }
  const missingOrWrong = ids.filter((id) => onPrimary.get(id) !== acknowledged.get(id));
  // Writes the client got no 201 for even after its retries: did they happen anyway? And was any write stored twice?
  const failedWrites = samples.filter((s) => s.kind === 'register create' && s.final && s.status !== 201);
  const failedNames = failedWrites.map((s) => s.lastName!);
  const storedAnyway =
    failedNames.length === 0
      ? 0
      : (await primary.db.selectFrom('trainees').select('id').where('last_name', 'in', failedNames).execute()).length;
  const storedCount = new Map<string, number>();
  const names = writes.map((w) => w.lastName);
  for (let i = 0; i < names.length; i += 1000) {
    const rows = await primary.db
      .selectFrom('trainees')
      .select('last_name')
      .where('last_name', 'in', names.slice(i, i + 1000))
      .execute();
    for (const row of rows) storedCount.set(String(row.last_name), (storedCount.get(String(row.last_name)) ?? 0) + 1);
  }
  const writesLost = writes.filter((w) => !storedCount.has(w.lastName)).length;
  const writesDuplicated = [...storedCount.values()].filter((n) => n > 1).length;
  await waitFor(
    'replica catch-up',
    async () => {
      const { rows } = await replicaClient.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM trainees WHERE id = ANY($1)',
        [ids],
      );
      return rows[0]!.n === ids.length;
    },
    60000,
    200,
  ).catch(() => undefined);
  const { rows: replicaRows } = await replicaClient.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM trainees WHERE id = ANY($1)',
    [ids],
  );

  // The shared rate limit: one token's 101st request in a minute is refused, whichever instance answers.
  // (The token's provider has no trainees: the list answers 404 "No trainees found" until the limit answers 429.)
  const rateLimit: Array<{ status: number; servedBy: string | null; remaining: string | null }> = [];
  for (let i = 0; i < 101; i++) {
    const response = await fetch(`${c.url}/api/v2026.1/trainees?per_page=1`, {
      headers: { authorization: `Bearer ${rateLimitToken}` },
    });
    await response.arrayBuffer();
    rateLimit.push({
      status: response.status,
      servedBy: response.headers.get('x-served-by'),
      remaining: response.headers.get('ratelimit-remaining'),
    });
  }
  const rateLimitResult = {
    first100Ok: rateLimit.slice(0, 100).every((r) => r.status !== 429 && r.status < 500),
    first100Statuses: [...new Set(rateLimit.slice(0, 100).map((r) => r.status))],
    remainingAfter1And100: [rateLimit[0]!.remaining, rateLimit[99]!.remaining],
    request101Status: rateLimit[100]!.status,
    answeredBy: Object.fromEntries(
      c.instances.map((i) => [i.name, rateLimit.filter((r) => r.servedBy === i.name).length]),
    ),
  };

  // HAProxy's own counters: retries and redispatches per instance.
  const haproxyCounters = await (async () => {
    const text = await (await fetch(`${c.statsUrl};csv`, { signal: AbortSignal.timeout(2000) })).text();
    const [header, ...rows] = text.trim().split('\n');
    const columns = header!.replace(/^# /, '').split(',');
    const pick = (cells: string[], name: string) => Number(cells[columns.indexOf(name)] || 0);
    return Object.fromEntries(
      rows
        .map((row) => row.split(','))
        .filter((cells) => cells[0] === 'instances')
        .map((cells) => [
          cells[1]!,
          {
            requests: pick(cells, 'stot'),
            retries: pick(cells, 'wretr'),
            redispatches: pick(cells, 'wredis'),
            responses5xx: pick(cells, 'hrsp_5xx'),
            checksDown: pick(cells, 'chkdown'),
          },
        ]),
    );
  })();

  await replicaClient.end();
  await primary.close();
  if (neighbour) await stopProcess(neighbour, 'SIGKILL');
  const ports = [
    c.primary.port,
    c.replica.port,
    Number(new URL(c.redisUrl).port),
    Number(new URL(c.url).port),
    ...c.instances.map((i) => i.port),
  ];
  await c.stop();
  const leftoverGroups = liveGroups();
  const openPorts = (await Promise.all(ports.map(async (port) => ((await portOpen(port)) ? port : undefined)))).filter(
    (p) => p !== undefined,
  );
  const loadAfter = loadavg();

  // Figures.
  const drills: Drill[] = ['baseline', 'kill -9 instance', 'SIGTERM instance', 'replica stop/start', 'publish version'];
  const summary = (list: Sample[]) => {
    // Answered requests (a cut connection has no latency to speak of).
    const latencies = list
      .filter((s) => s.status !== 0)
      .map((s) => s.ms)
      .sort((a, b) => a - b);
    const byStatus: Record<string, number> = {};
    for (const s of list) byStatus[String(s.status)] = (byStatus[String(s.status)] ?? 0) + 1;
    return {
      requests: list.length,
      byStatus,
      // A request's outcome is its last attempt's (a shed 503 is retried after its Retry-After).
      failedIdempotent: list.filter(
        (s) => s.final && s.kind !== 'register create' && (s.status < 200 || s.status >= 300),
      ).length,
      failedWrites: list.filter((s) => s.final && s.kind === 'register create' && s.status !== 201).length,
      shed: list.filter((s) => s.shed).length,
      statistics503: list.filter((s) => s.kind === 'statistics' && s.status === 503).length,
      wrongStatisticsAnswers: list.filter((s) => s.wrongData).length,
      readBackNot200: list.filter((s) => s.kind === 'register read-back' && s.final && s.status !== 200).length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      p99MsByKind: Object.fromEntries(
        (['statistics', 'register create', 'register read-back'] as const).map((kind) => [
          kind,
          percentile(
            list
              .filter((s) => s.kind === kind)
              .map((s) => s.ms)
              .sort((a, b) => a - b),
            99,
          ),
        ]),
      ),
      // What the tail is made of.
      slowest: [...list]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map((s) => ({
          ms: Math.round(s.ms),
          kind: s.kind,
          request: s.request,
          servedBy: s.servedBy,
          atS: Math.round(s.at / 100) / 10,
        })),
    };
  };
  const perDrill = Object.fromEntries(
    drills.map((d) => {
      const p = phases.find((x) => x.drill === d)!;
      return [
        d,
        {
          seconds: Math.round((p.to - p.from) / 100) / 10,
          ...summary(samples.filter((s) => s.drill === d)),
          ...p.notes,
        },
      ];
    }),
  );
  const overloadSamples = samples.filter((x) => x.drill === 'overload');
  const admitted = overloadSamples.filter((x) => x.status !== 503 && x.status !== 0);
  const shedSamples = overloadSamples.filter((x) => x.status === 503);
  const shedByBalancer = shedSamples.filter((x) => x.servedBy === undefined);
  const shedByInstances = shedSamples.filter((x) => x.servedBy !== undefined);
  const overloadPhase = phases.find((x) => x.drill === 'overload')!;
  const overloadSeconds = (overloadPhase.to - overloadPhase.from) / 1000;
  const sortedMs = (list: Sample[]) => list.map((x) => x.ms).sort((a, b) => a - b);
  const overload = {
    capacityPerSecond: capacity,
    offeredPerSecond: overloadPhase.notes.offeredPerSecond as number,
    offered: overloadSamples.length,
    seconds: Math.round(overloadSeconds * 10) / 10,
    admittedOkPerSecond: Math.round((admitted.filter((x) => x.status === 200).length / OVERLOAD_SECONDS) * 10) / 10,
    admittedShareOfCapacity:
      Math.round((admitted.filter((x) => x.status === 200).length / OVERLOAD_SECONDS / capacity) * 1000) / 1000,
    admittedP50Ms: percentile(sortedMs(admitted), 50),
    admittedP99Ms: percentile(sortedMs(admitted), 99),
    admittedNot200: admitted.filter((x) => x.status !== 200).length,
    shed: shedSamples.length,
    shedWithoutRetryAfter: shedSamples.filter((x) => !x.shed).length,
    shedP99Ms: percentile(sortedMs(shedSamples), 99),
    shedMaxMs: Math.round(Math.max(0, ...shedSamples.map((x) => x.ms)) * 10) / 10,
    shedWithin50Ms: shedSamples.filter((x) => x.ms <= SHED_GOAL_MS).length,
    // Who refused: the balancer (its queue full; no X-Served-By) or an instance past its own bounds.
    shedByBalancer: shedByBalancer.length,
    shedByInstancesP99Ms: percentile(sortedMs(shedByInstances), 99),
    shedByBalancerP99Ms: percentile(sortedMs(shedByBalancer), 99),
    ...(overloadPhase.notes.client as ReturnType<typeof clientNotes>),
    noAnswer: overloadSamples.filter((x) => x.status === 0).length,
    wrongStatisticsAnswers: overloadSamples.filter((x) => x.wrongData).length,
  };
  const routingSummary = Object.fromEntries(
    c.instances.map((i) => {
      const own = routing.filter((r) => r.instance === i.name);
      return [
        i.name,
        {
          checks: own.length,
          onPrimary: own.filter((r) => r.reads === 'primary').length,
          states: [...new Set(own.map((r) => r.replica))],
          maxLagMs: Math.max(0, ...own.map((r) => r.lagMs ?? 0)),
        },
      ];
    }),
  );
  const result = {
    command: BUSY ? 'npm run bench:cluster -- --busy' : 'npm run bench:cluster',
    busyNeighbour: BUSY ? BUSY_LOOP : null,
    startedAt: started.toISOString(),
    machine: {
      loadAverageBefore: loadBefore.map((l) => Math.round(l * 100) / 100),
      loadAverageAfter: loadAfter.map((l) => Math.round(l * 100) / 100),
      note: 'shared 2-core machine: other builds ran alongside; load generator, HAProxy, both PostgreSQL servers, Redis and both instances on the same cores',
    },
    topology: {
      instances: TOPOLOGY.instances,
      balancer: 'HAProxy (bench/cluster/haproxy.cfg)',
      balancerPrioritized: c.balancerPrioritized,
      primary: 'PostgreSQL 18 (embedded binaries)',
      replica: `streaming, slot "${TOPOLOGY.replicationSlot}"`,
      redis: true,
      instanceEnv: { ...TOPOLOGY.instanceEnv, RATE_LIMIT_STATISTICS_MAX: '1000000000 (one client address)' },
    },
    load: {
      requestsPerSecond: RATE,
      writeShare: '1 in 5 requests creates a trainee, read back at once',
      statisticsRequests: statsRequests.length,
      verifiableStatisticsRequests: statsRequests.filter((r) => r.hash).length,
    },
    overall: summary(samples),
    drills: perDrill,
    overload,
    statisticsRouting: routingSummary,
    registerWrites: {
      acknowledged: ids.length,
      onPrimaryAsAcknowledged: ids.length - missingOrWrong.length,
      missingOrWrong: missingOrWrong.length,
      onReplica: replicaRows[0]!.n,
      sent: writes.length,
      retried: writes.filter((w) => w.attempts > 1).length,
      answeredByReplay: writes.filter((w) => w.replayed).length,
      maxAttempts: Math.max(0, ...writes.map((w) => w.attempts)),
      lost: writesLost,
      storedTwiceOrMore: writesDuplicated,
      notAcknowledged: failedWrites.map((s) => ({ drill: s.drill, status: s.status, error: s.error })),
      notAcknowledgedButStored: storedAnyway,
    },
    clientErrors: samples.filter((s) => s.error).map((s) => ({ drill: s.drill, kind: s.kind, error: s.error })),
    rateLimit: rateLimitResult,
    haproxy: haproxyCounters,
    cleanup: { leftoverProcessGroups: leftoverGroups.length, openPorts },
  };
  if (SAMPLES_FILE)
    await writeFile(
      SAMPLES_FILE,
      samples
        .map((s) =>
          JSON.stringify({
            drill: s.drill,
            kind: s.kind,
            atMs: Math.round(s.at),
            ms: Math.round(s.ms),
            status: s.status,
            servedBy: s.servedBy,
            request: s.request,
          }),
        )
        .join('\n') + '\n',
    );
  const resultFile = BUSY ? 'cluster-busy.json' : 'cluster.json';
  await writeFile(path.resolve(import.meta.dirname, '../results', resultFile), `${JSON.stringify(result, null, 2)}\n`);

  say('');
  say(
    'drill                 s     requests  errors by status          p50 ms  p99 ms  failed idempotent  failed writes  stats 503  wrong stats  (503: shed, retried after Retry-After)',
  );
  for (const d of drills) {
    const r = perDrill[d] as ReturnType<typeof summary> & { seconds: number };
    const errors =
      Object.entries(r.byStatus)
        .filter(([s]) => !s.startsWith('2'))
        .map(([s, n]) => `${s}:${n}`)
        .join(' ') || '-';
    say(
      `${d.padEnd(20)} ${String(r.seconds).padStart(5)} ${String(r.requests).padStart(8)}  ${errors.padEnd(24)} ${String(r.p50Ms).padStart(7)} ${String(r.p99Ms).padStart(7)} ${String(r.failedIdempotent).padStart(18)} ${String(r.failedWrites).padStart(14)} ${String(r.statistics503).padStart(10)} ${String(r.wrongStatisticsAnswers).padStart(12)}`,
    );
  }
  for (const d of drills) {
    const notes = phases.find((p) => p.drill === d)!.notes;
    if (Object.keys(notes).length > 0) say(`  ${d}: ${JSON.stringify(notes)}`);
  }
  say(`overload: ${JSON.stringify(overload)}`);
  say(
    `register writes: ${writes.length} sent with an Idempotency-Key, ${result.registerWrites.retried} retried, ${result.registerWrites.answeredByReplay} answered by a replay; ${writesLost} lost, ${writesDuplicated} stored twice; ${ids.length} acknowledged, ${ids.length - missingOrWrong.length} on the primary as acknowledged, ${replicaRows[0]!.n} on the replica; ${failedWrites.length} not acknowledged (${failedWrites.map((s) => `${s.drill}: ${s.status || s.error}`).join('; ') || '-'}), of which ${storedAnyway} stored anyway`,
  );
  say(
    `rate limit: first 100 answered ${JSON.stringify(rateLimitResult.first100Statuses)}, 101st answered ${rateLimitResult.request101Status}, answered by ${JSON.stringify(rateLimitResult.answeredBy)}`,
  );
  say(`statistics routing: ${JSON.stringify(routingSummary)}`);
  say(`haproxy: ${JSON.stringify(haproxyCounters)}`);
  say(`cleanup: ${leftoverGroups.length} process groups left, open ports ${JSON.stringify(openPorts)}`);
  say(
    `load average before ${result.machine.loadAverageBefore.join(' ')}, after ${result.machine.loadAverageAfter.join(' ')}`,
  );
  say(`Written to bench/results/${resultFile}`);
  const failures = [
    ...drills
      .filter((d) => (perDrill[d] as { failedIdempotent: number }).failedIdempotent > 0)
      .map((d) => `failed idempotent requests during ${d}`),
    ...drills
      .filter((d) => (perDrill[d] as { failedWrites: number }).failedWrites > 0)
      .map((d) => `register writes not acknowledged during ${d}`),
    ...(writesLost > 0 || writesDuplicated > 0
      ? [`register writes lost (${writesLost}) or stored twice (${writesDuplicated})`]
      : []),
    ...(samples.some(
      (x) => x.drill === 'SIGTERM instance' && (x.status === 0 || (x.final && (x.status < 200 || x.status >= 300))),
    )
      ? ['SIGTERM drill: requests failed or cut']
      : []),
    ...(overload.admittedP99Ms > P99_GOAL_MS ? [`overload: p99 of admitted requests above ${P99_GOAL_MS} ms`] : []),
    ...(overload.shedMaxMs > SHED_GOAL_MS || overload.shedWithoutRetryAfter > 0
      ? [`overload: shed requests not all answered 503 with Retry-After within ${SHED_GOAL_MS} ms`]
      : []),
    ...(overload.admittedShareOfCapacity < 0.9 ? ['overload: admitted throughput below 90 % of capacity'] : []),
    ...(overload.noAnswer > 0 || overload.wrongStatisticsAnswers > 0 || overload.admittedNot200 > 0
      ? ['overload: requests failed otherwise than shed']
      : []),
    ...(result.overall.wrongStatisticsAnswers > 0 ? ['wrong statistics answers'] : []),
    ...(result.overall.readBackNot200 > 0 ? ['register read-backs not found'] : []),
    ...(missingOrWrong.length > 0 ? ['acknowledged writes missing'] : []),
    ...(!rateLimitResult.first100Ok || rateLimitResult.request101Status !== 429 ? ['rate limit not shared'] : []),
    ...(leftoverGroups.length > 0 || openPorts.length > 0 ? ['processes outlived the cluster'] : []),
    ...drills
      .filter((d) => (perDrill[d] as { p99Ms: number }).p99Ms > P99_GOAL_MS)
      .map((d) => `p99 of ${d} above ${P99_GOAL_MS} ms`),
  ];
  if (failures.length > 0) {
    say(`TARGETS MISSED: ${failures.join('; ')}`);
    process.exitCode = 1;
  } else {
    say('All targets met.');
  }
}

main().catch(async (error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  await cluster?.stop().catch(() => killAllSync());
  process.exit(1);
});
