import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { promisify } from 'node:util';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { runCli } from '../src/cli/run.js';
import { loadConfig } from '../src/config.js';
import { openRuntime } from '../src/runtime.js';
import { freePort, startServer, stopServer } from './server-process.js';
import { benchTrainee } from './trainee-payload.js';

/**
 * `npm run bench:load`: a mixed workload against a server in a separate process, as issue 7 asks:
 * statistics queries (GET and POST), meta, catalogue reads, CSV downloads, and register reads and writes, for 60 s
 * with 50 connections (autocannon), then a check that no write was lost: every trainee answered with a 201 is
 * read back (200, same name), and the provider's trainee count in the database is exactly seeded + created.
 *
 * Setup uses the project's own commands: `npm run seed` (the statistics catalogue of seed/catalog.json) and
 * `npm run register -- provider:create / token:create` (the token is the last line of the output). The server gets
 * rate limits raised far above the load (RATE_LIMIT_*_MAX) so the figures measure the service, not the limiter.
 * DATA_DIR (default .data/bench-load) or DATABASE_URL choose the database, as for the server.
 * Output: bench/results/load.json and the fragment docs/.performance-load.md.
 */
const { values: flags } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    connections: { type: 'string', default: '50' },
    'pool-max': { type: 'string', default: '20' },
  },
});
const DURATION = Number(flags.duration);
const CONNECTIONS = Number(flags.connections);
const POOL_MAX = flags['pool-max'];
const SEED_TRAINEES = 200;
const run = promisify(execFile);

/** Data sets of seed/catalog.json used by the workload. */
const FSM = 'c5292537-e29a-4dba-a361-8363d2fb08f1'; // Pupil characteristics - FSM, ethnicity, year group (347,830 rows)
const ABSENCE = '7d4e2f60-1b3c-4a8e-9f25-6c0a3b9d8e71'; // Absence rates by school and geography (216 rows)
const ALL_DATA_SETS = [
  '9eee125b-5538-49b8-aa49-4fda877b5e57',
  FSM,
  '14f4e111-506c-4bb9-86ff-6d4923acdd07',
  '81cb8865-a00b-4a35-a2bc-ea8aa1502856',
  'e838e8da-8b1f-4eb5-8e86-0d7c57bc6f7c',
  ABSENCE,
];

interface BenchRequest {
  method?: string;
  path?: string;
  body?: string;
  headers?: Record<string, string>;
}
interface Meta {
  filters: Array<{ id: string; options: Array<{ id: string }> }>;
  indicators: Array<{ id: string }>;
  geographicLevels: Array<{ code: string }>;
  timePeriods: Array<{ code: string; period: string }>;
}

