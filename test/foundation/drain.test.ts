import { chmod, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { startServerProcess, stopServerProcess } from '../helpers/server-process.js';

let dataDir: string;
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** The status of a GET on a new connection (as a balancer's check or a retried request opens one), or the error code. */
function status(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: 2000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

interface Observation {
  at: number;
  ready: number | string;
  traffic: number | string;
}

describe('SIGTERM', () => {
  it('drains first: /health/ready answers 503 while requests are still served, then the listener closes and the process exits 0', async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'drain-test-'));
    await chmod(dataDir, 0o755);
    const server = await startServerProcess(dataDir, { SHUTDOWN_DRAIN_MS: '1500' });
    await vi.waitFor(async () => expect(await status(`${server.url}/health/ready`)).toBe(200), {
      timeout: 30000,
      interval: 100,
    });

    const exited = stopServerProcess(server.child, 'SIGTERM');
    const sentAt = Date.now();
    const seen: Observation[] = [];
    let done = false;
    void exited.then(() => {
      done = true;
    });
    // Poll the readiness probe and an API request side by side until the process is gone.
    while (!done && Date.now() - sentAt < 15000) {
      const [ready, traffic] = await Promise.all([
        status(`${server.url}/health/ready`),
        status(`${server.url}/v1/publications`),
      ]);
      seen.push({ at: Date.now() - sentAt, ready, traffic });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await exited).toBe(0);

    const log = JSON.stringify(seen);
    const firstNotReady = seen.findIndex((o) => o.ready === 503);
    const lastServed = seen.findLastIndex((o) => o.traffic === 200);
    expect(firstNotReady, log).toBeGreaterThanOrEqual(0);
    expect(lastServed, log).toBeGreaterThan(firstNotReady);
    // Until the listener closed, not one API request failed, and once draining began the probe never said ready again.
    expect(
      seen.slice(0, lastServed + 1).every((o) => o.traffic === 200),
      log,
    ).toBe(true);
    expect(
      seen.slice(firstNotReady).every((o) => o.ready !== 200),
      log,
    ).toBe(true);
    // The drain lasted most of SHUTDOWN_DRAIN_MS before the listener closed; after it, connections were refused.
    expect(seen[lastServed]!.at - seen[firstNotReady]!.at, log).toBeGreaterThanOrEqual(1000);
    expect(
      seen.slice(lastServed + 1).some((o) => o.traffic === 'ECONNREFUSED'),
      log,
    ).toBe(true);
  }, 120000);
});
