import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { isForbiddenAddress, sendWebhook } from '../../src/events/webhook-sender.js';
import { retryDelayMs } from '../../src/events/webhook-worker.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';
import { loopbackNetwork, startReceiver } from './receiver.js';

const FAST = {
  RATE_LIMIT_REGISTER_MAX: '100000',
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_RETRY_MAX_MS: '200',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '500',
  WEBHOOK_CONNECT_TIMEOUT_MS: '300',
};

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 20_000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function call(t: TestApp, p: TestProvider, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, data?: unknown) {
  return t.app.inject({
    method,
    url: `/api/v2026.1${path}`,
    headers: { ...p.auth, ...(data === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: data === undefined ? undefined : JSON.stringify({ data }),
  });
}

async function createTrainee(t: TestApp, p: TestProvider, name: string): Promise<string> {
  const res = await call(t, p, 'POST', '/trainees', validTrainee({ first_names: name, email: `${name}@example.com` }));
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.trainee_id;
}

describe('the address policy', () => {
  it('refuses loopback, private, link-local, unique-local, shared and metadata addresses, and mapped forms of them', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      'ff02::1',
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111'])
      expect(isForbiddenAddress(address), address).toBe(false);
  });

  it('checks the resolved address at every attempt and connects only to the checked one (DNS rebinding)', async () => {
    const receiver = await startReceiver();
    const answers = [['127.0.0.1'], ['10.0.0.1']];
    const connects: string[] = [];
    const loopback = loopbackNetwork().network;
    const network = {
      resolve: async () => answers.shift() ?? [],
      connect: (o: Parameters<typeof loopback.connect>[0]) => loopback.connect(o),
    };
    const spy = {
      ...network,
      connect: (o: Parameters<typeof network.connect>[0]) => (connects.push(o.address), network.connect(o)),
    };
    const base = {
      url: `http://rebind.test:${receiver.port}/hook`,
      headers: {},
      body: '{}',
      connectTimeoutMs: 300,
      totalTimeoutMs: 500,
      network: spy,
    };
    // First answer loopback with private addresses allowed (the receiver is on this machine)...
    expect(await sendWebhook({ ...base, policy: { allowPrivate: true, allowHttp: true } })).toMatchObject({
      ok: true,
      status: 204,
    });
    // ...then, with the production policy, the name now resolves to a private address: refused before any connect.
    const refused = await sendWebhook({ ...base, policy: { allowPrivate: false, allowHttp: true } });
    expect(refused).toMatchObject({ ok: false, error: expect.stringMatching(/resolves to 10\.0\.0\.1/) });
    expect(connects).toEqual(['127.0.0.1']);
    await receiver.close();
  });

  it('does not follow a redirect, even to a metadata address, and reads no more than a few KB of a response', async () => {
    const receiver = await startReceiver();
    const { network, connects } = loopbackNetwork();
    const options = {
      url: receiver.url,
      headers: {},
      body: '{}',
      connectTimeoutMs: 300,
      totalTimeoutMs: 2000,
      network,
      policy: { allowPrivate: true, allowHttp: true },
    };
    receiver.set({ redirect: 'http://169.254.169.254/latest/meta-data/' });
    expect(await sendWebhook(options)).toMatchObject({
      ok: false,
      status: 302,
      error: expect.stringMatching(/not followed/),
    });
    receiver.set('fail');
    const failed = await sendWebhook(options);
    expect(failed.status).toBe(500);
    expect(failed.error!.length).toBeLessThan(300);
    expect(connects).toEqual(['127.0.0.1', '127.0.0.1']);
    await receiver.close();
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(retryDelayMs(1, 1000, 60_000, () => 0)).toBe(500);
    expect(retryDelayMs(1, 1000, 60_000, () => 1)).toBe(1000);
    expect(retryDelayMs(4, 1000, 60_000, () => 1)).toBe(8000);
    expect(retryDelayMs(20, 1000, 60_000, () => 1)).toBe(60_000);
  });
});

describe('subscriptions refuse internal receivers with 422 and never connect', () => {
  let t: TestApp;
  let provider: TestProvider;
  const { network, connects } = loopbackNetwork({
    'internal.example': ['10.1.2.3'],
    'mixed.example': ['93.184.216.34', '192.168.0.9'],
  });
  beforeAll(async () => {
    t = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000' }, { webhookNetwork: network });
    provider = await createProviderWithToken(t.database.db);
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    ['https://127.0.0.1/hook', /127\.0\.0\.1/],
    ['https://10.0.0.1/hook', /10\.0\.0\.1/],
    ['https://169.254.169.254/latest', /169\.254\.169\.254/],
    ['https://[::1]/hook', /::1/],
    ['https://internal.example/hook', /resolves to 10\.1\.2\.3/],
    ['https://mixed.example/hook', /resolves to 192\.168\.0\.9/],
    ['https://nowhere.example/hook', /does not resolve/],
    ['ftp://example.com/hook', /http/],
    ['https://user:pw@example.com/hook', /credentials/],
  ])('%s', async (url, message) => {
    const res = await call(t, provider, 'POST', '/webhooks', { url });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors[0].message).toMatch(message);
    expect(connects).toEqual([]);
  });
});

