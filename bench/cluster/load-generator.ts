import http from 'node:http';
import { performance } from 'node:perf_hooks';

/**
 * The overload drill's client, a process of its own (`node --import tsx bench/cluster/load-generator.ts '<spec>'`,
 * started by drills.ts): statistics reads through the balancer, either a closed loop (`concurrency` requests at once,
 * each started when the one before it ends: the capacity) or an open loop (`rate` requests started per second
 * whatever the answers take: the overload). Its own process, so that the drill's bookkeeping and its other loops
 * cannot delay a request's start, and node:http with keep-alive rather than fetch, whose cost per request is several
 * times higher: the client takes as little as it can of the cores it shares with the cluster. Answers are not
 * compressed (no Accept-Encoding) and each 200 is compared byte for byte with the answer the request gave twice
 * before the load. Prints one JSON line (LoadResult): a sample per request, and this process's own stalls and CPU.
 */

export interface LoadRequest {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
}

export interface LoadSpec {
  url: string;
  requests: LoadRequest[];
  seconds: number;
  /** A closed loop of this many requests at once. */
  concurrency?: number;
  /** An open loop starting this many requests per second. */
  rate?: number;
}

/** One request: start (ms since the loop began), status (0: no answer), duration, and what the answer said. */
export interface LoadSample {
  at: number;
  request: number;
  status: number;
  ms: number;
  retryAfter: boolean;
  /** The instance that answered (HAProxy's X-Served-By); absent when the balancer answered itself (its shed 503s). */
  servedBy?: string;
  /** A 200 whose body differs from the reference (undefined: the request has no stable reference). */
  wrongData?: boolean;
  error?: string;
}

const TIMEOUT_MS = 30000;
/** Requests open at once in the open loop at most (as the drill's fetch client had). */
const MAX_OPEN = 5000;
const WARM_UP_MS = 1000;
const WARM_UP_CONCURRENCY = 16;
const STALL_MS = 20;

// An idle connection is closed by this client after FREE_SOCKET_MS, before the balancer closes it (HAProxy: after
// `timeout http-request`, 15 s): otherwise a burst that takes a connection idle since the warm-up can send on one
// the balancer is closing at that moment, and get ECONNRESET for a request that never reached it.
const FREE_SOCKET_MS = 4000;
const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, timeout: FREE_SOCKET_MS });

/** An answer: its status and headers, and whether its body was `expected` byte for byte (when one was given). */
interface Answer {
  status: number;
  retryAfter: boolean;
  servedBy?: string;
  matches?: boolean;
  error?: string;
}

/**
 * Sends `request`; with `expected`, compares the answer's body with it chunk by chunk as it arrives, with `keep` it
 * returns the body. No buffer is made per answer otherwise: joining each body into a new one, a thousand a second,
 * drove this process into major collections during the loop, and the answers that arrived while it was paused were
 * timed late (docs/scaling.md, the runs of 2026-11-30 09:23).
 */
function send(base: URL, request: LoadRequest, expected?: Buffer): Promise<Answer>;
function send(base: URL, request: LoadRequest, expected: undefined, keep: true): Promise<Answer & { body: Buffer }>;
function send(base: URL, request: LoadRequest, expected?: Buffer, keep = false): Promise<Answer & { body?: Buffer }> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method: request.method,
        path: request.path,
        agent,
        timeout: TIMEOUT_MS,
        headers: request.body ? { 'content-type': 'application/json' } : {},
      },
      (response) => {
        const chunks: Buffer[] = [];
        let offset = 0;
        let matches = true;
        response.on('data', (chunk: Buffer) => {
          if (keep) chunks.push(chunk);
          if (expected && matches) {
            const end = offset + chunk.length;
            matches = end <= expected.length && expected.compare(chunk, 0, chunk.length, offset, end) === 0;
          }
          offset += chunk.length;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'] !== undefined,
            servedBy: response.headers['x-served-by'] as string | undefined,
            ...(expected ? { matches: matches && offset === expected.length } : {}),
            ...(keep ? { body: Buffer.concat(chunks) } : {}),
          }),
        );
        response.on('error', (error) => resolve({ status: 0, retryAfter: false, error: error.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ status: 0, retryAfter: false, error: error.code ?? error.message }),
    );
    req.end(request.body);
  });
}

