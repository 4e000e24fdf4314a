import { type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { runCli } from '../src/cli/run.js';
import { loadConfig } from '../src/config.js';
import { tokenSecret } from '../src/register/index.js';
import { createToken } from '../src/register/tokens.js';
import { newSlug } from '../src/register/ids.js';
import { openRuntime } from '../src/runtime.js';
import { startCpuMeter } from './process-cpu.js';
import { freePort, registerBenchServerEnv, startServer, stopServer } from './server-process.js';

/**
 * `npm run bench:register-actions`: the action, placement and degree endpoints of the register API under
 * 10 connections, against a server started in a separate process (DATA_DIR / DATABASE_URL as configured; by
 * default its own embedded database under .data/bench-register-actions). Each defer uses a trainee of its own (a deferred
 * trainee cannot be deferred again); placements and degrees rotate over the seeded trainees. Figures go to
 * bench/results/register-actions.json, with the CPU each request cost the server, PostgreSQL and this client. No
 * targets are set by the issue; these are for comparison between runs.
 */
const { values } = parseArgs({
  options: { duration: { type: 'string', default: '4' }, connections: { type: 'string', default: '10' } },
});
const DURATION = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const ROTATING_TRAINEES = 200;
const DEFERRABLE_TRAINEES = 3000;

interface BenchRequest {
  method?: string;
  path?: string;
  body?: string;
  headers?: Record<string, string>;
}

await runCli(async () => {
  const dataDir = process.env.DATA_DIR ?? '.data/bench-register-actions';
  const config = loadConfig({ ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
  const runtime = await openRuntime(config);
  const db = runtime.primary.db;
  let server: ChildProcess | undefined;
  try {
    const ukprn = String(Date.now()).slice(-8);
    const { id: providerId } = await db
      .insertInto('providers')
      .values({ ukprn, name: `Actions bench ${ukprn}` })
      .returning('id')
      .executeTakeFirstOrThrow();
    const { token } = await createToken(db, {
      providerUkprn: ukprn,
      environment: config.REGISTER_ENVIRONMENT,
      secret: tokenSecret(config),
    });

    // Trainees straight into the table (the API only creates submitted_for_trn ones; defer needs trn_received too).
    const row = () => ({
      id: newSlug(),
      provider_id: providerId,
      state: 'trn_received' as const,
      trn: '1234567',
      first_names: 'Bench',
      last_name: 'Actions',
      date_of_birth: '1990-01-01',
      sex: '10',
      training_route: '12',
      course_subject_1: '100425',
      course_age_range: '13918',
      study_mode: '01',
      itt_start_date: '2025-09-01',
      itt_end_date: '2026-07-31',
      disabilities: '{}',
    });
    const rotating = Array.from({ length: ROTATING_TRAINEES }, row);
    const deferrable = Array.from({ length: DEFERRABLE_TRAINEES }, row);
    for (let i = 0; i < deferrable.length; i += 1000) {
      await db
        .insertInto('trainees')
        .values([...(i === 0 ? rotating : []), ...deferrable.slice(i, i + 1000)])
        .execute();
    }

    const port = await freePort();
    server = await startServer(registerBenchServerEnv(dataDir, port));
    const headers = { authorization: `Bearer ${token}` };
    const jsonHeaders = { ...headers, 'content-type': 'application/json' };
    const base = '/api/v2026.1/trainees';
    const today = new Date().toISOString().slice(0, 10);

    let counter = 0;
    const rotatingId = () => rotating[counter++ % ROTATING_TRAINEES]!.id;
    const scenarios: Array<{ name: string; setup: (r: BenchRequest) => BenchRequest }> = [
      {
        name: 'defer',
        setup: (r) => ({
          ...r,
          method: 'POST',
          path: `${base}/${deferrable[counter++ % DEFERRABLE_TRAINEES]!.id}/defer`,
          headers: jsonHeaders,
          body: JSON.stringify({ data: { defer_date: today } }),
        }),
      },
      {
        name: 'add placement',
        setup: (r) => ({
          ...r,
          method: 'POST',
          path: `${base}/${rotatingId()}/placements`,
          headers: jsonHeaders,
          body: JSON.stringify({ data: { name: 'Bench school', postcode: 'BN1 1AA' } }),
        }),
      },
      {
        name: 'add degree',
        // A different graduation year per round over the trainees, so none is a duplicate (409).
        setup: (r) => {
          const n = counter++;
          const body = {
            subject: '100425',
            uk_degree: '083',
            institution: '0117',
            grade: '02',
            graduation_year: 2024 - (Math.floor(n / ROTATING_TRAINEES) % 55),
          };
          return {
            ...r,
            method: 'POST',
            path: `${base}/${rotating[n % ROTATING_TRAINEES]!.id}/degrees`,
            headers: jsonHeaders,
            body: JSON.stringify({ data: body }),
          };
        },
      },
      {
        name: 'list placements',
        setup: (r) => ({ ...r, method: 'GET', path: `${base}/${rotatingId()}/placements`, headers }),
      },
      {
        name: 'list degrees',
        setup: (r) => ({ ...r, method: 'GET', path: `${base}/${rotatingId()}/degrees`, headers }),
      },
    ];

    const results = [];
    for (const scenario of scenarios) {
      counter = 0;
      const cpuMeter = await startCpuMeter(server.pid!);
      const result = await autocannon({
        url: `http://127.0.0.1:${port}`,
        connections: CONNECTIONS,
        duration: DURATION,
        requests: [{ setupRequest: cpuMeter.counted(scenario.setup) }],
      });
      const cpuMsPerRequest = await cpuMeter.perRequest();
      const entry = {
        scenario: scenario.name,
        connections: CONNECTIONS,
        durationSeconds: DURATION,
        requests: result.requests.total,
        requestsPerSecond: Math.round(result.requests.average),
        latencyMs: {
          p50: result.latency.p50,
          p90: result.latency.p90,
          p99: result.latency.p99,
          max: result.latency.max,
        },
        errors: result.errors,
        non2xx: result.non2xx,
        cpuMsPerRequest,
      };
      results.push(entry);
      console.log(
        `${entry.scenario.padEnd(16)} p50 ${entry.latencyMs.p50} ms  p90 ${entry.latencyMs.p90} ms  p99 ${entry.latencyMs.p99} ms  ${entry.requestsPerSecond} req/s  non-2xx ${entry.non2xx}  CPU ms/req server ${cpuMsPerRequest.server} postgres ${cpuMsPerRequest.postgres ?? '-'} client ${cpuMsPerRequest.client}`,
      );
    }
    await mkdir('bench/results', { recursive: true });
    await writeFile(
      'bench/results/register-actions.json',
      `${JSON.stringify({ measuredAt: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, results }, null, 2)}\n`,
    );
    console.log('wrote bench/results/register-actions.json');
  } finally {
    if (server) await stopServer(server);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await runtime.close();
  }
});