describe('deliveries to a real receiver', () => {
  let t: TestApp;
  let provider: TestProvider;
  let other: TestProvider;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let otherReceiver: Awaited<ReturnType<typeof startReceiver>>;
  const { network, connects } = loopbackNetwork();

  beforeAll(async () => {
    t = await buildTestApp(FAST, { webhookNetwork: network });
    provider = await createProviderWithToken(t.database.db);
    other = await createProviderWithToken(t.database.db);
    receiver = await startReceiver();
    otherReceiver = await startReceiver();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await otherReceiver?.close();
  });

  it('signs every event (Standard Webhooks), in order, once per event id; survives 500s, timeouts and refusals; isolates providers; rotates secrets', async () => {
    const created = await call(t, provider, 'POST', '/webhooks', {
      url: receiver.url,
      event_types: ['trainee.created', 'trainee.updated', 'webhook.disabled'],
    });
    expect(created.statusCode, created.body).toBe(201);
    const subscription = created.json().data;
    expect(subscription.secret).toMatch(/^whsec_/);
    // The secret is shown once.
    expect((await call(t, provider, 'GET', `/webhooks/${subscription.id}`)).json().data).not.toHaveProperty('secret');
    const othersSub = await call(t, other, 'POST', '/webhooks', { url: otherReceiver.url });
    expect(othersSub.statusCode).toBe(201);
    // Another provider cannot see or touch it.
    expect((await call(t, other, 'GET', `/webhooks/${subscription.id}`)).statusCode).toBe(404);

    const ids: string[] = [];
    ids.push(await createTrainee(t, provider, 'one'));
    await until(() => receiver.received.length === 1, 20_000, 'first delivery');

    receiver.set('fail');
    ids.push(await createTrainee(t, provider, 'two'));
    await new Promise((r) => setTimeout(r, 600));
    receiver.set('hang');
    ids.push(await createTrainee(t, provider, 'three'));
    await new Promise((r) => setTimeout(r, 1500));
    // Refusing connections: the port closed for a while.
    await receiver.close();
    await new Promise((r) => setTimeout(r, 500));
    // Back on another port (the closed one refused connections meanwhile); the subscription moves to it.
    const revived = await startReceiver();
    const patched = await call(t, provider, 'PATCH', `/webhooks/${subscription.id}`, { url: revived.url });
    expect(patched.statusCode).toBe(200);
    await until(() => revived.received.length >= 2, 30_000, 'recovery');
    await createTrainee(t, other, 'not-yours');

    const rotated = await call(t, provider, 'POST', `/webhooks/${subscription.id}/rotate-secret`);
    const newSecret = rotated.json().data.secret;
    expect(newSecret).not.toBe(subscription.secret);
    const patchRes = await call(t, provider, 'PATCH', `/trainees/${ids[0]}`, { first_names: 'Uno' });
    expect(patchRes.statusCode).toBe(200);
    await until(() => revived.received.length >= 3, 20_000, 'after rotation');

    const all = revived.received;
    expect(all.map((r) => [r.json.type, r.json.resource.id])).toEqual([
      ['trainee.created', ids[1]],
      ['trainee.created', ids[2]],
      ['trainee.updated', ids[0]],
    ]);
    for (const r of all) {
      const headers = { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature };
      expect(r.id).toBe(r.json.id);
      expect(new Webhook(subscription.secret).verify(r.body, headers)).toEqual(r.json);
    }
    // After the rotation both secrets verify (the overlap).
    const last = all[all.length - 1]!;
    expect(
      new Webhook(newSecret).verify(last.body, {
        'webhook-id': last.id,
        'webhook-timestamp': last.timestamp,
        'webhook-signature': last.signature,
      }),
    ).toEqual(last.json);
    expect(receiver.received[0]!.json.resource.id).toBe(ids[0]);
    // One request at a time per subscription.
    expect(revived.maxInFlight).toBe(1);
    // The other provider's receiver got only its own provider's event.
    await until(() => otherReceiver.received.length === 1, 20_000, 'other provider');
    expect(otherReceiver.received.map((r) => r.json.data.trainee_id)).not.toContain(ids[0]);

    // The delivery log: attempts, status and last error.
    const log = (await call(t, provider, 'GET', `/webhooks/${subscription.id}/deliveries`)).json().data;
    const second = log.find((d: any) => d.event_id === all[0]!.id);
    expect(second).toMatchObject({ status: 'succeeded', event_type: 'trainee.created' });
    expect(second.attempts).toBeGreaterThan(1);
    expect(connects.every((a) => a === '127.0.0.1')).toBe(true);
    await revived.close();
  }, 120_000);
});

