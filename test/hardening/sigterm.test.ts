import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { embeddedClient, startServerProcess, stopServerProcess } from '../helpers/server-process.js';

let dataDir: string;
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('SIGTERM with requests in flight', () => {
  it('finishes the in-flight request, refuses new connections, then exits 0', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'sigterm-test-'));
    await chmod(dataDir, 0o755);
    // The close that follows the drain, without the drain (which test/foundation/drain.test.ts covers).
    const server = await startServerProcess(dataDir, { SHUTDOWN_DRAIN_MS: '0' });
    const blocker = embeddedClient(dataDir);
    await blocker.connect();
    // Make the next publications request wait on a lock, so it is still running when SIGTERM arrives.
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE publications IN ACCESS EXCLUSIVE MODE');
    const inFlight = fetch(`${server.url}/v1/publications`);
    await new Promise((r) => setTimeout(r, 300));
    const exited = stopServerProcess(server.child, 'SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // New requests are refused while it drains: the connection is refused, or answered 503 and closed.
    const late = await fetch(`${server.url}/health/live`).then(
      (r) => r.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);
    await blocker.query('ROLLBACK');
    await blocker.end();
    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(await exited).toBe(0);
  }, 180000);
});
