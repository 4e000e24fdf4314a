import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase } from '../../src/db/database.js';
import { createToken } from '../../src/register/tokens.js';
import { DEFAULT_SEED_DIR, readCatalogue, sourceFiles } from '../../src/statistics/seed/service.js';
import { benchTrainee } from '../trainee-payload.js';
import { startCluster, type Cluster } from './cluster.js';
import { killAllSync, liveGroups, portOpen, waitFor } from './processes.js';
import { TOPOLOGY } from './topology.js';

/**
 * `npm run bench:cluster`: starts the cluster (bench/cluster/cluster.ts), runs a mixed load through HAProxy —
 * statistics reads (GET and POST queries, meta, versions) and register writes each read back at once — and, while it
 * runs, four drills: (1) kill -9 one instance and restart it, (2) SIGTERM another (rolling deploy) and restart it,
 * (3) stop the replica and start it again, (4) publish a new data set version on the primary with the import CLI.
 * Then checks every acknowledged register write, the shared rate limit, and that no process outlives the cluster.
 * Figures to bench/results/cluster.json.
 *
 * All load comes from one client address, so the per-IP statistics limit is raised for the run; the register's
 * per-token limit stays at its default (100 a minute) and the load spreads its writes over many tokens.
 */

const RATE = Number(process.env.CLUSTER_BENCH_RATE ?? 100); // requests started per second
const MAX_IN_FLIGHT = 64;
/** The p99 every drill must stay within, restarts included (docs/scaling.md); a drill above it is a missed target. */
const P99_GOAL_MS = 250;
const PROVIDERS = 200;
const ABSENCE = '7d4e2f60-1b3c-4a8e-9f25-6c0a3b9d8e71';
const ETHNICITY = '9eee125b-5538-49b8-aa49-4fda877b5e57';
const WEEKLY = '14f4e111-506c-4bb9-86ff-6d4923acdd07';
/** The drill-4 data set: its new version is published during the load; the load does not read it. */
const PUBLISHED = 'c5292537-e29a-4dba-a361-8363d2fb08f1';

type Drill = 'warm-up' | 'baseline' | 'kill -9 instance' | 'SIGTERM instance' | 'replica stop/start' | 'publish version' | 'after';
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
}

interface StatsRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  hash?: string;
}