describe('sustained failure, redelivery and two instances', () => {
  let t: TestApp;
  let provider: TestProvider;
  const { network } = loopbackNetwork();
  beforeAll(async () => {
    t = await buildTestApp({ ...FAST, WEBHOOK_RETRY_WINDOW_MS: '800' }, { webhookNetwork: network });
    provider = await createProviderWithToken(t.database.db);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('disables a subscription whose receiver keeps failing, says so in an event, and resumes on re-enable and redelivery', async () => {
    const receiver = await startReceiver();
    const watcher = await startReceiver();
    receiver.set('fail');
    const sub = (
      await call(t, provider, 'POST', '/webhooks', { url: receiver.url, event_types: ['trainee.created'] })
    ).json().data;
    const watch = (
      await call(t, provider, 'POST', '/webhooks', { url: watcher.url, event_types: ['webhook.disabled'] })
    ).json().data;
    const trainee = await createTrainee(t, provider, 'doomed');
    await until(
      async () => (await call(t, provider, 'GET', `/webhooks/${sub.id}`)).json().data.enabled === false,
      20_000,
      'disable',
    );
    const state = (await call(t, provider, 'GET', `/webhooks/${sub.id}`)).json().data;
    expect(state.disabled_reason).toMatch(/HTTP 500/);
    const feed = (await call(t, provider, 'GET', '/events?type=webhook.disabled')).json().data;
    expect(feed.map((e: any) => e.resource.id)).toEqual([sub.id]);
    await until(() => watcher.received.length === 1, 20_000, 'disabled event delivered to the other subscription');
    expect(watcher.received[0]!.json).toMatchObject({ type: 'webhook.disabled', data: { webhook_id: sub.id } });
    const log = (await call(t, provider, 'GET', `/webhooks/${sub.id}/deliveries`)).json().data;
    expect(log[0]).toMatchObject({ status: 'failed', last_status: 500 });
    expect(log[0].attempts).toBeGreaterThanOrEqual(2);

    receiver.set('ok');
    expect((await call(t, provider, 'PATCH', `/webhooks/${sub.id}`, { enabled: true })).statusCode).toBe(200);
    await until(() => receiver.received.length === 1, 20_000, 'delivery after re-enable');
    expect(receiver.received[0]!.json.resource.id).toBe(trainee);
    // Manual redelivery sends the same event id again.
    const redo = await call(t, provider, 'POST', `/webhooks/${sub.id}/deliveries/${log[0].id}/redeliver`);
    expect(redo.statusCode).toBe(202);
    await until(() => receiver.received.length === 2, 20_000, 'redelivery');
    expect(receiver.received[1]!.id).toBe(receiver.received[0]!.id);
    await call(t, provider, 'DELETE', `/webhooks/${watch.id}`);
    await receiver.close();
    await watcher.close();
  }, 60_000);

  it('with two instances on one database, delivers every event once, in order, never two at a time', async () => {
    const second = await buildApp(t.config, { db: t.database.db, logger: false, webhookNetwork: network });
    try {
      const receiver = await startReceiver();
      const sub = (
        await call(t, provider, 'POST', '/webhooks', { url: receiver.url, event_types: ['trainee.created'] })
      ).json().data;
      const ids: string[] = [];
      for (const letter of 'abcdefghijkl') ids.push(await createTrainee(t, provider, `pair${letter}`));
      await until(() => receiver.received.length >= 12, 30_000, 'all deliveries');
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received.map((r) => r.json.resource.id)).toEqual(ids);
      expect(new Set(receiver.received.map((r) => r.id)).size).toBe(12);
      expect(receiver.maxInFlight).toBe(1);
      await call(t, provider, 'DELETE', `/webhooks/${sub.id}`);
      await receiver.close();
    } finally {
      await second.close();
    }
  }, 60_000);
});
