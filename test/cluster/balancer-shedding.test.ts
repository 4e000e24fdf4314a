import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { haproxyAvailable } from '../../bench/cluster/cluster.js';
import { freePort, startProcess, stopProcess, waitFor, type Managed } from '../../bench/cluster/processes.js';
import { haproxyEnv, TOPOLOGY } from '../../bench/cluster/topology.js';

/**
 * The shipped HAProxy configuration (bench/cluster/haproxy.cfg, also docker-compose's) bounds what it sends each
 * instance (16 at once) and what waits for them (32), and answers the rest 503 with Retry-After at once, in the
 * error format of the API asked. Two stand-in instances hold every request until the test lets them go, so the
 * balancer's queue fills deterministically.
 */
const PER_INSTANCE = 16;
const QUEUE_BOUND = 32;

interface HeldInstance {
  server: http.Server;
  address: string;
  held: http.ServerResponse[];
  seen: string[];
}

async function heldInstance(): Promise<HeldInstance> {
  const instance: HeldInstance = { server: http.createServer(), address: '', held: [], seen: [] };
  instance.server.on('request', (request, response) => {
    if (request.url === '/health/ready') return void response.end('{"status":"ok"}');
    instance.seen.push(request.url ?? '');
    instance.held.push(response);
  });
  await new Promise<void>((resolve) => instance.server.listen(0, '127.0.0.1', resolve));
  instance.address = `127.0.0.1:${(instance.server.address() as AddressInfo).port}`;
  return instance;
}

const release = (instances: HeldInstance[]) => {
  for (const instance of instances) for (const response of instance.held.splice(0)) response.end('held');
};

let logDir: string;
let instances: HeldInstance[] = [];
let haproxy: Managed | undefined;
let url: string;

beforeAll(async () => {
  logDir = await mkdtemp(path.join(tmpdir(), 'balancer-shedding-'));
  instances = [await heldInstance(), await heldInstance()];
  const [port, statsPort] = [await freePort(), await freePort()];
  url = `http://127.0.0.1:${port}`;
  haproxy = startProcess('haproxy', 'haproxy', ['-f', TOPOLOGY.haproxyConfig, '-db'], {
    logDir,
    env: {
      ...process.env,
      ...haproxyEnv(
        `127.0.0.1:${port}`,
        `127.0.0.1:${statsPort}`,
        instances.map((i) => i.address),
      ),
    },
  });
  await waitFor('HAProxy to answer', async () => (await fetch(`${url}/health/ready`)).ok, 10000, 50);
}, 20000);
afterAll(async () => {
  if (instances.length > 0) release(instances);
  if (haproxy) await stopProcess(haproxy, 'SIGTERM', 5000);
  await Promise.all(instances.map((i) => new Promise((r) => i.server.close(r))));
  await rm(logDir, { recursive: true, force: true });
});

describe.skipIf(!haproxyAvailable())('the balancer sheds load past its bounds', () => {
  it('answers 503 with Retry-After at once, in each API’s format, once its queue is full; downloads and probes are not refused', async () => {
    // 16 at each instance, 32 in the queue.
    const admitted = Array.from({ length: 2 * PER_INSTANCE + QUEUE_BOUND }, (_, i) =>
      fetch(`${url}/v1/data-sets/x/query?page=${i}`).then(async (r) => ({ status: r.status, body: await r.text() })),
    );
    await waitFor(
      'each instance to hold its 16',
      async () => instances.every((i) => i.held.length === PER_INSTANCE),
      10000,
      20,
    );
    // The queued ones are in the balancer now (they are not at the instances).
    await new Promise((r) => setTimeout(r, 200));
    expect(instances.map((i) => i.held.length)).toEqual([PER_INSTANCE, PER_INSTANCE]);

    const started = performance.now();
    const statistics = await fetch(`${url}/v1/data-sets/x/query?page=late`);
    const register = await fetch(`${url}/api/v2026.1/trainees`, { method: 'POST', body: '{}' });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(statistics.status).toBe(503);
    expect(statistics.headers.get('retry-after')).toBe('1');
    expect(statistics.headers.get('content-type')).toBe('application/problem+json');
    expect(await statistics.json()).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect(register.status).toBe(503);
    expect(register.headers.get('retry-after')).toBe('1');
    expect(await register.json()).toEqual({ error: expect.stringMatching(/busy/) });

    // A download goes to its own backend, past the bound: it reaches an instance.
    const download = fetch(`${url}/v1/data-sets/x/csv`).then((r) => r.status);
    await waitFor(
      'the download to reach an instance',
      async () => instances.some((i) => i.seen.includes('/v1/data-sets/x/csv')),
      10000,
      20,
    );
    // A probe through the balancer is not refused: it waits its turn.
    const metrics = fetch(`${url}/metrics`).then((r) => r.status);

    release(instances);
    // Everything admitted is answered once the instances answer; nothing admitted was refused.
    await waitFor(
      'the queued requests to reach the instances',
      async () => {
        release(instances);
        return instances.reduce((n, i) => n + i.seen.length, 0) >= 2 * PER_INSTANCE + QUEUE_BOUND + 2;
      },
      10000,
      20,
    );
    release(instances);
    const answers = await Promise.all(admitted);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(2 * PER_INSTANCE + QUEUE_BOUND);
    expect(await download).toBe(200);
    expect(await metrics).toBe(200);
  });
});
