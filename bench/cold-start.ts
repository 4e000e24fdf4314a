import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { buildShapes, type ApiMeta } from './scale-shapes.js';
import { freePort } from './server-process.js';
import { FSM_DATA_SET_ID } from './datasets.js';
import { SERVICE_PROCESS_ENV } from '../src/process-env.js';

/**
 * `npx tsx bench/cold-start.ts --database-url URL [--runs 8] [--data-set ID] SERVER.mjs [SERVER.mjs ...]`: a server's
 * cold start, each given build (`dist/server.mjs`, or copies made with `node dist/src/cli/bundle.js --out DIR`) in
 * turn, `--runs` times, on one database whose data set has its row index stored (the 347,830-row one by default, as
 * `npm run bench:scale` imports it): start → listening, → the metadata answered, → the first query answered by the
 * row index, as bench:scale's cold start asks them. Prints the medians per build; alternating the builds keeps a
 * comparison fair on a machine whose speed drifts.
 */
const { values, positionals } = parseArgs({
  options: { 'database-url': { type: 'string' }, runs: { type: 'string', default: '8' }, 'data-set': { type: 'string', default: FSM_DATA_SET_ID } },
  allowPositionals: true,
  strict: true,
});
if (!values['database-url'] || positionals.length === 0) throw new Error('Usage: bench/cold-start.ts --database-url URL [--runs N] SERVER.mjs ...');
const dataSetId = values['data-set']!;
const servers = positionals;
const samples = new Map(servers.map((server) => [server, { listening: [] as number[], meta: [] as number[], index: [] as number[] }]));
let shapes: ReturnType<typeof buildShapes> | undefined;

async function coldStart(server: string): Promise<{ listening: number; meta: number; index: number }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, [...(process.env.COLD_START_NODE_ARGS ?? '').split(' ').filter(Boolean), '--enable-source-maps', server], {
    env: { ...process.env, ...SERVICE_PROCESS_ENV, DATABASE_URL: values['database-url'], PORT: String(port), HOST: '127.0.0.1', SEED_ON_START: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_STATISTICS_MAX: '1000000000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let output = '';
    const listening = await new Promise<number>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Service listening')) resolve(performance.now() - started);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => reject(new Error(`${server} exited with ${code}:\n${output.slice(-2000)}`)));
    });
    // What a client asks first (the variants were made from it before the timed starts).
    await (await fetch(`${url}/v1/data-sets/${dataSetId}/meta`)).arrayBuffer();
    const metaAnswered = performance.now() - started;
    for (let i = 0; ; i++) {
      for (const shape of shapes!) {
        const variant = shape.variants[i % shape.variants.length]!;
        const response = await fetch(`${url}${variant.http.path}`, { method: variant.http.method, headers: variant.http.body ? { 'content-type': 'application/json' } : {}, body: variant.http.body });
        await response.arrayBuffer();
        if (response.headers.get('x-query-engine') === 'index') return { listening, meta: metaAnswered, index: performance.now() - started };
      }
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

// An untimed first start: the client's own first fetch, and the variants from the metadata.
{
  const port = await freePort();
  const child = spawn(process.execPath, [servers[0]!], { env: { ...process.env, ...SERVICE_PROCESS_ENV, DATABASE_URL: values['database-url'], PORT: String(port), HOST: '127.0.0.1', SEED_ON_START: 'false', LOG_LEVEL: 'warn', QUERY_INDEX_WARM_VERSIONS: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('Service listening') && resolve()));
  shapes = buildShapes(dataSetId, (await (await fetch(`http://127.0.0.1:${port}/v1/data-sets/${dataSetId}/meta`)).json()) as ApiMeta);
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}
for (let run = 0; run < Number(values.runs); run++) {
  for (const server of servers) {
    const result = await coldStart(server);
    const kept = samples.get(server)!;
    kept.listening.push(result.listening);
    kept.meta.push(result.meta);
    kept.index.push(result.index);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [server, kept] of samples) {
  console.log(`${server}: start → listening ${median(kept.listening).toFixed(0)} ms, → metadata ${median(kept.meta).toFixed(0)} ms, → row index answering ${median(kept.index).toFixed(0)} ms (medians of ${kept.index.length})`);
}
