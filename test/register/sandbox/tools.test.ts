/**
 * The sandbox tools: generate realistic trainees for the calling provider (every route family, with degrees and
 * placements, in varied states) and clear the provider's sandbox data (trainees, events, webhook deliveries; the
 * subscriptions stay); another provider's data is untouched; the calls are rate-limited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../helpers.js';

let t: TestApp;
let provider: TestProvider;
let other: TestProvider;

beforeAll(async () => {
  t = await buildTestApp(
    {
      RATE_LIMIT_REGISTER_MAX: '100000',
      RATE_LIMIT_REGISTER_SANDBOX_TOOLS_MAX: '5',
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
    },
    { webhookWorker: false },
  );
  provider = await createProviderWithToken(t.database.db);
  other = await createProviderWithToken(t.database.db);
});
afterAll(async () => t?.close());

function call(p: TestProvider, method: 'GET' | 'POST' | 'DELETE', path: string, data?: unknown) {
  return t.app.inject({
    method,
    url: `/api/v2026.1${path}`,
    headers: { ...p.auth, ...(data === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: data === undefined ? undefined : JSON.stringify({ data }),
  });
}

async function listCount(p: TestProvider): Promise<number> {
  const res = await call(p, 'GET', '/trainees?per_page=1');
  return res.statusCode === 404 ? 0 : res.json().meta.total_count;
}

const countWhere = async (table: 'events' | 'event_inbox', providerId: number) =>
  Number(
    (
      await t.database.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('provider_id', '=', providerId)
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('the sandbox tools', () => {
  it('generate 200 then clear: the list shows 200 then 0; another provider’s data is unchanged; subscriptions stay', async () => {
    const hook = await call(provider, 'POST', '/webhooks', { url: 'https://127.0.0.1:9/hook' });
    expect(hook.statusCode, hook.body).toBe(201);
    const kept = await call(other, 'POST', '/trainees', validTrainee());
    expect(kept.statusCode).toBe(201);
    const otherTrainee = await call(other, 'GET', `/trainees/${kept.json().data.trainee_id}`);

    const generated = await call(provider, 'POST', '/sandbox/trainees', { count: 200 });
    expect(generated.statusCode, generated.body).toBe(201);
    expect(generated.json().data.created).toBe(200);
    expect(await listCount(provider)).toBe(200);

    // Realistic: every route family, degrees for the postgraduate ones, two placements each, varied states.
    const page = (await call(provider, 'GET', '/trainees?per_page=200')).json().data as Array<Record<string, any>>;
    const routes = new Set(page.map((r) => r.training_route));
    expect(routes.size).toBeGreaterThanOrEqual(6);
    expect(page.every((r) => r.placements.length === 2)).toBe(true);
    expect(page.filter((r) => r.degrees.length > 0).length).toBeGreaterThan(100);
    const states = new Set(page.map((r) => r.state));
    for (const state of [
      'submitted_for_trn',
      'trn_received',
      'recommended_for_award',
      'awarded',
      'deferred',
      'withdrawn',
    ])
      expect(states).toContain(state);
    expect(page.filter((r) => r.state === 'awarded').every((r) => /^\d{7}$/.test(r.trn))).toBe(true);
    await t.database.db
      .insertInto('webhook_deliveries')
      .values({
        subscription_id: hook.json().data.webhook_id ?? hook.json().data.id,
        event_position: 1,
        event_id: '00000000-0000-4000-8000-000000000001',
        event_type: 'trainee.created',
        body: '{}',
        next_attempt_at: new Date(),
      })
      .execute();
    expect((await countWhere('events', provider.id)) + (await countWhere('event_inbox', provider.id))).toBeGreaterThan(
      200,
    );

    const cleared = await call(provider, 'DELETE', '/sandbox/data');
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().data).toMatchObject({ trainees: 200, webhook_deliveries: 1 });
    expect(cleared.json().data.events).toBeGreaterThan(200);
    expect(await listCount(provider)).toBe(0);
    expect((await countWhere('events', provider.id)) + (await countWhere('event_inbox', provider.id))).toBe(0);
    const deliveries = await t.database.db.selectFrom('webhook_deliveries').select('id').execute();
    expect(deliveries).toEqual([]);
    // The subscription stays.
    expect((await call(provider, 'GET', '/webhooks')).json().data).toHaveLength(1);

    // The other provider's trainee and events are as they were.
    expect(await listCount(other)).toBe(1);
    expect((await call(other, 'GET', `/trainees/${kept.json().data.trainee_id}`)).json()).toEqual(otherTrainee.json());
    expect((await countWhere('events', other.id)) + (await countWhere('event_inbox', other.id))).toBe(1);
  }, 120_000);

  it('refuses a count outside 1..500 with a 422, and limits each provider to RATE_LIMIT_REGISTER_SANDBOX_TOOLS_MAX calls a window', async () => {
    const fresh = await createProviderWithToken(t.database.db);
    for (const count of [0, 501, 'many', 1.5]) {
      const res = await call(fresh, 'POST', '/sandbox/trainees', { count });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toEqual({
        errors: [{ error: 'UnprocessableEntity', message: 'count must be a whole number from 1 to 500' }],
      });
    }
    expect((await call(fresh, 'DELETE', '/sandbox/data')).statusCode).toBe(200);
    const limited = await call(fresh, 'DELETE', '/sandbox/data');
    expect(limited.statusCode).toBe(429);
    expect(limited.body).toBe('Retry later\n');
    // Another provider has its own count; other register calls are not limited by it.
    expect((await call(other, 'DELETE', '/sandbox/data')).statusCode).toBe(200);
    expect((await call(fresh, 'GET', '/info')).statusCode).toBe(200);
  });

  it('are v2026.1 extensions only', async () => {
    expect(
      (await t.app.inject({ method: 'DELETE', url: '/api/v2026.0/sandbox/data', headers: other.auth })).statusCode,
    ).toBe(404);
  });
});
