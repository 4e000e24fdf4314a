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
 * instance (16 at once) and what waits for them (16 per instance in the pool), and answers the rest 503
 * with Retry-After at once, in the error format of the API asked. Two stand-in instances hold every request until the test lets them go, so the
 * balancer's queue fills deterministically.
 */
const PER_INSTANCE = 16;
/**
 * The queue's bound: 16 per instance in the pool, as HAProxy's `avg_queue` counts it (the queue divided by the
 * instances up, rounded up): 31 waiting with both instances up, 16 with one.
 */
const QUEUE_BOUND = 31;
const QUEUE_BOUND_ONE_UP = 16;

interface HeldInstance {
  /** What its readiness probe answers: 200, or 503 (the balancer takes it out of the pool). */
  ready: boolean;
  server: http.Server;
  address: string;
  held: http.ServerResponse[];
  seen: string[];
}

async function heldInstance(): Promise<HeldInstance> {
  const instance: HeldInstance = { ready: true, server: http.createServer(), address: '', held: [], seen: [] };
  instance.server.on('request', (request, response) => {
    if (request.url === '/health/ready') {
      response.statusCode = instance.ready ? 200 : 503;
      return void response.end(instance.ready ? '{"status":"ok"}' : '{"status":"draining"}');
    }
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
let statsUrl: string;

beforeAll(async () => {
  logDir = await mkdtemp(path.join(tmpdir(), 'balancer-shedding-'));
  instances = [await heldInstance(), await heldInstance()];
  const [port, statsPort] = [await freePort(), await freePort()];
  url = `http://127.0.0.1:${port}`;
  statsUrl = `http://127.0.0.1:${statsPort}/;csv`;
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
    // 16 at each instance, 31 in the queue.
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
  it('keeps the wait the same when one instance is out of the pool: 16 queued for the one left', async () => {
    const [app1, app2] = instances as [HeldInstance, HeldInstance];
    app2.ready = false;
    await waitFor(
      'app2 to leave the pool',
      async () => /^instances,app2,.*,DOWN/m.test(await (await fetch(statsUrl)).text()),
      10000,
      100,
    );
    const admitted = Array.from({ length: PER_INSTANCE + QUEUE_BOUND_ONE_UP }, (_, i) =>
      fetch(`${url}/v1/data-sets/x/query?one=${i}`).then((r) => r.status),
    );
    await waitFor('app1 to hold its 16', async () => app1.held.length === PER_INSTANCE, 10000, 20);
    await new Promise((r) => setTimeout(r, 200));
    expect(app2.held).toHaveLength(0);

    const late = await fetch(`${url}/v1/data-sets/x/query?one=late`);
    expect(late.status).toBe(503);
    expect(late.headers.get('retry-after')).toBe('1');

    await waitFor(
      'the queued requests to reach app1',
      async () => {
        release([app1]);
        return app1.seen.filter((u) => u.includes('one=')).length >= PER_INSTANCE + QUEUE_BOUND_ONE_UP;
      },
      10000,
      20,
    );
    release([app1]);
    expect(await Promise.all(admitted)).toEqual(Array(PER_INSTANCE + QUEUE_BOUND_ONE_UP).fill(200));
    app2.ready = true;
  });
});
