import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import autocannon from 'autocannon';
import { describeMachine, machineLine } from './machine.js';
import { freePort, startBuiltServer, stopServer } from './server-process.js';

/**
 * `npm run bench:meta`: `GET /v1/data-sets/{id}/meta` of every seeded data set's latest version, asked again and again
 * as clients do (DfE's R client reads a version's meta before it names filters), by autocannon for 10 s per data set
 * at one and at ten connections, with `Accept-Encoding: gzip` and with `gzip, deflate, br`; then the catalogue answers
 * that show versions (a data set, its versions, its publication's data sets) of the first data set at ten connections
 * with gzip. The server is the built one (`dist/server.mjs`, or `--server FILE` for an A/B against another build) on
 * the seeded catalogue (DATA_DIR or DATABASE_URL as configured). Results: bench/results/meta.json (or `--label`'s file).
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

/** Every data set of the catalogue, with its publication. */
async function catalogue(url: string): Promise<Array<{ publicationId: string; dataSetId: string }>> {
  const publications = (await (await fetch(`${url}/v1/publications?pageSize=20`)).json()) as {
    results: Array<{ id: string }>;
  };
  const found: Array<{ publicationId: string; dataSetId: string }> = [];
  for (const publication of publications.results) {
    const dataSets = (await (await fetch(`${url}/v1/publications/${publication.id}/data-sets?pageSize=20`)).json()) as {
      results: Array<{ id: string }>;
    };
    found.push(...dataSets.results.map((d) => ({ publicationId: publication.id, dataSetId: d.id })));
  }
  return found;
}

async function measure(url: string, connections: number, acceptEncoding: string) {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    headers: { 'accept-encoding': acceptEncoding },
  });
  return {
    connections,
    acceptEncoding,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
  };
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
    const line = (run: Awaited<ReturnType<typeof measure>>) =>
      `×${run.connections} '${run.acceptEncoding}': ${run.requestsPerSecond} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, non-2xx ${run.non2xx}`;
    const dataSets = await catalogue(url);
    for (const { dataSetId } of dataSets) {
      const path = `/v1/data-sets/${dataSetId}/meta`;
      const plain = await fetch(`${url}${path}`, { headers: { 'accept-encoding': 'identity' } });
      const bytes = (await plain.text()).length;
      const entry: Measured = { dataSetId, bytes, runs: [] };
      for (const connections of [1, 10])
        for (const acceptEncoding of ['gzip', 'gzip, deflate, br']) {
          const run = await measure(`${url}${path}`, connections, acceptEncoding);
          entry.runs.push(run);
          console.log(`${dataSetId} meta (${bytes.toLocaleString('en-GB')} bytes) ${line(run)}`);
        }
      measured.push(entry);
    }
    const first = dataSets[0]!;
    const cataloguePaths = [
      `/v1/data-sets/${first.dataSetId}`,
      `/v1/data-sets/${first.dataSetId}/versions`,
      `/v1/publications/${first.publicationId}/data-sets`,
    ];
    const catalogueRuns = [];
    for (const path of cataloguePaths) {
      const run = await measure(`${url}${path}`, 10, 'gzip');
      catalogueRuns.push({ path, ...run });
      console.log(`${path} ${line(run)}`);
    }
    const file = `bench/results/${label ? `meta-${label}` : 'meta'}.json`;
    await writeFile(
      file,
      `${JSON.stringify(
        {
          benchmark:
            'bench:meta — GET /v1/data-sets/{id}/meta of each seeded data set (1 and 10 connections), then three catalogue answers (10), autocannon',
          date: new Date().toISOString(),
          server: serverFile ?? 'dist/server.mjs',
          secondsPerRun: seconds,
          machine: { ...machine, loadAverageAtEnd: os.loadavg() },
          dataSets: measured,
          catalogue: catalogueRuns,
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
