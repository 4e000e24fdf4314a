/**
 * The sandbox lives a trainee's year by itself: a created trainee gets its TRN, a recommended one its award, with no
 * operator action, through the same events and webhooks as the operator's commands; the documented test scenarios
 * (provider_trainee_id `test-no-trn`, `test-late-trn`, `test-no-award`) hold back or delay a step; a live instance
 * does none of it; due steps survive a restart and are taken once by two instances.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { buildTestApp, waitUntilReady, type TestApp } from '../../helpers/app.js';
import { loopbackNetwork, startReceiver } from '../../events/receiver.js';
import { createProviderWithToken, SCHOOL, today, validTrainee, type TestProvider } from '../helpers.js';

const SANDBOX = {
  RATE_LIMIT_REGISTER_MAX: '100000',
  REGISTER_SANDBOX_TRN_DELAY_MS: '0',
  REGISTER_SANDBOX_AWARD_DELAY_MS: '0',
  REGISTER_SANDBOX_LATE_DELAY_MS: '1500',
  REGISTER_SANDBOX_POLL_MS: '100',
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
  WEBHOOK_POLL_MS: '100',
  EVENTS_POLL_MS: '100',
};

async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function call(t: TestApp, p: TestProvider, method: 'GET' | 'POST', path: string, data?: unknown) {
  return t.app.inject({
    method,
    url: `/api/v2026.1${path}`,
    headers: { ...p.auth, ...(data === undefined ? {} : { 'content-type': 'application/json' }) },
    payload: data === undefined ? undefined : JSON.stringify({ data }),
  });
}

/** An undergraduate trainee with the two placements a recommendation needs. */
function trainee(name: string, providerTraineeId?: string) {
  return validTrainee({
    first_names: name,
    email: `${name.toLowerCase()}@example.com`,
    provider_trainee_id: providerTraineeId,
    placements_attributes: [{ urn: SCHOOL.urn }, { name: 'Oak Lane Primary School', postcode: 'GU1 1AB' }],
  });
}

async function create(t: TestApp, p: TestProvider, name: string, providerTraineeId?: string): Promise<string> {
  const res = await call(t, p, 'POST', '/trainees', trainee(name, providerTraineeId));
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.trainee_id;
}

const stateOf = async (t: TestApp, p: TestProvider, id: string) =>
  (await call(t, p, 'GET', `/trainees/${id}`)).json<{ state: string; trn: string | null; awarded_at: string | null }>();

