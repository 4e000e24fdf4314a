/**
 * The smaller gaps of the newer surfaces: embedded-IPv4 webhook URLs, a Last-Event-ID beyond the head, the CORS
 * preflight of the statistics event stream, and the retention of finished webhook deliveries.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForbiddenAddress } from '../../src/events/webhook-sender.js';
import { encodeCursor } from '../../src/events/outbox-repository.js';
import { purgeDeliveries } from '../../src/events/webhook-repository.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken, type TestProvider } from '../register/helpers.js';
import { createTrainee, registerCall, until } from './outside.js';
import { loopbackNetwork, startReceiver } from './receiver.js';

let t: TestApp;
let provider: TestProvider;

beforeAll(async () => {
  t = await buildTestApp(
    { RATE_LIMIT_REGISTER_MAX: '100000', WEBHOOK_POLL_MS: '100' },
    { webhookNetwork: loopbackNetwork().network },
  );
  provider = await createProviderWithToken(t.database.db);
});
afterAll(async () => {
  await t?.close();
});

describe('webhook URLs with an IPv4 address inside an IPv6 one', () => {
  it.each([
    ['http://[::127.0.0.1]/hook', 'IPv4-compatible loopback'],
    ['http://[::10.0.0.1]/hook', 'IPv4-compatible private'],
    ['http://[2002:7f00:1::]/hook', '6to4 of 127.0.0.1'],
    ['http://[2002:a00:1::1]/hook', '6to4 of 10.0.0.1'],
    ['http://[2002:c0a8:101::]/hook', '6to4 of 192.168.1.1'],
  ])('%s (%s) is refused with 422', async (url) => {
    const res = await registerCall(t, provider, 'POST', '/webhooks', { url });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().errors[0].message).toMatch(/private, loopback, link-local or reserved/);
  });

  it('judges a 6to4 address by the IPv4 address it carries', () => {
    expect(isForbiddenAddress('2002:7f00:1::')).toBe(true);
    expect(isForbiddenAddress('2002:a9fe:a9fe::1')).toBe(true);
    expect(isForbiddenAddress('2002:5db8:d822::1')).toBe(false);
  });
});

describe('Last-Event-ID', () => {
  it('beyond the newest event: 400 naming the header, for both APIs', async () => {
    const far = encodeCursor(10 ** 12);
    const stats = await t.app.inject({
      method: 'GET',
      url: '/v1/events',
      headers: { accept: 'text/event-stream', 'last-event-id': far },
    });
    expect(stats.statusCode).toBe(400);
    expect(stats.body).toMatch(/Last-Event-ID/);
    expect(stats.body).toMatch(/beyond the newest event/);
    const register = await t.app.inject({
      method: 'GET',
      url: '/api/v2026.1/events',
      headers: { ...provider.auth, accept: 'text/event-stream', 'last-event-id': far },
    });
    expect(register.statusCode).toBe(400);
    expect(register.body).toMatch(/beyond the newest event/);
  });

  it('is allowed by the CORS preflight of /v1/events', async () => {
    const res = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/events',
      headers: {
        origin: 'https://example.org',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'last-event-id',
      },
    });
    expect(res.statusCode).toBe(204);
    expect(String(res.headers['access-control-allow-headers']).toLowerCase()).toContain('last-event-id');
  });
});

describe('webhook delivery retention', () => {
  it('deletes finished deliveries (their bodies with them) older than the retention, keeps recent and pending ones', async () => {
    const receiver = await startReceiver();
    try {
      const t2 = await buildTestApp(
        {
          RATE_LIMIT_REGISTER_MAX: '100000',
          WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
          WEBHOOK_POLL_MS: '100',
          WEBHOOK_DELIVERY_RETENTION_DAYS: '7',
        },
        { webhookNetwork: loopbackNetwork().network },
      );
      try {
        const owner = await createProviderWithToken(t2.database.db);
        const sub = (await registerCall(t2, owner, 'POST', '/webhooks', { url: receiver.url })).json().data;
        await createTrainee(t2, owner, 'kept');
        await createTrainee(t2, owner, 'aged');
        await until(() => receiver.received.length === 2, 20_000, 'two deliveries');
        const log = async () =>
          (await registerCall(t2, owner, 'GET', `/webhooks/${sub.id}/deliveries`)).json().data as Array<{
            id: number;
            status: string;
          }>;
        const [newer, older] = await log();
        // One delivery ended 8 days ago.
        await sql`UPDATE webhook_deliveries SET last_attempt_at = now() - interval '8 days' WHERE id = ${older!.id}`.execute(
          t2.database.db,
        );
        expect(await purgeDeliveries(t2.database.db, t2.config.WEBHOOK_DELIVERY_RETENTION_DAYS)).toBe(1);
        expect((await log()).map((d) => d.id)).toEqual([newer!.id]);
        const bodies = await sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE id = ${older!.id}`.execute(t2.database.db);
        expect(bodies.rows[0]!.n).toBe(0);
      } finally {
        await t2.close();
      }
    } finally {
      await receiver.close();
    }
  }, 60_000);
});
