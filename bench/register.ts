import { type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { sql, type Kysely } from 'kysely';
import { runCli } from '../src/cli/run.js';
import type { Database } from '../src/db/schema.js';
import { loadConfig } from '../src/config.js';
import { createToken, tokenSecret } from '../src/register/tokens.js';
import { openRuntime } from '../src/runtime.js';
import { startBusyNeighbour } from './busy-neighbour.js';
import { describeMachine, machineLine } from './machine.js';
import { startCpuMeter } from './process-cpu.js';
import { freePort, registerBenchServerEnv, startServer, stopServer } from './server-process.js';
import { benchTrainee } from './trainee-payload.js';

/**
 * `npm run bench:register`: create, batch create, get, list (50 per page) and update of the register API against a
 * server started in a separate process (DATA_DIR / DATABASE_URL as configured; by default its own embedded database
 * under .data/bench-register). Figures go to bench/results/register.json; with `--busy`, a busy neighbour
 * (`bench/busy-neighbour.ts`: one core kept busy) runs for the whole run and they go to register-busy.json.
 * Targets: a create p50 ≤ 5 ms with one connection and ≥ 600 creates/s at 10 connections, a 100-row batch p50
 * ≤ 300 ms (issue 46); p50 ≤ 10 ms for get and list, ≤ 20 ms for update at `--connections` (issue 5).
 * Each scenario: VACUUM ANALYZE (or ANALYZE only, for the list measured before vacuum), `--warmup` seconds unrecorded,
 * then `--duration` seconds measured. The benchmarked provider shares the table with 100 others (see below).
 */
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    // Only the scenarios whose name this regular expression matches (e.g. `^create`); the results file holds only those.
    only: { type: 'string', default: '' },
    busy: { type: 'boolean', default: false },
  },
});
const RESULTS_FILE = values.busy ? 'bench/results/register-busy.json' : 'bench/results/register.json';
const DURATION = Number(values.duration);
// Seconds of the same requests before each measurement, unrecorded: a freshly started server runs its code paths
// unoptimized at first (JIT), which is start-up, not the steady state the targets are about.
const WARMUP = Number(values.warmup);
const CONNECTIONS = Number(values.connections);
const SEED_TRAINEES = 300;
// The register holds many providers' trainees: the benchmarked provider is one of them, not the whole table.
const BACKGROUND_PROVIDERS = 100;

interface BenchRequest {
  method?: string;
  path?: string;
  body?: string;
  headers?: Record<string, string>;
}

// Each created trainee comes with a placement and a degree, as a provider's record system sends them.
const NESTED = {
  placements_attributes: [{ urn: '900020' }],
  degrees_attributes: [
    { grade: '02', subject: '100485', institution: '0117', uk_degree: '083', graduation_year: '2003' },
  ],
};
const trainee = (lastName: string) => benchTrainee('Bench', lastName, NESTED);

/**
 * Other providers' trainees (copies of the benchmarked provider's seeded ones), once per data dir: the benchmarked
 * provider then holds under a tenth of the table, as one provider of the real register does. In a table of one
 * provider's trainees the planner rightly scans the whole table, which is not the case to measure.
 */
async function seedBackgroundTrainees(db: Kysely<Database>, sourceProviderId: number): Promise<void> {
  const { n } = await db
    .selectFrom('providers')
    .where('name', 'like', 'Bench background %')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  if (Number(n) >= BACKGROUND_PROVIDERS) return;
  const { rows } = await sql<{ column_name: string }>`
    SELECT column_name FROM information_schema.columns
    WHERE table_name = 'trainees' AND is_generated = 'NEVER' AND column_name NOT IN ('id', 'provider_id')`.execute(db);
  const columns = rows.map((r) => sql.ref(r.column_name));
  await sql`
    INSERT INTO providers (ukprn, name)
    SELECT (20000000 + g)::text, 'Bench background ' || g FROM generate_series(1, ${BACKGROUND_PROVIDERS}) g`.execute(
    db,
  );
  await sql`
    INSERT INTO trainees (id, provider_id, ${sql.join(columns)})
    SELECT substr(md5(random()::text || clock_timestamp()::text), 1, 24), p.id, ${sql.join(rows.map((r) => sql.ref(`t.${r.column_name}`)))}
    FROM providers p CROSS JOIN (SELECT * FROM trainees WHERE provider_id = ${sourceProviderId}) t
    WHERE p.name LIKE 'Bench background %'`.execute(db);
}

