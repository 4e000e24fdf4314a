import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { embeddedClient, startServerProcess, stopServerProcess } from '../helpers/server-process.js';

let dataDir: string;
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('the server process', () => {
  it('starts on the embedded database, stops cleanly on SIGINT, and reuses the data on the next start', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'server-test-'));
    // mkdtemp makes it private; the embedded server runs as the `postgres` user when we are root.
    await chmod(dataDir, 0o755);
    const first = await startServerProcess(dataDir);
    // Ready once its warm-up is over (route schemas compiled, code lists loaded, connections open).
    await vi.waitFor(async () => expect((await fetch(`${first.url}/health/ready`)).status).toBe(200), {
      timeout: 30000,
      interval: 100,
    });
    // Leave a mark in the database to find after the restart.
    const client = embeddedClient(dataDir);
    await client.connect();
    await client.query('CREATE TABLE restart_marker (note text)');
    await client.query(`INSERT INTO restart_marker VALUES ('kept')`);
    await client.end();

    expect(await stopServerProcess(first.child, 'SIGINT')).toBe(0);
    expect(first.output()).toMatch(/Stopped\./);

    const second = await startServerProcess(dataDir);
    try {
      await vi.waitFor(async () => expect((await fetch(`${second.url}/health/ready`)).status).toBe(200), {
        timeout: 30000,
        interval: 100,
      });
      const again = embeddedClient(dataDir);
      await again.connect();
      const { rows } = await again.query('SELECT note FROM restart_marker');
      await again.end();
      expect(rows).toEqual([{ note: 'kept' }]);
    } finally {
      expect(await stopServerProcess(second.child, 'SIGTERM')).toBe(0);
    }
  }, 180000);
});