/** The run: a sample per request, and what this process itself cost, so that its own delays can be told apart. */
export interface LoadResult {
  samples: LoadSample[];
  /**
   * Pauses of this process's event loop over 20 ms during the measured loop, [start ms, length ms]: an answer that
   * arrived during one is timed late by the client (its garbage collection, a burst of answers, or no core for it).
   */
  clientStalls: Array<[number, number]>;
  /** CPU seconds this process used, set-up and warm-up included. */
  clientCpuSeconds: number;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const base = new URL(spec.url);
  // References: a request whose answer is the same twice in a row is checked byte for byte under load.
  const references: Array<Buffer | undefined> = [];
  for (const request of spec.requests) {
    const [a, b] = [await send(base, request, undefined, true), await send(base, request, undefined, true)];
    if (a.status !== 200) throw new Error(`${request.method} ${request.path}: ${a.status}`);
    references.push(a.body.equals(b.body) ? a.body : undefined);
  }
  // A long-running client has its code compiled and its connections open. Without this, the measured loop starts
  // with a cold JIT and hundreds of connects, and this process stalls in its first second, which shows as late
  // answers (docs/scaling.md). So: one second of the requests themselves, WARM_UP_CONCURRENCY at once (not recorded;
  // the comparison with the reference too, so that it is compiled), then as many connections as the loop will keep
  // busy (the closed loop's concurrency; the open loop's requests of 200 ms) opened with the liveness probe, which
  // no bound refuses.
  const warmUntil = performance.now() + WARM_UP_MS;
  let warmNext = 0;
  await Promise.all(
    Array.from({ length: WARM_UP_CONCURRENCY }, async () => {
      while (performance.now() < warmUntil) {
        const request = warmNext++ % spec.requests.length;
        await send(base, spec.requests[request]!, references[request]);
      }
    }),
  );
  const connections = spec.concurrency ?? Math.ceil((spec.rate ?? 0) / 5);
  const probe: LoadRequest = { method: 'GET', path: '/health/live' };
  for (let round = 0; round < 3; round++) {
    await Promise.all(Array.from({ length: connections }, () => send(base, probe)));
  }
  // The warm-up's garbage collected now, not by a major collection in the measured loop (drills.ts starts this
  // process with --expose-gc).
  globalThis.gc?.();
  const samples: LoadSample[] = [];
  const t0 = performance.now();
  const clientStalls: Array<[number, number]> = [];
  let tick = performance.now();
  const watchdog = setInterval(() => {
    const now = performance.now();
    if (now - tick > STALL_MS) clientStalls.push([Math.round(tick - t0), Math.round(now - tick)]);
    tick = now;
  }, 1);
  const until = t0 + spec.seconds * 1000;
  let next = 0;
  const one = async () => {
    const request = next++ % spec.requests.length;
    const begin = performance.now();
    const reference = references[request];
    const answer = await send(base, spec.requests[request]!, reference);
    samples.push({
      at: begin - t0,
      request,
      status: answer.status,
      ms: performance.now() - begin,
      retryAfter: answer.retryAfter,
      ...(answer.servedBy ? { servedBy: answer.servedBy } : {}),
      ...(answer.status === 200 && answer.matches !== undefined ? { wrongData: !answer.matches } : {}),
      ...(answer.error ? { error: answer.error } : {}),
    });
  };
  if (spec.concurrency !== undefined) {
    await Promise.all(
      Array.from({ length: spec.concurrency }, async () => {
        while (performance.now() < until) await one();
      }),
    );
  } else {
    const rate = spec.rate ?? 0;
    let issued = 0;
    let open = 0;
    const pending = new Set<Promise<void>>();
    while (performance.now() < until) {
      const due = Math.floor(((performance.now() - t0) / 1000) * rate);
      while (issued < due && open < MAX_OPEN) {
        issued++;
        open++;
        const task: Promise<void> = one().finally(() => {
          open--;
          pending.delete(task);
        });
        pending.add(task);
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    await Promise.all(pending);
  }
  agent.destroy();
  clearInterval(watchdog);
  const cpu = process.cpuUsage();
  return { samples, clientStalls, clientCpuSeconds: Math.round((cpu.user + cpu.system) / 10000) / 100 };
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  runLoad(spec).then(
    (result) => process.stdout.write(`${JSON.stringify(result)}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
