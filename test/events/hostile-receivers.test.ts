/**
 * Receivers that misbehave at the socket level (real local servers writing raw bytes): every attempt settles by its
 * total deadline and frees its slot, and one provider's hostile or slow receivers never hold another provider's
 * deliveries back by more than a few seconds.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWebhook } from '../../src/events/webhook-sender.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken, type TestProvider } from '../register/helpers.js';
import { createTrainee, expectServiceAnswersOthers, registerCall, until, type Bystander } from './outside.js';
import { loopbackNetwork, startReceiver } from './receiver.js';

type Hostility = 'upgrade' | 'continue-forever' | 'trickle-headers' | 'close-mid-body' | 'half-close';

/** A receiver that reads the request's headers, then does `hostility` with raw bytes; it counts open sockets. */
async function startHostileReceiver(hostility: Hostility) {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let seen = '';
    let started = false;
    socket.on('data', (chunk) => {
      seen += chunk.toString('latin1');
      if (started || !seen.includes('\r\n\r\n')) return;
      started = true;
      if (hostility === 'upgrade') {
        socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n');
      } else if (hostility === 'continue-forever') {
        const timer = setInterval(() => socket.writable && socket.write('HTTP/1.1 100 Continue\r\n\r\n'), 100);
        socket.on('close', () => clearInterval(timer));
      } else if (hostility === 'trickle-headers') {
        socket.write('HTTP/1.1 200 OK\r\n');
        const header = 'X-Slow: ' + 'a'.repeat(10_000);
        let at = 0;
        const timer = setInterval(() => socket.writable && socket.write(header[at++ % header.length]!), 50);
        socket.on('close', () => clearInterval(timer));
      } else if (hostility === 'close-mid-body') {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nabc');
        setTimeout(() => socket.destroy(), 20);
      } else {
        socket.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    get open() {
      return sockets.size;
    },
    get accepted() {
      return accepted;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** A receiver that answers 204 after `delayMs`. */
async function startSlowReceiver(delayMs: number) {
  let answered = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    const timer = setTimeout(() => {
      answered += 1;
      res.writeHead(204).end();
    }, delayMs);
    res.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    get answered() {
      return answered;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('one attempt against a hostile receiver', () => {
  const { network } = loopbackNetwork();
  const policy = { allowPrivate: true, allowHttp: true };

  it.each([
    ['upgrade', /switched protocols|within 1000 ms/],
    ['continue-forever', /within 1000 ms/],
    ['trickle-headers', /within 1000 ms/],
    ['half-close', /closed before an answer|socket hang up/],
  ] as const)('%s: settles as a failure by the total deadline and leaves no socket open', async (hostility, error) => {
    const receiver = await startHostileReceiver(hostility);
    const started = Date.now();
    const result = await sendWebhook({
      url: receiver.url,
      headers: {},
      body: '{}',
      connectTimeoutMs: 300,
      totalTimeoutMs: 1000,
      policy,
      network,
    });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(result.ok).toBe(false);
    expect(result.error).toMatch(error);
    expect(receiver.accepted).toBe(1);
    await until(() => receiver.open === 0, 2000, 'the receiver to see its socket closed');
    await receiver.close();
  });

  it('close-mid-body: settles at once on the status it got, and leaves no socket open', async () => {
    const receiver = await startHostileReceiver('close-mid-body');
    const started = Date.now();
    const result = await sendWebhook({
      url: receiver.url,
      headers: {},
      body: '{}',
      connectTimeoutMs: 300,
      totalTimeoutMs: 5000,
      policy,
      network,
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toMatchObject({ status: 200 });
    await until(() => receiver.open === 0, 2000, 'the receiver to see its socket closed');
    await receiver.close();
  });
});

describe("one provider's hostile and slow receivers", () => {
  let t: TestApp;
  let hostile: TestProvider;
  let bystander: Bystander;
  let base: string;
  const receivers: Array<{ close(): Promise<void> }> = [];
  const { network } = loopbackNetwork();

  beforeAll(async () => {
    // The production timeout (10 s per attempt), a small instance (4 slots, 2 per owner).
    t = await buildTestApp(
      {
        RATE_LIMIT_REGISTER_MAX: '100000',
        WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
        WEBHOOK_POLL_MS: '100',
        WEBHOOK_TIMEOUT_MS: '10000',
        WEBHOOK_CONCURRENCY: '4',
        WEBHOOK_CONCURRENCY_PER_OWNER: '2',
      },
      { webhookNetwork: network },
    );
    hostile = await createProviderWithToken(t.database.db);
    const honest = await startReceiver();
    receivers.push(honest);
    bystander = { provider: await createProviderWithToken(t.database.db), receiver: honest };
    expect((await registerCall(t, bystander.provider, 'POST', '/webhooks', { url: honest.url })).statusCode).toBe(201);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
    for (const receiver of receivers) await receiver.close();
  });

  async function subscribeHostile(url: string): Promise<string> {
    const res = await registerCall(t, hostile, 'POST', '/webhooks', { url, event_types: ['trainee.created'] });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.id;
  }

  it('receivers answering 101, 100-continue forever, trickled headers and a half-close: every attempt settles, nothing is stuck, others are served', async () => {
    const ids: string[] = [];
    const hostiles: Array<Awaited<ReturnType<typeof startHostileReceiver>>> = [];
    for (const hostility of ['upgrade', 'upgrade', 'continue-forever', 'trickle-headers', 'half-close'] as const) {
      const receiver = await startHostileReceiver(hostility);
      receivers.push(receiver);
      hostiles.push(receiver);
      ids.push(await subscribeHostile(receiver.url));
    }
    for (let i = 0; i < 3; i++) await createTrainee(t, hostile, `hostile${i}`);
    // The hostile owner's attempts are under way (its 2 slots taken)...
    await until(() => hostiles.some((r) => r.accepted > 0), 5000, 'hostile attempts');
    // ...and another provider's delivery still arrives within 5 s, streams and exports are accepted.
    await expectServiceAnswersOthers(t, base, bystander);
    // Each attempt settled by its deadline: the receivers saw more than one attempt each (retries), none stuck.
    await until(
      () => hostiles.filter((r) => r.accepted >= 2).length >= 2,
      30_000,
      'hostile attempts to settle and be retried',
    );
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/webhook_attempts\{state="stuck"\} 0/);
    const inFlight = Number(/webhook_attempts\{state="in_flight"\} (\d+)/.exec(metrics.body)![1]);
    expect(inFlight).toBeLessThanOrEqual(4);
    for (const id of ids) expect((await registerCall(t, hostile, 'DELETE', `/webhooks/${id}`)).statusCode).toBe(204);
    // Gone: the slots come back within one deadline, and nothing stays connected to the hostile receivers.
    await until(() => hostiles.every((r) => r.open === 0), 15_000, 'hostile sockets closed');
    await expectServiceAnswersOthers(t, base, bystander);
  }, 90_000);

  it("ten subscriptions whose receivers answer after 9 s, at the rate limit: another provider's first attempt within 5 s", async () => {
    const slow = await startSlowReceiver(9000);
    receivers.push(slow);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await subscribeHostile(slow.url));
    for (let i = 0; i < 8; i++) await createTrainee(t, hostile, `slow${i}`);
    await new Promise((r) => setTimeout(r, 500));
    await expectServiceAnswersOthers(t, base, bystander);
    await new Promise((r) => setTimeout(r, 3000));
    await expectServiceAnswersOthers(t, base, bystander);
    for (const id of ids) expect((await registerCall(t, hostile, 'DELETE', `/webhooks/${id}`)).statusCode).toBe(204);
  }, 90_000);

  it('shuts down within one attempt deadline while a hostile attempt is under way', async () => {
    const receiver = await startHostileReceiver('upgrade');
    receivers.push(receiver);
    const id = await subscribeHostile(receiver.url);
    await createTrainee(t, hostile, 'shutdown');
    // The provider's share of slots may still be held by the previous test's slow attempts for up to one deadline.
    await until(() => receiver.accepted > 0, 15_000, 'the hostile attempt');
    const started = Date.now();
    await t.app.close();
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(receiver.open).toBe(0);
    expect(id).toBeTruthy();
  }, 30_000);
});
