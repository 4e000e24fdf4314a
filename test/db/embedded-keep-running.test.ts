import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { isOrphaned, runningPostmaster } from '../../src/db/embedded-postmaster.js';
import { scaledMs } from '../helpers/machine-speed.js';

/**
 * The service's processes keep the embedded PostgreSQL running (`keepRunning`, as src/runtime.ts opens it): a second
 * `npm start` on the same DATA_DIR joins the first one's cluster, and when the first stops (a restart that starts the
 * new process before it stops the old one) the second starts the cluster again on the same port, so the connections
 * it makes keep working; before, it answered "The database is not reachable" until it was restarted by hand.
 */
const clusters: EmbeddedDatabase[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs) {
    // A postmaster whose owner process a test killed (taken over or not), before its files are deleted.
    const left = runningPostmaster(path.join(dir, 'postgres'));
    if (left && isOrphaned(left.pid)) process.kill(left.pid, 'SIGQUIT');
  }
  for (const cluster of clusters.splice(0).reverse()) await cluster.destroy();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'keep-running-'));
  // As root, PostgreSQL runs as the `postgres` user, which must reach the cluster.
  await chmod(dir, 0o755);
  dirs.push(dir);
  return dir;
}

/** `SELECT 1` on a new connection, or the error's message. */
async function selectOne(url: string): Promise<number | string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/** Whether `check` comes true within `ms` (asked every 200 ms). */
async function within(ms: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

const answersWithin = (url: string, ms: number) => within(ms, async () => (await selectOne(url)) === 1);

describe('the embedded PostgreSQL kept running', () => {
  it('is started again, on the same port, by a process that joined it when the process that ran it stops it', async () => {
    const dir = await dataDir();
    const first = await startEmbeddedPostgres(dir);
    clusters.push(first);
    const second = await startEmbeddedPostgres(dir, { keepRunning: true });
    clusters.push(second);
    expect(second.owned).toBe(false);
    expect(second.url).toBe(first.url);

    await first.stop();
    expect(await answersWithin(second.url, scaledMs(30000))).toBe(true);
    expect(second.owned).toBe(true);

    // Stopped by the process that now runs it: nothing is left running, and nothing starts it again.
    await second.stop();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await selectOne(second.url)).toMatch(/ECONNREFUSED/);
  }, 120000);

  it('is joined or started by a process that comes while the process that runs it is stopping it', async () => {
    const dir = await dataDir();
    const first = await startEmbeddedPostgres(dir);
    clusters.push(first);
    // A session still open: PostgreSQL's smart shutdown refuses new sessions ("the database system is shutting
    // down") until it ends, 5 s at most before the fast shutdown ends it.
    const session = new pg.Client({ connectionString: first.url });
    session.on('error', () => {});
    await session.connect();
    const stopping = first.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await startEmbeddedPostgres(dir, { keepRunning: true });
    clusters.push(second);
    await stopping;
    await session.end().catch(() => {});
    expect(await answersWithin(second.url, scaledMs(30000))).toBe(true);
    expect(second.owned).toBe(true);
  }, 120000);

  it('is started again when its postmaster dies', async () => {
    const dir = await dataDir();
    const cluster = await startEmbeddedPostgres(dir, { keepRunning: true });
    clusters.push(cluster);
    const pid = cluster.pid!;
    process.kill(pid, 'SIGKILL');
    expect(await answersWithin(cluster.url, scaledMs(30000))).toBe(true);
    expect(cluster.pid).not.toBe(pid);
  }, 120000);

  it('is left alone by a process that joined it without keepRunning (tests that stop it on purpose)', async () => {
    const dir = await dataDir();
    const first = await startEmbeddedPostgres(dir);
    clusters.push(first);
    const joined = await startEmbeddedPostgres(dir);
    await first.stop();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await selectOne(joined.url)).toMatch(/ECONNREFUSED/);
  }, 120000);
});

/** A process that starts the cluster in `dir` (as a CLI or a server does) and runs until killed; its URL once ready. */
async function ownerProcess(dir: string): Promise<{ url: string; kill: () => Promise<void> }> {
  const script = path.join(dir, 'owner.mts');
  const module = path.resolve('src/db/embedded.js');
  await writeFile(
    script,
    `import { startEmbeddedPostgres } from ${JSON.stringify(module)};\n` +
      `const db = await startEmbeddedPostgres(${JSON.stringify(dir)});\n` +
      `console.log(db.url);\nsetInterval(() => {}, 1000);\n`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('\n')) resolve(output.trim());
    });
    child.on('exit', (code) => reject(new Error(`the owner process exited (${code}) before its cluster was ready`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('a cluster whose process was killed (SIGKILL)', () => {
  it('is taken over by a process that keeps it running, which stops it when it stops', async () => {
    const dir = await dataDir();
    const owner = await ownerProcess(dir);
    const joined = await startEmbeddedPostgres(dir, { keepRunning: true });
    clusters.push(joined);
    expect(joined.owned).toBe(false);
    const postmaster = runningPostmaster(joined.clusterDir)!;

    // The postmaster runs in its own process group, so it outlives its killed owner.
    await owner.kill();
    expect(await within(scaledMs(10000), () => joined.owned)).toBe(true);
    expect(joined.pid).toBe(postmaster.pid);
    expect(await selectOne(joined.url)).toBe(1);

    // Before, it ran on after every process had stopped.
    await joined.stop();
    expect(runningPostmaster(joined.clusterDir)).toBeUndefined();
    expect(await selectOne(joined.url)).toMatch(/ECONNREFUSED/);
  }, 120000);

  it('is not taken over while the process that started it lives', async () => {
    const dir = await dataDir();
    const owner = await ownerProcess(dir);
    try {
      const joined = await startEmbeddedPostgres(dir, { keepRunning: true });
      clusters.push(joined);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(joined.owned).toBe(false);
      await joined.stop();
      expect(await selectOne(owner.url)).toBe(1);
    } finally {
      await owner.kill();
    }
  }, 120000);
});

describe('the port of a cluster started again', () => {
  it('is the port it last ran on, so a process that joined it before keeps working', async () => {
    const dir = await dataDir();
    const first = await startEmbeddedPostgres(dir);
    clusters.push(first);
    const joined = await startEmbeddedPostgres(dir);
    await first.stop();
    // A third process starts it before the joined one would (a joined process without keepRunning never does).
    const third = await startEmbeddedPostgres(dir);
    clusters.push(third);
    expect(third.url).toBe(joined.url);
    expect(await selectOne(joined.url)).toBe(1);
  }, 120000);
});

describe('a postmaster.pid left behind (a power cut, a killed container)', () => {
  it('does not stop a start when the process id it names now belongs to another process', async () => {
    const dir = await dataDir();
    const first = await startEmbeddedPostgres(dir);
    clusters.push(first);
    const pidFile = path.join(first.clusterDir, 'postmaster.pid');
    const lockFile = await readFile(pidFile, 'utf8');
    await first.stop();
    // The file as the server left it, its process id now another (live) process's.
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const lines = lockFile.split('\n');
      lines[0] = String(other.pid);
      await writeFile(pidFile, lines.join('\n'));
      const started = await startEmbeddedPostgres(dir, { keepRunning: true });
      clusters.push(started);
      expect(started.owned).toBe(true);
      expect(await selectOne(started.url)).toBe(1);
    } finally {
      other.kill();
    }
  }, 120000);
});
