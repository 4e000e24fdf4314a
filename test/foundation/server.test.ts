import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';

/** Starts `src/server.ts` as a user would, on an embedded database in `dataDir`; resolves with its base URL. */
function startServer(dataDir: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, PORT: '0', DATA_DIR: dataDir, SEED_ON_START: 'false', LOG_LEVEL: 'warn', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 90000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(/Service listening on (http:\/\/[^\s]+)/);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1], output: () => output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
}

function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill(signal);
  });
}

/** A client of the embedded cluster in `dataDir` (its port is line 4 of postmaster.pid). */
function embeddedClient(dataDir: string): pg.Client {
  const port = Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]);
  return new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: 'postgres', database: 'app' });
}

let dataDir: string;
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the server process', () => {
  it('starts on the embedded database, stops cleanly on SIGINT, and reuses the data on the next start', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'server-test-'));
    // mkdtemp makes it private; the embedded server runs as the `postgres` user when we are root.
    await chmod(dataDir, 0o755);
    const first = await startServer(dataDir);
    const ready = await fetch(`${first.url}/health/ready`);
    expect(ready.status).toBe(200);
    // Leave a mark in the database to find after the restart.
    const client = embeddedClient(dataDir);
    await client.connect();
    await client.query('CREATE TABLE restart_marker (note text)');
    await client.query(`INSERT INTO restart_marker VALUES ('kept')`);
    await client.end();

    expect(await stop(first.child, 'SIGINT')).toBe(0);
    expect(first.output()).toMatch(/Stopped\./);

    const second = await startServer(dataDir);
    try {
      expect((await fetch(`${second.url}/health/ready`)).status).toBe(200);
      const again = embeddedClient(dataDir);
      await again.connect();
      const { rows } = await again.query('SELECT note FROM restart_marker');
      await again.end();
      expect(rows).toEqual([{ note: 'kept' }]);
    } finally {
      expect(await stop(second.child, 'SIGTERM')).toBe(0);
    }
  }, 180000);
});
