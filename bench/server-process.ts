import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { SERVICE_PROCESS_ENV } from '../src/process-env.js';

const root = path.resolve(import.meta.dirname, '..');

/** A free TCP port on the loopback interface, for the benchmarked server. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Resolves with the seconds from `started` until `child` prints that it listens (`says`; on whichever of its stdout and stderr
 * are piped, which are read for its whole life so that it never blocks on a full pipe); rejects with `name` and the
 * end of its output if it exits first.
 */
function listening(child: ChildProcess, started: number, name: string, says = 'Service listening'): Promise<number> {
  let output = '';
  return new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
      if (output.includes(says)) resolve((performance.now() - started) / 1000);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}:\n${output.slice(-2000)}`)));
  });
}

/**
 * Starts `src/server.ts` in its own process with `env`; resolves once it listens. `BENCH_SERVER_NODE_ARGS` (e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes on its command line: Node refuses profiler flags in NODE_OPTIONS.
 */
export async function startServer(env: NodeJS.ProcessEnv, timeoutMs = 120000): Promise<ChildProcess> {
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/server.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`server did not start within ${timeoutMs / 1000} s`)), timeoutMs);
  });
  try {
    await Promise.race([listening(child, performance.now(), 'src/server.ts'), timedOut]);
    return child;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Starts a bundled server (`dist/server.mjs` by default: what `npm start` runs after its build) with node, as
 * production runs it, and `nodeArgs` before its file; `listening` resolves with the seconds from the spawn until it
 * listens, or rejects with its last output if it exits first.
 */
export function startBuiltServer(
  env: NodeJS.ProcessEnv,
  options: { file?: string; nodeArgs?: string[] } = {},
): { child: ChildProcess; listening: Promise<number> } {
  const started = performance.now();
  const file = options.file ?? 'dist/server.mjs';
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), '--enable-source-maps', file], {
    cwd: root,
    env: { ...env, ...SERVICE_PROCESS_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, listening: listening(child, started, file) };
}

/** Starts bench/floor-server.ts (the benchmark's floor) in its own process on `port`; resolves once it listens. */
export async function startFloorServer(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/floor-server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await listening(child, performance.now(), 'bench/floor-server.ts', 'Floor server listening');
  return child;
}

/** SIGTERM, then waits for the exit (the server drains in-flight requests first). */
export function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** The server of a register benchmark: its own data dir and port, rate limits out of the way, a pool of 20. */
export function registerBenchServerEnv(dataDir: string, port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SEED_ON_START: 'false',
    RATE_LIMIT_REGISTER_MAX: '100000000',
    DATABASE_POOL_MAX: '20',
    // The sandbox's simulated TRNs would otherwise change the created trainees during later scenarios: the writes
    // measured are the requests', not the simulator's.
    REGISTER_SANDBOX_TRN_DELAY_MS: process.env.REGISTER_SANDBOX_TRN_DELAY_MS ?? '86400000',
  };
}

/** Resolves once the server's /metrics shows no row index loading, or at `deadline` (a performance.now() time). */
export async function untilNoRowIndexLoading(url: string, deadline: number): Promise<void> {
  while (performance.now() < deadline) {
    const metrics = await (await fetch(`${url}/metrics`)).text();
    if (/^statistics_row_index_versions\{state="loading"\} 0$/m.test(metrics)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