const say = (message: string) => process.stdout.write(`${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function describeFetchError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return [error instanceof Error ? error.message : String(error), cause?.code ?? cause?.message].filter(Boolean).join(': ');
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
    if (cells[0] === 'instances' && cells[1] !== 'BACKEND') result[cells[1]!] = cells[status]!;
  }
  return result;
}

let cluster: Cluster | undefined;

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
    await primary.db.insertInto('providers').values({ ukprn: value, name: `Cluster drill provider ${value}` }).onConflict((oc) => oc.column('ukprn').doNothing()).execute();
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
    { method: 'GET', path: `/v1/data-sets/${ABSENCE}/query?indicators=${indicators[0]}&filters.eq=${options[0]}&pageSize=100` },
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
  const oneStatistics = async () => {
    const request = statsRequests[sequence++ % statsRequests.length]!;
    const begin = performance.now();
    const current = drill;
    let status: number;
    let servedBy: string | undefined;
    let wrongData: boolean | undefined;
    let failure: string | undefined;
    try {
      const response = await send(request);
      const text = await response.text();
      status = response.status;
      servedBy = response.headers.get('x-served-by') ?? undefined;
      if (status === 200 && request.hash) wrongData = sha(text) !== request.hash;
    } catch (error) {
      status = 0;
      failure = describeFetchError(error);
    }
    samples.push({ at: begin - t0, drill: current, kind: 'statistics', idempotent: true, status, ms: performance.now() - begin, servedBy, wrongData, error: failure, request: `${request.method} ${request.path}`.slice(0, 160) });
  };
  const oneWrite = async () => {
    const n = sequence++;
    const token = tokens[n % tokens.length]!;
    const lastName = `Drill${stamp}n${n}`;
    const current = drill;
    const begin = performance.now();
    let status: number;
    let servedBy: string | undefined;
    let id: string | undefined;
    let failure: string | undefined;
    try {
      const response = await fetch(`${c.url}/api/v2026.1/trainees`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: benchTrainee('Cluster', lastName) }),
        signal: AbortSignal.timeout(30000),
      });
      status = response.status;
      servedBy = response.headers.get('x-served-by') ?? undefined;
      const body = (await response.json().catch(() => ({}))) as { data?: { trainee_id?: string } };
      if (status === 201 && body.data?.trainee_id) {
        id = body.data.trainee_id;
        acknowledged.set(id, lastName);
      }
    } catch (error) {
      status = 0;
      failure = describeFetchError(error);
    }
    samples.push({ at: begin - t0, drill: current, kind: 'register create', idempotent: false, status, ms: performance.now() - begin, servedBy, lastName, error: failure });
    if (!id) return;
    // Read your write at once, through the balancer, on whichever instance: the register reads the primary.
    const readBegin = performance.now();
    let readStatus: number;
    try {
      const response = await fetch(`${c.url}/api/v2026.1/trainees/${id}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30000) });
      readStatus = response.status;
      servedBy = response.headers.get('x-served-by') ?? undefined;
      await response.arrayBuffer();
    } catch {
      readStatus = 0;
    }
    samples.push({ at: readBegin - t0, drill: current, kind: 'register read-back', idempotent: true, status: readStatus, ms: performance.now() - readBegin, servedBy });
  };
  const loop = (async () => {
    let issued = 0;
    while (running) {
      const due = Math.floor(((performance.now() - t0) / 1000) * RATE);
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
      await Promise.all(c.instances.map(async (instance) => {
        try {
          const body = (await (await fetch(`${instance.url}/health/ready`, { signal: AbortSignal.timeout(1000) })).json()) as { statisticsReads?: { reads: string; replica: string; lagMs: number | null } };
          if (body.statisticsReads) routing.push({ at: performance.now() - t0, instance: instance.name, ...body.statisticsReads });
        } catch {
          // the instance is down in a drill
        }
      }));
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
    const markedDown = await waitFor('HAProxy to mark app1 down', async () => (await haproxyServers(c)).app1?.startsWith('DOWN') && performance.now(), 30000, 50);
    await sleep(2000);
    const restartAt = performance.now();
    await c.startInstance(0);
    await waitFor('app1 back in HAProxy', allUp, 60000, 100);
    const backAt = performance.now();
    await sleep(3000);
    return { markedDownAfterMs: Math.round(markedDown - killedAt), restartToBackInPoolMs: Math.round(backAt - restartAt) };
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
      const results = await Promise.all(c.instances.map(async (i) => ((await (await fetch(`${i.url}/health/ready`, { signal: AbortSignal.timeout(1000) })).json()) as { statisticsReads: { reads: string } }).statisticsReads.reads));
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
    const latest = await primary.db.selectFrom('data_set_versions').select((eb) => eb.fn.max('major').as('major')).where('data_set_id', '=', PUBLISHED).executeTakeFirstOrThrow();
    const version = `${Number(latest.major) + 1}.0`;
    const findOn = async (query: (sql: string, params: unknown[]) => Promise<{ rowCount: number | null }>) =>
      ((await query('SELECT 1 FROM data_set_versions WHERE data_set_id = $1 AND major = $2 AND minor = 0', [PUBLISHED, Number(latest.major) + 1])).rowCount ?? 0) > 0;
    await replicaClient.connect();
    const begin = performance.now();
    const cli = spawn(process.execPath, ['--import', 'tsx', 'src/cli/import.ts', '--data-set', PUBLISHED, '--version', version, '--data', files.dataPath, '--meta', files.metaPath], {
      env: { ...process.env, DATABASE_URL: c.primaryUrl, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const exited = new Promise<number | null>((resolve) => cli.once('exit', resolve));
    // Watch primary, replica and the API (through the balancer) every 10 ms for the new version.
    const seen: Record<'primary' | 'replica' | 'api', number | undefined> = { primary: undefined, replica: undefined, api: undefined };
    const watch = async (key: keyof typeof seen, probe: () => Promise<boolean>) => {
      await waitFor(`version ${version} on ${key}`, async () => {
        if (await probe()) {
          seen[key] = performance.now();
          return true;
        }
        return false;
      }, 300000, 10);
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
      replicaShowsItAfterCommitMs: Math.round(seen.replica! - seen.primary!),
      apiShowsItAfterCommitMs: Math.round(seen.api! - seen.primary!),
    };
  });
  drill = 'after';
  running = false;
  await loop;
  await routingLoop;

  // Every acknowledged write is on the primary (and has reached the replica), as acknowledged.
  const ids = [...acknowledged.keys()];
  const onPrimary = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 1000) {
    const rows = await primary.db.selectFrom('trainees').select(['id', 'last_name']).where('id', 'in', ids.slice(i, i + 1000)).execute();
    for (const row of rows) onPrimary.set(String(row.id), String(row.last_name));
  }
  const missingOrWrong = ids.filter((id) => onPrimary.get(id) !== acknowledged.get(id));
  // Writes the client got no 201 for: did they happen anyway (committed before the instance died)?
  const failedWrites = samples.filter((s) => s.kind === 'register create' && s.status !== 201);
  const failedNames = failedWrites.map((s) => s.lastName!);
  const storedAnyway = failedNames.length === 0 ? 0 : (await primary.db.selectFrom('trainees').select('id').where('last_name', 'in', failedNames).execute()).length;
  await waitFor('replica catch-up', async () => {
    const { rows } = await replicaClient.query<{ n: number }>('SELECT count(*)::int AS n FROM trainees WHERE id = ANY($1)', [ids]);
    return rows[0]!.n === ids.length;
  }, 60000, 200).catch(() => undefined);
  const { rows: replicaRows } = await replicaClient.query<{ n: number }>('SELECT count(*)::int AS n FROM trainees WHERE id = ANY($1)', [ids]);

  // The shared rate limit: one token's 101st request in a minute is refused, whichever instance answers.
  // (The token's provider has no trainees: the list answers 404 "No trainees found" until the limit answers 429.)
  const rateLimit: Array<{ status: number; servedBy: string | null; remaining: string | null }> = [];
  for (let i = 0; i < 101; i++) {
    const response = await fetch(`${c.url}/api/v2026.1/trainees?per_page=1`, { headers: { authorization: `Bearer ${rateLimitToken}` } });
    await response.arrayBuffer();
    rateLimit.push({ status: response.status, servedBy: response.headers.get('x-served-by'), remaining: response.headers.get('ratelimit-remaining') });
  }
  const rateLimitResult = {
    first100Ok: rateLimit.slice(0, 100).every((r) => r.status !== 429 && r.status < 500),
    first100Statuses: [...new Set(rateLimit.slice(0, 100).map((r) => r.status))],
    remainingAfter1And100: [rateLimit[0]!.remaining, rateLimit[99]!.remaining],
    request101Status: rateLimit[100]!.status,
    answeredBy: Object.fromEntries(c.instances.map((i) => [i.name, rateLimit.filter((r) => r.servedBy === i.name).length])),
  };

  // HAProxy's own counters: retries and redispatches per instance.
  const haproxyCounters = await (async () => {
    const text = await (await fetch(`${c.statsUrl};csv`, { signal: AbortSignal.timeout(2000) })).text();
    const [header, ...rows] = text.trim().split('\n');
    const columns = header!.replace(/^# /, '').split(',');
    const pick = (cells: string[], name: string) => Number(cells[columns.indexOf(name)] || 0);
    return Object.fromEntries(rows.map((row) => row.split(',')).filter((cells) => cells[0] === 'instances').map((cells) => [
      cells[1]!, { requests: pick(cells, 'stot'), retries: pick(cells, 'wretr'), redispatches: pick(cells, 'wredis'), responses5xx: pick(cells, 'hrsp_5xx'), checksDown: pick(cells, 'chkdown') },
    ]));
  })();

  await replicaClient.end();
  await primary.close();
  const ports = [c.primary.port, c.replica.port, Number(new URL(c.redisUrl).port), Number(new URL(c.url).port), ...c.instances.map((i) => i.port)];
  await c.stop();
  const leftoverGroups = liveGroups();
  const openPorts = (await Promise.all(ports.map(async (port) => ((await portOpen(port)) ? port : undefined)))).filter((p) => p !== undefined);
  const loadAfter = loadavg();

  // Figures.
  const drills: Drill[] = ['baseline', 'kill -9 instance', 'SIGTERM instance', 'replica stop/start', 'publish version'];
  const summary = (list: Sample[]) => {
    const latencies = list.map((s) => s.ms).sort((a, b) => a - b);
    const byStatus: Record<string, number> = {};
    for (const s of list) byStatus[String(s.status)] = (byStatus[String(s.status)] ?? 0) + 1;
    return {
      requests: list.length,
      byStatus,
      failedIdempotent: list.filter((s) => s.idempotent && (s.status < 200 || s.status >= 300)).length,
      failedWrites: list.filter((s) => !s.idempotent && s.status !== 201).length,
      statistics503: list.filter((s) => s.kind === 'statistics' && s.status === 503).length,
      wrongStatisticsAnswers: list.filter((s) => s.wrongData).length,
      readBackNot200: list.filter((s) => s.kind === 'register read-back' && s.status !== 200).length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      p99MsByKind: Object.fromEntries((['statistics', 'register create', 'register read-back'] as const).map((kind) => [
        kind, percentile(list.filter((s) => s.kind === kind).map((s) => s.ms).sort((a, b) => a - b), 99),
      ])),
      // What the tail is made of.
      slowest: [...list].sort((a, b) => b.ms - a.ms).slice(0, 5).map((s) => ({
        ms: Math.round(s.ms), kind: s.kind, request: s.request, servedBy: s.servedBy, atS: Math.round(s.at / 100) / 10,
      })),
    };
  };
  const perDrill = Object.fromEntries(drills.map((d) => {
    const p = phases.find((x) => x.drill === d)!;
    return [d, { seconds: Math.round((p.to - p.from) / 100) / 10, ...summary(samples.filter((s) => s.drill === d)), ...p.notes }];
  }));
  const routingSummary = Object.fromEntries(c.instances.map((i) => {
    const own = routing.filter((r) => r.instance === i.name);
    return [i.name, {
      checks: own.length,
      onPrimary: own.filter((r) => r.reads === 'primary').length,
      states: [...new Set(own.map((r) => r.replica))],
      maxLagMs: Math.max(0, ...own.map((r) => r.lagMs ?? 0)),
    }];
  }));
  const result = {
    command: 'npm run bench:cluster',
    startedAt: started.toISOString(),
    machine: { loadAverageBefore: loadBefore.map((l) => Math.round(l * 100) / 100), loadAverageAfter: loadAfter.map((l) => Math.round(l * 100) / 100), note: 'shared 2-core machine: other builds ran alongside; load generator, HAProxy, both PostgreSQL servers, Redis and both instances on the same cores' },
    topology: { instances: TOPOLOGY.instances, balancer: 'HAProxy (bench/cluster/haproxy.cfg)', primary: 'PostgreSQL 18 (embedded binaries)', replica: `streaming, slot "${TOPOLOGY.replicationSlot}"`, redis: true, instanceEnv: { ...TOPOLOGY.instanceEnv, RATE_LIMIT_STATISTICS_MAX: '1000000000 (one client address)' } },
    load: { requestsPerSecond: RATE, writeShare: '1 in 5 requests creates a trainee, read back at once', statisticsRequests: statsRequests.length, verifiableStatisticsRequests: statsRequests.filter((r) => r.hash).length },
    overall: summary(samples),
    drills: perDrill,
    statisticsRouting: routingSummary,
    registerWrites: {
      acknowledged: ids.length,
      onPrimaryAsAcknowledged: ids.length - missingOrWrong.length,
      missingOrWrong: missingOrWrong.length,
      onReplica: replicaRows[0]!.n,
      notAcknowledged: failedWrites.map((s) => ({ drill: s.drill, status: s.status, error: s.error })),
      notAcknowledgedButStored: storedAnyway,
    },
    clientErrors: samples.filter((s) => s.error).map((s) => ({ drill: s.drill, kind: s.kind, error: s.error })),
    rateLimit: rateLimitResult,
    haproxy: haproxyCounters,
    cleanup: { leftoverProcessGroups: leftoverGroups.length, openPorts },
  };
  await writeFile(path.resolve(import.meta.dirname, '../results/cluster.json'), `${JSON.stringify(result, null, 2)}\n`);

  say('');
  say('drill                 s     requests  errors by status          p50 ms  p99 ms  failed idempotent  failed writes  stats 503  wrong stats');
  for (const d of drills) {
    const r = perDrill[d] as ReturnType<typeof summary> & { seconds: number };
    const errors = Object.entries(r.byStatus).filter(([s]) => !s.startsWith('2')).map(([s, n]) => `${s}:${n}`).join(' ') || '-';
    say(`${d.padEnd(20)} ${String(r.seconds).padStart(5)} ${String(r.requests).padStart(8)}  ${errors.padEnd(24)} ${String(r.p50Ms).padStart(7)} ${String(r.p99Ms).padStart(7)} ${String(r.failedIdempotent).padStart(18)} ${String(r.failedWrites).padStart(14)} ${String(r.statistics503).padStart(10)} ${String(r.wrongStatisticsAnswers).padStart(12)}`);
  }
  for (const d of drills) {
    const notes = phases.find((p) => p.drill === d)!.notes;
    if (Object.keys(notes).length > 0) say(`  ${d}: ${JSON.stringify(notes)}`);
  }
  say(`register writes: ${ids.length} acknowledged, ${ids.length - missingOrWrong.length} on the primary as acknowledged, ${replicaRows[0]!.n} on the replica; ${failedWrites.length} not acknowledged (${failedWrites.map((s) => `${s.drill}: ${s.status || s.error}`).join('; ') || '-'}), of which ${storedAnyway} stored anyway`);
  say(`rate limit: first 100 answered ${JSON.stringify(rateLimitResult.first100Statuses)}, 101st answered ${rateLimitResult.request101Status}, answered by ${JSON.stringify(rateLimitResult.answeredBy)}`);
  say(`statistics routing: ${JSON.stringify(routingSummary)}`);
  say(`haproxy: ${JSON.stringify(haproxyCounters)}`);
  say(`cleanup: ${leftoverGroups.length} process groups left, open ports ${JSON.stringify(openPorts)}`);
  say(`load average before ${result.machine.loadAverageBefore.join(' ')}, after ${result.machine.loadAverageAfter.join(' ')}`);
  say('Written to bench/results/cluster.json');
  const failures = [
    ...['kill -9 instance', 'SIGTERM instance'].filter((d) => (perDrill[d] as { failedIdempotent: number }).failedIdempotent > 0).map((d) => `failed idempotent requests during ${d}`),
    ...(result.overall.wrongStatisticsAnswers > 0 ? ['wrong statistics answers'] : []),
    ...(result.overall.readBackNot200 > 0 ? ['register read-backs not found'] : []),
    ...(missingOrWrong.length > 0 ? ['acknowledged writes missing'] : []),
    ...(!rateLimitResult.first100Ok || rateLimitResult.request101Status !== 429 ? ['rate limit not shared'] : []),
    ...(leftoverGroups.length > 0 || openPorts.length > 0 ? ['processes outlived the cluster'] : []),
    ...drills.filter((d) => (perDrill[d] as { p99Ms: number }).p99Ms > P99_GOAL_MS).map((d) => `p99 of ${d} above ${P99_GOAL_MS} ms`),
  ];
  if (failures.length > 0) {
    say(`TARGETS MISSED: ${failures.join('; ')}`);
    process.exitCode = 1;
  } else {
    say('All targets met.');
  }
}

main().catch(async (error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  await cluster?.stop().catch(() => killAllSync());
  process.exit(1);
});
