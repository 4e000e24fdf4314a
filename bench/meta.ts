import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import autocannon from 'autocannon';
import { describeMachine, machineLine } from './machine.js';
import { freePort, startBuiltServer, stopServer } from './server-process.js';

/**
 * `npm run bench:meta`: `GET /v1/data-sets/{id}/meta` of every seeded data set's latest version, asked again and again
 * as clients do (DfE's R client reads a version's meta before it names filters), by autocannon for 10 s per data set
 * at one and at ten connections, with `Accept-Encoding: gzip` and with `gzip, deflate, br`. The server is the built
 * one (`dist/server.mjs`, or `--server FILE` for an A/B against another build) on the seeded catalogue (DATA_DIR or
 * DATABASE_URL as configured). Results: bench/results/meta.json (or `--label`'s file).
 */

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? args[at + 1] : undefined;
};
const serverFile = option('server');
const label = option('label');
const seconds = Number(option('seconds') ?? 10);

interface Measured {
  dataSetId: string;
  bytes: number;
  runs: Array<{
    connections: number;
    acceptEncoding: string;
    requestsPerSecond: number;
    p50Ms: number;
    p99Ms: number;
    non2xx: number;
  }>;
}

async function dataSetIds(url: string): Promise<string[]> {
  const publications = (await (await fetch(`${url}/v1/publications?pageSize=20`)).json()) as {
    results: Array<{ id: string }>;
  };
  const ids: string[] = [];
  for (const publication of publications.results) {
    const dataSets = (await (await fetch(`${url}/v1/publications/${publication.id}/data-sets?pageSize=20`)).json()) as {
      results: Array<{ id: string }>;
    };
    ids.push(...dataSets.results.map((d) => d.id));
  }
  return ids;
}

async function main() {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const machine = describeMachine();
  console.log(machineLine(machine));
  const server = startBuiltServer(
    {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_STATISTICS_MAX: '100000000',
    },
    { file: serverFile },
  );
  await server.listening;
  try {
    while ((await fetch(`${url}/health/ready`)).status !== 200) await new Promise((r) => setTimeout(r, 100));
    const measured: Measured[] = [];
    for (const dataSetId of await dataSetIds(url)) {
      const path = `/v1/data-sets/${dataSetId}/meta`;
      const bytes = (await (await fetch(`${url}${path}`, { headers: { 'accept-encoding': 'identity' } })).text())
        .length;
      const entry: Measured = { dataSetId, bytes, runs: [] };
      for (const connections of [1, 10])
        for (const acceptEncoding of ['gzip', 'gzip, deflate, br']) {
          const result = await autocannon({
            url: `${url}${path}`,
            connections,
            duration: seconds,
            headers: { 'accept-encoding': acceptEncoding },
          });
          entry.runs.push({
            connections,
            acceptEncoding,
            requestsPerSecond: result.requests.average,
            p50Ms: result.latency.p50,
            p99Ms: result.latency.p99,
            non2xx: result.non2xx,
          });
          console.log(
            `${dataSetId} (${bytes.toLocaleString('en-GB')} bytes) ×${connections} '${acceptEncoding}': ` +
              `${result.requests.average} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`,
          );
        }
      measured.push(entry);
    }
    const file = `bench/results/${label ? `meta-${label}` : 'meta'}.json`;
    await writeFile(
      file,
      `${JSON.stringify(
        {
          benchmark:
            'bench:meta — GET /v1/data-sets/{id}/meta of each seeded data set, autocannon, 1 and 10 connections',
          date: new Date().toISOString(),
          server: serverFile ?? 'dist/server.mjs',
          secondsPerRun: seconds,
          machine: { ...machine, loadAverageAtEnd: os.loadavg() },
          dataSets: measured,
        },
        null,
        2,
      )}\n`,
    );
    console.log(`Wrote ${file}`);
  } finally {
    await stopServer(server.child);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