/** `npm run <script> -- args` with the run's environment; returns stdout. */
async function npmRun(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const { stdout } = await run('npm', ['run', '--silent', script, '--', ...args], { env, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

const trainee = (lastName: string) => benchTrainee('Load', lastName);

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

await runCli(async () => {
  const dataDir = process.env.DATA_DIR ?? '.data/bench-load';
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
  const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });

  console.log(
    `Seeding the statistics catalogue (npm run seed; data sets already loaded are skipped) in ${config.DATABASE_URL ? 'DATABASE_URL' : dataDir} ...`,
  );
  const seedOutput = await npmRun('seed', [], env);
  console.log(
    seedOutput
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('Seeded'))
      .join('\n'),
  );

  const ukprn = String(Date.now()).slice(-8);
  await npmRun('register', ['provider:create', '--ukprn', ukprn, '--name', `Load provider ${ukprn}`], env);
  const token = (await npmRun('register', ['token:create', '--provider', ukprn, '--name', 'bench:load'], env))
    .trim()
    .split('\n')
    .pop()!
    .trim();
  console.log(`Provider ${ukprn} and its token created with npm run register.`);

  const port = await freePort();
  const serverEnv = {
    ...env,
    PORT: String(port),
    HOST: '127.0.0.1',
    SEED_ON_START: 'false',
    RATE_LIMIT_REGISTER_MAX: '1000000000',
    RATE_LIMIT_STATISTICS_MAX: '1000000000',
    DATABASE_POOL_MAX: POOL_MAX,
  };
  const server = await startServer(serverEnv);
  const origin = `http://127.0.0.1:${port}`;
  try {
    const auth = { authorization: `Bearer ${token}` };
    const jsonAuth = { ...auth, 'content-type': 'application/json' };
    const json = { 'content-type': 'application/json' };

    // Seed trainees for the register reads and updates.
    const seeded: string[] = [];
    for (let i = 0; i < SEED_TRAINEES; i++) {
      const response = await fetch(`${origin}/api/v2026.1/trainees`, {
        method: 'POST',
        headers: jsonAuth,
        body: JSON.stringify({ data: trainee(`Seed${ukprn}n${i}`) }),
      });
      if (response.status !== 201)
        throw new Error(`seeding trainees failed: ${response.status} ${await response.text()}`);
      seeded.push(((await response.json()) as { data: { trainee_id: string } }).data.trainee_id);
    }

    // Real ids of the FSM data set for the query variants.
    const meta = (await (await fetch(`${origin}/v1/data-sets/${FSM}/meta`)).json()) as Meta;
    const options = meta.filters.flatMap((f) => f.options.map((o) => o.id));
    const indicators = meta.indicators.map((i) => i.id);
    const levels = meta.geographicLevels.map((l) => l.code);
    const periods = meta.timePeriods.map((t) => `${t.period}|${t.code}`);
    const pick = <T>(items: T[], n: number) => items[n % items.length]!;

    type Kind =
      | 'stats GET query'
      | 'stats POST query'
      | 'stats meta'
      | 'stats catalogue'
      | 'stats CSV'
      | 'register get'
      | 'register list'
      | 'register create'
      | 'register update';
    let n = 0;
    const created = new Map<string, string>();
    const builders: Array<[Kind, number, () => BenchRequest]> = [
      [
        'stats GET query',
        20,
        () => {
          const i = n++;
          return {
            method: 'GET',
            path: `/v1/data-sets/${FSM}/query?indicators=${pick(indicators, i)}&filters.eq=${pick(options, i)}&geographicLevels.eq=${pick(levels, i >> 2)}&timePeriods.eq=${encodeURIComponent(pick(periods, i >> 3))}&pageSize=100`,
          };
        },
      ],
      [
        'stats POST query',
        15,
        () => {
          const i = n++;
          const body = {
            criteria: {
              and: [
                { filters: { in: [pick(options, i), pick(options, i + 7)] } },
                { not: { geographicLevels: { eq: pick(levels, i) } } },
              ],
            },
            indicators: [pick(indicators, i), pick(indicators, i + 1)],
            sorts: [{ field: 'timePeriod', direction: i % 2 ? 'Asc' : 'Desc' }],
            page: (i % 5) + 1,
            pageSize: 50,
          };
          return { method: 'POST', path: `/v1/data-sets/${FSM}/query`, headers: json, body: JSON.stringify(body) };
        },
      ],
      ['stats meta', 10, () => ({ method: 'GET', path: `/v1/data-sets/${pick(ALL_DATA_SETS, n++)}/meta` })],
      [
        'stats catalogue',
        10,
        () => {
          const i = n++;
          const paths = [
            '/v1/publications?pageSize=20',
            `/v1/data-sets/${pick(ALL_DATA_SETS, i)}`,
            `/v1/data-sets/${pick(ALL_DATA_SETS, i)}/versions`,
          ];
          return { method: 'GET', path: pick(paths, i) };
        },
      ],
      ['stats CSV', 5, () => ({ method: 'GET', path: `/v1/data-sets/${ABSENCE}/csv` })],
      [
        'register get',
        15,
        () => ({ method: 'GET', path: `/api/v2026.1/trainees/${pick(seeded, n++)}`, headers: auth }),
      ],
      [
        'register list',
        5,
        () => ({ method: 'GET', path: `/api/v2026.1/trainees?per_page=50&page=${(n++ % 4) + 1}`, headers: auth }),
      ],
      [
        'register create',
        12,
        () => ({
          method: 'POST',
          path: '/api/v2026.1/trainees',
          headers: jsonAuth,
          body: JSON.stringify({ data: trainee(`Run${ukprn}n${n++}`) }),
        }),
      ],
      [
        'register update',
        8,
        () => ({
          method: 'PATCH',
          path: `/api/v2026.1/trainees/${pick(seeded, n)}`,
          headers: jsonAuth,
          body: JSON.stringify({ data: { middle_names: `Update${n++}` } }),
        }),
      ],
    ];
    // A fixed, interleaved schedule of kinds by weight (100 slots).
    const schedule: Kind[] = [];
    for (let slot = 0; schedule.length < 100; slot++)
      for (const [kind, weight] of builders) if (slot < weight) schedule.push(kind);
    const byKind = new Map(builders.map(([kind, , build]) => [kind, build]));
    const stats = new Map<Kind, { statuses: Record<string, number>; latencies: number[] }>();
    for (const [kind] of builders) stats.set(kind, { statuses: {}, latencies: [] });
    let slot = 0;
    // Why requests were not answered 2xx: the problem body's detail (or title) per kind and status, and when in the
    // run they came (seconds from its start), so that a refusal can be traced to the bound that made it.
    const refusals = new Map<string, { count: number; firstS: number; lastS: number }>();
    const startedAt = performance.now();
    const countRefusal = (kind: Kind, status: number, body: string, atMs: number) => {
      let reason = body.slice(0, 200);
      try {
        const problem = JSON.parse(body) as { detail?: string; title?: string };
        reason = problem.detail ?? problem.title ?? reason;
      } catch {
        // Not JSON: its first 200 characters.
      }
      const key = `${kind} ${status}: ${reason}`;
      const at = Math.round(atMs / 100) / 10;
      const entry = refusals.get(key) ?? { count: 0, firstS: at, lastS: at };
      entry.count += 1;
      entry.lastS = at;
      refusals.set(key, entry);
    };

    console.log(`Running the mixed workload: ${CONNECTIONS} connections for ${DURATION} s against ${origin} ...`);
    // autocannon's onResponse and the per-connection context are not in bench/autocannon.d.ts, hence the cast.
    const result = await autocannon({
      url: origin,
      connections: CONNECTIONS,
      duration: DURATION,
      requests: [
        {
          setupRequest: (request: BenchRequest, context: Record<string, unknown>) => {
            const kind = schedule[slot++ % schedule.length]!;
            context.kind = kind;
            context.started = performance.now();
            return { ...request, ...byKind.get(kind)!() };
          },
          onResponse: (status: number, body: string, context: Record<string, unknown>) => {
            const kind = context.kind as Kind;
            const entry = stats.get(kind)!;
            entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
            entry.latencies.push(performance.now() - (context.started as number));
            if (status >= 300) countRefusal(kind, status, body, (context.started as number) - startedAt);
            if (kind === 'register create' && status === 201) {
              const data = (JSON.parse(body) as { data: { trainee_id: string; last_name: string } }).data;
              created.set(data.trainee_id, data.last_name);
            }
          },
        },
      ],
    } as unknown as Parameters<typeof autocannon>[0]);

    // Zero lost writes: every 201 is readable with what was written, and the database holds exactly those trainees.
    console.log(`Checking the ${created.size} created trainees ...`);
    const missing: string[] = [];
    const ids = [...created.keys()];
    for (let i = 0; i < ids.length; i += 20) {
      await Promise.all(
        ids.slice(i, i + 20).map(async (id) => {
          const response = await fetch(`${origin}/api/v2026.1/trainees/${id}`, { headers: auth });
          const body =
            response.status === 200
              ? ((await response.json()) as { data?: { last_name?: string }; last_name?: string })
              : undefined;
          const lastName = body?.data?.last_name ?? body?.last_name;
          if (lastName !== created.get(id)) missing.push(id);
        }),
      );
    }
    // The database side: every trainee of this run's provider. A create still in flight when autocannon stopped
    // may have committed without its 201 being seen; those are counted apart (at most one per connection).
    const runtime = await openRuntime(loadConfig({ ...env, LOG_LEVEL: 'silent' }), { migrate: false });
    let databaseIds: Set<string>;
    try {
      const rows = await runtime.primary.db
        .selectFrom('trainees')
        .innerJoin('providers', 'providers.id', 'trainees.provider_id')
        .select('trainees.id')
        .where('providers.ukprn', '=', ukprn)
        .execute();
      databaseIds = new Set(rows.map((r) => r.id));
    } finally {
      await runtime.close();
    }
    const databaseTrainees = databaseIds.size;
    const notInDatabase = ids.filter((id) => !databaseIds.has(id));
    const unobserved = databaseTrainees - SEED_TRAINEES - (ids.length - notInDatabase.length);
    const create201 = stats.get('register create')!.statuses['201'] ?? 0;

    const statusTotals: Record<string, number> = {};
    for (const entry of stats.values())
      for (const [status, count] of Object.entries(entry.statuses))
        statusTotals[status] = (statusTotals[status] ?? 0) + count;
    const non2xxByStatus = Object.fromEntries(Object.entries(statusTotals).filter(([s]) => !s.startsWith('2')));
    const serverErrors = Object.entries(statusTotals)
      .filter(([s]) => s.startsWith('5'))
      .reduce((sum, [, c]) => sum + c, 0);
    const perKind = [...stats].map(([kind, entry]) => {
      const sorted = [...entry.latencies].sort((a, b) => a - b);
      return {
        kind,
        requests: sorted.length,
        statuses: entry.statuses,
        clientLatencyMs: {
          p50: Math.round(percentile(sorted, 50) * 10) / 10,
          p99: Math.round(percentile(sorted, 99) * 10) / 10,
        },
      };
    });
    const output = {
      benchmark: 'bench:load — mixed statistics and register workload against a server in a separate process',
      measuredAt: new Date().toISOString(),
      machine: {
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model.trim(),
        node: process.version,
        loadAverage1mAtEnd: Math.round(os.loadavg()[0]! * 100) / 100,
      },
      settings: {
        connections: CONNECTIONS,
        durationSeconds: DURATION,
        databasePoolMax: Number(POOL_MAX),
        rateLimitsRaisedTo: 1000000000,
        seededTrainees: SEED_TRAINEES,
        mixPercent: Object.fromEntries(builders.map(([k, w]) => [k, w])),
      },
      totals: {
        requests: result.requests.total,
        requestsPerSecond: Math.round(result.requests.average),
        latencyMs: {
          p50: result.latency.p50,
          p90: result.latency.p90,
          p99: result.latency.p99,
          max: result.latency.max,
        },
        non2xx: result.non2xx,
        non2xxByStatus,
        non2xxReasons: Object.fromEntries(refusals),
        serverErrors5xx: serverErrors,
        connectionErrors: result.errors,
        timeouts: (result as unknown as { timeouts?: number }).timeouts ?? 0,
      },
      writes: {
        created201: create201,
        readBackOk: created.size - missing.length,
        lost: missing.length,
        createdButNotInDatabase: notInDatabase.length,
        databaseTraineesOfProvider: databaseTrainees,
        committedWhileInFlightAtStop: unobserved,
      },
      perKind,
      targets: { serverErrors5xx: 0, lostWrites: 0 },
      meetsTargets:
        serverErrors === 0 &&
        missing.length === 0 &&
        notInDatabase.length === 0 &&
        unobserved >= 0 &&
        unobserved <= CONNECTIONS,
    };
    await mkdir('bench/results', { recursive: true });
    await writeFile('bench/results/load.json', `${JSON.stringify(output, null, 2)}\n`);

    const rows = perKind
      .map(
        (k) =>
          `| ${k.kind} | ${k.requests} | ${k.clientLatencyMs.p50} | ${k.clientLatencyMs.p99} | ${Object.entries(
            k.statuses,
          )
            .map(([s, c]) => `${s}: ${c}`)
            .join(', ')} |`,
      )
      .join('\n');
    const fragment = `### Mixed load (\`npm run bench:load\`)

Measured ${output.measuredAt.slice(0, 16).replace('T', ' ')} UTC on ${output.machine.cpus} CPUs (${output.machine.cpuModel}), Node ${output.machine.node};
server in its own process on the seeded catalogue, database pool ${POOL_MAX}, rate limits raised for the run;
autocannon with ${CONNECTIONS} connections for ${DURATION} s. The load generator, the server and PostgreSQL share the machine
(1-minute load average ${output.machine.loadAverage1mAtEnd} at the end of the run).

| Figure | Value |
|---|---|
| Requests | ${output.totals.requests} (${output.totals.requestsPerSecond} req/s) |
| Latency p50 / p90 / p99 / max | ${output.totals.latencyMs.p50} / ${output.totals.latencyMs.p90} / ${output.totals.latencyMs.p99} / ${output.totals.latencyMs.max} ms |
| Non-2xx by status | ${
      Object.keys(non2xxByStatus).length
        ? Object.entries(non2xxByStatus)
            .map(([s, c]) => `${s}: ${c}`)
            .join(', ')
        : 'none'
    } |
| 5xx | ${serverErrors} |
| Connection errors / timeouts | ${output.totals.connectionErrors} / ${output.totals.timeouts} |
| Trainees created (201) | ${create201}; read back unchanged: ${output.writes.readBackOk}; lost: ${output.writes.lost} |
| Provider's trainees in the database | ${databaseTrainees} = ${SEED_TRAINEES} seeded + ${create201 - notInDatabase.length} answered 201 + ${unobserved} committed while in flight when the run stopped (response not awaited) |

Per kind of request (client-side latency, from request build to response):

| Kind | Requests | p50 ms | p99 ms | Statuses |
|---|---|---|---|---|
${rows}

Targets: zero 5xx, zero lost writes — ${output.meetsTargets ? 'met' : 'NOT met'}. Figures: \`bench/results/load.json\`.
`;
    await mkdir('docs', { recursive: true });
    await writeFile('docs/.performance-load.md', fragment);

    console.log(
      `${output.totals.requests} requests, ${output.totals.requestsPerSecond} req/s, p50 ${output.totals.latencyMs.p50} ms, p99 ${output.totals.latencyMs.p99} ms`,
    );
    console.log(
      `non-2xx by status: ${JSON.stringify(non2xxByStatus)}; 5xx: ${serverErrors}; connection errors: ${result.errors}`,
    );
    console.log(
      `writes: ${create201} created (201), ${output.writes.readBackOk} read back, ${missing.length} lost, ${notInDatabase.length} missing from the database; ${unobserved} more committed while in flight at the stop`,
    );
    console.log('wrote bench/results/load.json and docs/.performance-load.md');
    if (!output.meetsTargets) process.exitCode = 1;
  } finally {
    await stopServer(server);
  }
});