await runCli(async () => {
  const dataDir = process.env.DATA_DIR ?? '.data/bench-register';
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const runtime = await openRuntime(config);
  let server: ChildProcess | undefined;
  // From before the server starts to the end, as a neighbour on a shared host is there all along.
  const neighbour = values.busy ? startBusyNeighbour() : undefined;
  try {
    // A provider and token of this run.
    const ukprn = String(Date.now()).slice(-8);
    const { id: providerId } = await runtime.primary.db
      .insertInto('providers')
      .values({ ukprn, name: `Bench provider ${ukprn}` })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { token } = await createToken(runtime.primary.db, {
      providerUkprn: ukprn,
      environment: config.REGISTER_ENVIRONMENT,
      secret: tokenSecret(config),
    });
    const port = await freePort();
    server = await startServer(registerBenchServerEnv(dataDir, port));
    const base = `http://127.0.0.1:${port}/api/v2026.1`;
    // GETs carry no content-type: a JSON content-type without a body makes the connection wait for one.
    const headers = { authorization: `Bearer ${token}` };
    const jsonHeaders = { ...headers, 'content-type': 'application/json' };

    const ids: string[] = [];
    for (let i = 0; i < SEED_TRAINEES; i++) {
      const response = await fetch(`${base}/trainees`, {
        method: 'POST',
        headers: jsonHeaders,
        body: JSON.stringify({ data: trainee(`Seed${ukprn}x${i}`) }),
      });
      if (response.status !== 201) throw new Error(`seeding failed: ${response.status} ${await response.text()}`);
      ids.push(((await response.json()) as { data: { trainee_id: string } }).data.trainee_id);
    }
    await seedBackgroundTrainees(runtime.primary.db, providerId);
    const { tableTrainees } = await runtime.primary.db
      .selectFrom('trainees')
      .select((eb) => eb.fn.countAll<string>().as('tableTrainees'))
      .executeTakeFirstOrThrow();

    let counter = 0;
    const listPage = (r: BenchRequest): BenchRequest => ({
      ...r,
      method: 'GET',
      path: `/api/v2026.1/trainees?per_page=50&page=${(counter++ % (SEED_TRAINEES / 50)) + 1}`,
      headers,
    });
    // `vacuum`: the table as autovacuum leaves it (trainees_list_idx answers from the index alone). Without it, the
    // trainees the create scenario just inserted are still heap fetches for the list's count: measured, no target.
    const createOne = (r: BenchRequest): BenchRequest => ({
      ...r,
      method: 'POST',
      path: '/api/v2026.1/trainees',
      headers: jsonHeaders,
      body: JSON.stringify({ data: trainee(`Run${ukprn}x${counter++}`) }),
    });
    const scenarios: Array<{
      name: string;
      /** Connections of this scenario; `--connections` where not set. */
      connections?: number;
      targetP50Ms: number | null;
      targetRequestsPerSecond?: number;
      vacuum: boolean;
      setup: (r: BenchRequest) => BenchRequest;
    }> = [
      // A record system syncing one trainee at a time: its latency, then the throughput of ten such clients.
      { name: 'create, one connection', connections: 1, targetP50Ms: 5, vacuum: true, setup: createOne },
      { name: 'create', targetP50Ms: 20, targetRequestsPerSecond: 600, vacuum: true, setup: createOne },
      {
        // A 100-row batch create (the v2026.1 extension), one client.
        name: 'batch create, 100 rows',
        connections: 1,
        targetP50Ms: 300,
        vacuum: true,
        setup: (r) => ({
          ...r,
          method: 'POST',
          path: '/api/v2026.1/trainees/batch',
          headers: jsonHeaders,
          body: JSON.stringify({ data: Array.from({ length: 100 }, () => trainee(`Batch${ukprn}x${counter++}`)) }),
        }),
      },
      { name: 'list 50, just after the creates, before vacuum', targetP50Ms: null, vacuum: false, setup: listPage },
      {
        name: 'get',
        targetP50Ms: 10,
        vacuum: true,
        setup: (r) => ({ ...r, method: 'GET', path: `/api/v2026.1/trainees/${ids[counter++ % ids.length]}`, headers }),
      },
      { name: 'list 50', targetP50Ms: 10, vacuum: true, setup: listPage },
      {
        name: 'update',
        targetP50Ms: 20,
        vacuum: true,
        setup: (r) => ({
          ...r,
          method: 'PATCH',
          path: `/api/v2026.1/trainees/${ids[counter % ids.length]}`,
          headers: jsonHeaders,
          body: JSON.stringify({ data: { first_names: `Bench${counter++}` } }),
        }),
      },
    ];

    // The machine is shared: its speeds and load average before the scenarios, and its load after, are part of the result.
    const machine = describeMachine();
    console.log(machineLine(machine));
    const results = [];
    for (const scenario of scenarios.filter((s) => new RegExp(values.only).test(s.name))) {
      // Fresh planner statistics (and visibility map), as autovacuum keeps them in steady state: the previous scenario
      // added or changed thousands of trainees seconds ago, sooner than autovacuum's one-minute round comes.
      await (scenario.vacuum ? sql`VACUUM ANALYZE trainees` : sql`ANALYZE trainees`).execute(runtime.primary.db);
      const connections = scenario.connections ?? CONNECTIONS;
      const cpuMeter = await startCpuMeter(server.pid!);
      const result = await autocannon({
        url: `http://127.0.0.1:${port}`,
        connections,
        duration: DURATION,
        ...(WARMUP > 0 ? { warmup: { connections, duration: WARMUP } } : {}),
        requests: [{ setupRequest: cpuMeter.counted(scenario.setup) }],
      });
      const cpuMsPerRequest = await cpuMeter.perRequest();
      // No answer in the measured window is a failure, not a met target.
      const answered = result.requests.total > 0;
      const requestsPerSecond = Math.round(result.requests.average);
      const row = {
        scenario: scenario.name,
        connections,
        durationSeconds: DURATION,
        warmupSeconds: WARMUP,
        tableVacuumed: scenario.vacuum,
        requests: result.requests.total,
        requestsPerSecond,
        latencyMs: {
          p50: result.latency.p50,
          p90: result.latency.p90,
          p99: result.latency.p99,
          max: result.latency.max,
        },
        targetP50Ms: scenario.targetP50Ms,
        targetRequestsPerSecond: scenario.targetRequestsPerSecond ?? null,
        meetsTarget:
          scenario.targetP50Ms === null
            ? null
            : answered &&
              result.latency.p50 <= scenario.targetP50Ms &&
              requestsPerSecond >= (scenario.targetRequestsPerSecond ?? 0),
        cpuMsPerRequest,
        errors: result.errors,
        non2xx: result.non2xx,
      };
      results.push(row);
      const verdict =
        row.targetP50Ms === null
          ? 'no target'
          : `target p50 ≤ ${row.targetP50Ms} ms${row.targetRequestsPerSecond === null ? '' : `, ≥ ${row.targetRequestsPerSecond} req/s`}: ${row.meetsTarget ? 'met' : 'NOT met'}`;
      console.log(
        `${row.scenario.padEnd(24)} ${row.connections} conn  p50 ${row.latencyMs.p50} ms  p90 ${row.latencyMs.p90} ms  p99 ${row.latencyMs.p99} ms  ${row.requestsPerSecond} req/s  non-2xx ${row.non2xx}  CPU ms/req server ${cpuMsPerRequest.server} postgres ${cpuMsPerRequest.postgres ?? '-'} client ${cpuMsPerRequest.client}  (${verdict})`,
      );
    }
    await mkdir('bench/results', { recursive: true });
    await writeFile(
      RESULTS_FILE,
      `${JSON.stringify({ measuredAt: new Date().toISOString(), besideBusyNeighbour: values.busy, machine: { ...machine, loadAverageAfter: os.loadavg().map((l) => Math.round(l * 100) / 100) }, seedTrainees: SEED_TRAINEES, tableTraineesAtStart: Number(tableTrainees), results }, null, 2)}\n`,
    );
    console.log(`wrote ${RESULTS_FILE}`);
  } finally {
    neighbour?.stop();
    if (server) await stopServer(server);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await runtime.close();
  }
});
