import { parseArgs } from 'node:util';
import { fetchShapes, fetchVariant } from './scale-shapes.js';
import { freePort, startBuiltServer, stopServer } from './server-process.js';
import { FSM_DATA_SET_ID } from './datasets.js';

/**
 * `npx tsx bench/cold-start.ts --database-url URL [--runs 8] [--data-set ID] SERVER.mjs [SERVER.mjs ...]`: a server's
 * cold start, each given build (`dist/server.mjs`, or copies made with `node dist/src/cli/bundle.js --out DIR`) in
 * turn, `--runs` times, on one database whose data set has its row index stored (the 347,830-row one by default, as
 * `npm run bench:scale` imports it): start → listening, → the metadata answered, → the first query answered by the
 * row index, as bench:scale's cold start asks them. Prints the medians per build; alternating the builds keeps a
 * comparison fair on a machine whose speed drifts. `COLD_START_NODE_ARGS` are given to node before each timed build
 * (`--cpu-prof --cpu-prof-dir=DIR` profiles its start).
 */
const { values, positionals } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    runs: { type: 'string', default: '8' },
    'data-set': { type: 'string', default: FSM_DATA_SET_ID },
  },
  allowPositionals: true,
  strict: true,
});
if (!values['database-url'] || positionals.length === 0)
  throw new Error('Usage: bench/cold-start.ts --database-url URL [--runs N] SERVER.mjs ...');
const dataSetId = values['data-set'];
const servers = positionals;
const samples = new Map(
  servers.map((server) => [server, { listening: [] as number[], meta: [] as number[], index: [] as number[] }]),
);
const serverEnv = {
  ...process.env,
  DATABASE_URL: values['database-url'],
  HOST: '127.0.0.1',
  SEED_ON_START: 'false',
  LOG_LEVEL: 'warn',
};

// An untimed first start: the client's own first fetch, and the variants from the metadata.
const shapes = await (async () => {
  const port = await freePort();
  const { child, listening } = startBuiltServer(
    { ...serverEnv, PORT: String(port), QUERY_INDEX_WARM_VERSIONS: '0' },
    { file: servers[0]! },
  );
  try {
    await listening;
    return await fetchShapes(`http://127.0.0.1:${port}`, dataSetId);
  } finally {
    await stopServer(child);
  }
})();

/** One timed start of a build: start → listening, → the metadata answered, → the first answer of the row index (ms). */
async function coldStart(server: string): Promise<{ listening: number; meta: number; index: number }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const { child, listening } = startBuiltServer(
    { ...serverEnv, PORT: String(port), RATE_LIMIT_STATISTICS_MAX: '1000000000' },
    { file: server, nodeArgs: (process.env.COLD_START_NODE_ARGS ?? '').split(' ').filter(Boolean) },
  );
  try {
    await listening;
    const listened = performance.now() - started;
    // What a client asks first (the variants were made from it before the timed starts).
    await (await fetch(`${url}/v1/data-sets/${dataSetId}/meta`)).arrayBuffer();
    const metaAnswered = performance.now() - started;
    for (let i = 0; ; i++) {
      for (const shape of shapes) {
        const response = await fetchVariant(url, shape.variants[i % shape.variants.length]!);
        await response.arrayBuffer();
        if (response.headers.get('x-query-engine') === 'index')
          return { listening: listened, meta: metaAnswered, index: performance.now() - started };
      }
    }
  } finally {
    await stopServer(child);
  }
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
  console.log(
    `${server}: start → listening ${median(kept.listening).toFixed(0)} ms, → metadata ${median(kept.meta).toFixed(0)} ms, → row index answering ${median(kept.index).toFixed(0)} ms (medians of ${kept.index.length})`,
  );
}