describe('the sandbox simulates the teacher record service', () => {
  let t: TestApp;
  let provider: TestProvider;
  const { network } = loopbackNetwork();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await buildTestApp(SANDBOX, { webhookNetwork: network });
    await t.database.db.insertInto('schools').values(SCHOOL).execute();
    provider = await createProviderWithToken(t.database.db);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('walks a trainee from create to awarded with no operator action: events in order on the feed and the webhook', async () => {
    const hook = await call(t, provider, 'POST', '/webhooks', {
      url: receiver.url,
      event_types: ['trainee.created', 'trainee.state_changed'],
    });
    expect(hook.statusCode, hook.body).toBe(201);
    const id = await create(t, provider, 'Ada');
    const withTrn = await until(
      () => stateOf(t, provider, id),
      (b) => b.state === 'trn_received',
      15_000,
      'the TRN',
    );
    expect(withTrn.trn).toMatch(/^\d{7}$/);

    const recommended = await call(t, provider, 'POST', `/trainees/${id}/update-qts-or-eyts-status`, {
      qts_standards_met_date: today(),
    });
    expect(recommended.statusCode, recommended.body).toBe(202);
    const awarded = await until(
      () => stateOf(t, provider, id),
      (b) => b.state === 'awarded',
      15_000,
      'the award',
    );
    expect(awarded.awarded_at).not.toBeNull();

    const expected = [
      ['trainee.created', undefined],
      ['trainee.state_changed', 'trn_received'],
      ['trainee.state_changed', 'recommendation'],
      ['trainee.state_changed', 'award'],
    ];
    const feed = await until(
      async () =>
        (await call(t, provider, 'GET', '/events')).json().data as Array<{
          type: string;
          resource: { id: string };
          data: { reason?: string; to?: string };
        }>,
      (events) => events.filter((e) => e.resource.id === id).length >= 4,
      15_000,
      'the feed',
    );
    const mine = feed.filter((e) => e.resource.id === id);
    expect(mine.map((e) => [e.type, e.data.reason])).toEqual(expected);
    expect(mine.map((e) => e.data.to)).toEqual([undefined, 'trn_received', 'recommended_for_award', 'awarded']);

    await until(
      async () => receiver.received.filter((r) => r.json.resource.id === id).length,
      (n) => n >= 4,
      15_000,
      'the webhook deliveries',
    );
    const delivered = receiver.received.filter((r) => r.json.resource.id === id);
    expect(delivered.map((r) => [r.json.type, r.json.data.reason])).toEqual(expected);
  });

  it('test-no-trn: the TRN never comes; test-late-trn: it comes after the late delay; test-no-award: never awarded', async () => {
    const never = await create(t, provider, 'Never', 'test-no-trn-1');
    const started = Date.now();
    const late = await create(t, provider, 'Late', 'TEST-LATE-TRN-2');
    const usual = await create(t, provider, 'Usual', 'ordinary-3');
    await until(
      () => stateOf(t, provider, usual),
      (b) => b.state === 'trn_received',
      15_000,
      'the usual TRN',
    );
    // The late one is still waiting while the usual one has its TRN...
    if (Date.now() - started < 1000) expect((await stateOf(t, provider, late)).state).toBe('submitted_for_trn');
    // ...and gets it after REGISTER_SANDBOX_LATE_DELAY_MS.
    await until(
      () => stateOf(t, provider, late),
      (b) => b.state === 'trn_received',
      15_000,
      'the late TRN',
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
    await new Promise((r) => setTimeout(r, 500));
    expect(await stateOf(t, provider, never)).toMatchObject({ state: 'submitted_for_trn', trn: null });

    const noAward = await create(t, provider, 'Noaward', 'test-no-award');
    await until(
      () => stateOf(t, provider, noAward),
      (b) => b.state === 'trn_received',
      15_000,
      'its TRN',
    );
    const recommended = await call(t, provider, 'POST', `/trainees/${noAward}/update-qts-or-eyts-status`, {
      qts_standards_met_date: today(),
    });
    expect(recommended.statusCode, recommended.body).toBe(202);
    await new Promise((r) => setTimeout(r, 2000));
    expect((await stateOf(t, provider, noAward)).state).toBe('recommended_for_award');
    const { due } = await t.database.db
      .selectFrom('trainees')
      .select((eb) => eb.fn.countAll<string>().as('due'))
      .where('sandbox_due_at', 'is not', null)
      .where('id', 'in', [never, noAward])
      .executeTakeFirstOrThrow();
    expect(Number(due)).toBe(0);
  });

  it('a due step survives a restart and two instances take each trainee once', async () => {
    // Due in the past while no simulator ran (as after a restart): a second and a third instance on the database.
    const ids = [];
    for (let i = 0; i < 6; i++) ids.push(await create(t, provider, `Restart${'abcdef'[i]}`));
    const config = loadConfig({ LOG_LEVEL: 'silent', ...SANDBOX, DATABASE_URL: t.database.url });
    const others = await Promise.all(
      [0, 1].map(() => buildApp(config, { db: t.database.db, logger: false, webhookWorker: false })),
    );
    await Promise.all(others.map((app) => waitUntilReady(app)));
    try {
      for (const id of ids)
        await until(
          () => stateOf(t, provider, id),
          (b) => b.state === 'trn_received',
          15_000,
          'the TRN',
        );
    } finally {
      await Promise.all(others.map((app) => app.close()));
    }
    const audits = await t.database.db
      .selectFrom('trainee_audits')
      .select(['trainee_id'])
      .where('action', '=', 'receive_trn')
      .where('trainee_id', 'in', ids)
      .execute();
    expect(audits.length).toBe(ids.length);
  });
});

describe('a live instance', () => {
  let t: TestApp;
  const secret = 'a-production-secret-0123456789';
  beforeAll(async () => {
    t = await buildTestApp({
      ...SANDBOX,
      REGISTER_ENVIRONMENT: 'production',
      REGISTER_TOKEN_SECRET: secret,
      WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'false',
    });
    await t.database.db.insertInto('schools').values(SCHOOL).execute();
  });
  afterAll(async () => t?.close());

  it('changes nothing by itself: no TRN, no due time, and the sandbox tools answer 404', async () => {
    const provider = await createProviderWithToken(t.database.db, { environment: 'production', secret });
    const id = await create(t, provider, 'Live');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await stateOf(t, provider, id)).toMatchObject({ state: 'submitted_for_trn', trn: null });
    const row = await t.database.db
      .selectFrom('trainees')
      .select(['sandbox_due_at', 'lock_version'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ sandbox_due_at: null, lock_version: 0 });
    const types = ((await call(t, provider, 'GET', '/events')).json().data as Array<{ type: string }>).map(
      (e) => e.type,
    );
    expect(types).toEqual(['trainee.created']);
    for (const [method, url] of [
      ['POST', '/sandbox/trainees'],
      ['DELETE', '/sandbox/data'],
    ] as const) {
      const res = await t.app.inject({
        method,
        url: `/api/v2026.1${url}`,
        headers: { ...provider.auth, 'content-type': 'application/json' },
        payload: '{"data":{"count":5}}',
      });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ errors: [{ error: 'NotFound', message: 'Not found' }] });
    }
    expect(await t.database.db.selectFrom('trainees').select('id').execute()).toHaveLength(1);
  });
});
