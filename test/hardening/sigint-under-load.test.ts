import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processStats } from '../helpers/processes.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';

/**
 * `npm start` runs the compiled server with node. A Ctrl-C in its terminal (SIGINT to the whole process group) while
 * it is busy must stop it gracefully: in-flight requests end, the pools close and the embedded PostgreSQL (its own
 * process group) is stopped, so no process is left behind. Under tsx the same signal could kill the server outright
 * and leave PostgreSQL running.
 */
const run = promisify(execFile);
let dataDir: string;
let server: ServerProcess | undefined;

beforeAll(async () => {
  // The build `npm start` runs first (prestart).
  await run('npm', ['run', 'build'], { timeout: 240000 });
  dataDir = await mkdtemp(path.join(tmpdir(), 'sigint-test-'));
  await chmod(dataDir, 0o755);
}, 300000);

afterAll(async () => {
  if (server?.child.exitCode === null) server.child.kill('SIGKILL');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Whether a process is alive (and not a zombie). */
function alive(pid: number): boolean {
  return processStats().some((p) => p.pid === pid && p.state !== 'Z');
}

/** The live processes of a process group. */
function groupMembers(pgid: number): number[] {
  return processStats()
    .filter((p) => p.pgid === pgid && p.state !== 'Z')
    .map((p) => p.pid);
}

describe('SIGINT to the process group of the built server under load', () => {
  it('serves the API reference, then stops the server and the embedded PostgreSQL, leaving no process behind', async () => {
    server = await startServerProcess(dataDir, {}, { built: true, detached: true });
    // The bundle holds the OpenAPI plugins, not swagger-ui's files: the API reference still finds them.
    const page = await fetch(`${server.url}/docs/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-initializer.js');
    const asset = await fetch(`${server.url}/docs/static/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    expect((await asset.arrayBuffer()).byteLength).toBeGreaterThan(100000);
    expect(((await (await fetch(`${server.url}/openapi.json`)).json()) as { openapi: string }).openapi).toBe('3.1.0');
    const pid = server.child.pid!;
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');
    expect(existsSync(pidFile)).toBe(true);
    const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
    expect(alive(postmaster)).toBe(true);

    // Load: 32 clients asking in a loop (catalogue, metadata reads and readiness) until the server stops answering.
    let stopped = false;
    let answered = 0;
    const client = async () => {
      const urls = ['/v1/publications', '/health/ready', '/api/v2026.1/reference-data', '/'];
      for (let i = 0; !stopped; i++) {
        const ok = await fetch(`${server!.url}${urls[i % urls.length]}`).then(
          (r) => r.arrayBuffer().then(() => true),
          () => false,
        );
        if (ok) answered += 1;
        else stopped = true;
      }
    };
    const clients = Array.from({ length: 32 }, client);
    await new Promise((r) => setTimeout(r, 1500));
    expect(answered).toBeGreaterThan(0);

    const exited = new Promise<number | null>((resolve) => {
      server!.child.removeAllListeners('exit');
      server!.child.on('exit', (code) => resolve(code));
    });
    process.kill(-pid, 'SIGINT');
    const code = await exited;
    stopped = true;
    await Promise.all(clients);

    expect(code, server.output()).toBe(0);
    expect(server.output()).toContain('Stopped.');
    // Nothing left: neither the server's group nor the PostgreSQL cluster (a group of its own).
    for (let attempt = 0; attempt < 50 && (groupMembers(pid).length > 0 || alive(postmaster)); attempt++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(groupMembers(pid)).toEqual([]);
    expect(alive(postmaster)).toBe(false);
    expect(groupMembers(postmaster)).toEqual([]);
  }, 180000);
});
