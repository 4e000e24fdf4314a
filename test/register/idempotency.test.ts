import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../../src/register/idempotency.js';
import {
  createProviderWithToken,
  registerFixture,
  validTrainee,
  type RegisterFixture,
  type TestProvider,
} from './helpers.js';

let f: RegisterFixture;
/** Another instance on the same database, as behind the balancer. */
function anotherInstance(env: Record<string, string> = {}): Promise<FastifyInstance> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_REGISTER_MAX: '100000',
    LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '0',
    ...env,
    DATABASE_URL: f.database.url,
  });
  return buildApp(config, { db: f.database.db, logger: false, webhookWorker: false });
}

let other: FastifyInstance;
beforeAll(async () => {
  f = await registerFixture();
  other = await anotherInstance();
});
afterAll(async () => {
  await other?.close();
  await f?.close();
});

let keys = 0;
const newKey = () => `key-${process.pid}-${++keys}`;

function send(
  app: FastifyInstance,
  method: 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body: unknown,
  key?: string,
  provider: TestProvider = f.provider,
) {
  return app.inject({
    method,
    url: `/api/v2026.1${path}`,
    headers: {
      ...provider.auth,
      'content-type': 'application/json',
      ...(key === undefined ? {} : { 'idempotency-key': key }),
    },
    payload: JSON.stringify(body),
  });
}

const traineesNamed = async (lastName: string) =>
  f.database.db
    .selectFrom('trainees')
    .select('id')
    .where('last_name', '=', lastName)
    .where('provider_id', '=', f.provider.id)
    .execute();

describe('Idempotency-Key on register writes', () => {
  it('runs the first request once and replays its response (status, body, ETag) to a retry, marked Idempotent-Replayed', async () => {
    const key = newKey();
    const body = { data: validTrainee({ last_name: 'Replayed' }) };
    const first = await send(f.app, 'POST', '/trainees', body, key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    const retry = await send(f.app, 'POST', '/trainees', body, key);
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers.etag).toBe(first.headers.etag);
    expect(retry.headers['content-type']).toBe(first.headers['content-type']);
    expect(retry.body).toBe(first.body);
    // The structured-field form of the same key (the draft's `"…"`) is the same key; so is the other instance.
    const quoted = await send(other, 'POST', '/trainees', body, `"${key}"`);
    expect(quoted.statusCode).toBe(201);
    expect(quoted.headers['idempotent-replayed']).toBe('true');
    expect(quoted.json().data.trainee_id).toBe(first.json().data.trainee_id);
    expect(await traineesNamed('Replayed')).toHaveLength(1);
  });

  it('replays a state change and a refusal the same way, and leaves writes without a key as they were', async () => {
    const created = await send(f.app, 'POST', '/trainees', { data: validTrainee({ last_name: 'Withdrawn' }) });
    const id = created.json().data.trainee_id as string;
    const withdrawal = {
      data: {
        withdrawal_date: new Date().toISOString().slice(0, 10),
        trigger: 'provider',
        future_interest: 'no',
        reasons: ['record_added_in_error'],
      },
    };
    const key = newKey();
    const first = await send(f.app, 'POST', `/trainees/${id}/withdraw`, withdrawal, key);
    expect(first.statusCode).toBe(200);
    const audits = await f.database.db
      .selectFrom('trainee_audits')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('trainee_id', '=', id)
      .executeTakeFirstOrThrow();
    const retry = await send(f.app, 'POST', `/trainees/${id}/withdraw`, withdrawal, key);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
    // Not run again: no new audit entry (a second withdraw would have been refused as a state transition).
    const after = await f.database.db
      .selectFrom('trainee_audits')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('trainee_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(audits.n);
    // Without a key the same request runs, and is refused: the trainee is withdrawn.
    expect((await send(f.app, 'POST', `/trainees/${id}/withdraw`, withdrawal)).statusCode).toBe(422);

    // A refusal (4xx) is an answer too: replayed.
    const invalidKey = newKey();
    const invalid = await send(
      f.app,
      'POST',
      '/trainees',
      { data: validTrainee({ last_name: 'Invalid', date_of_birth: 'never' }) },
      invalidKey,
    );
    expect(invalid.statusCode).toBe(422);
    const invalidAgain = await send(
      f.app,
      'POST',
      '/trainees',
      { data: validTrainee({ last_name: 'Invalid', date_of_birth: 'never' }) },
      invalidKey,
    );
    expect(invalidAgain.statusCode).toBe(422);
    expect(invalidAgain.headers['idempotent-replayed']).toBe('true');
    expect(invalidAgain.body).toBe(invalid.body);
  });

  it('answers 422 to the same key with another body or path, and changes nothing', async () => {
    const key = newKey();
    expect(
      (await send(f.app, 'POST', '/trainees', { data: validTrainee({ last_name: 'Keyed' }) }, key)).statusCode,
    ).toBe(201);
    const otherBody = await send(f.app, 'POST', '/trainees', { data: validTrainee({ last_name: 'Different' }) }, key);
    expect(otherBody.statusCode).toBe(422);
    expect(otherBody.json()).toEqual({
      errors: [
        {
          error: 'IdempotencyKeyReused',
          message: 'This Idempotency-Key was already used with a different request; use a new key for a new request',
        },
      ],
    });
    expect(await traineesNamed('Different')).toHaveLength(0);
    const id = (await traineesNamed('Keyed'))[0]!.id;
    const otherPath = await send(
      f.app,
      'PATCH',
      `/trainees/${id}`,
      { data: validTrainee({ last_name: 'Keyed' }) },
      key,
    );
    expect(otherPath.statusCode).toBe(422);
  });

  it('answers 409 with Retry-After while the first request with the key is still running, then replays its response', async () => {
    const created = await send(f.app, 'POST', '/trainees', { data: validTrainee({ last_name: 'Locked' }) });
    const id = created.json().data.trainee_id as string;
    const key = newKey();
    const change = { data: { first_names: 'Held' } };
    // Another transaction holds the trainee's row, so the first PATCH waits inside its handler.
    const blocker = await f.database.pool.connect();
    let first: ReturnType<typeof send> = Promise.reject(new Error('the first request was not sent'));
    first.catch(() => undefined);
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM trainees WHERE id = $1 FOR UPDATE', [id]);
      first = send(f.app, 'PATCH', `/trainees/${id}`, change, key);
      // Until the first has taken the key.
      // Each retry after a pause, so that the first has taken the key (a retry before it would take the key itself).
      const retry = async () => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        return send(other, 'PATCH', `/trainees/${id}`, change, key);
      };
      let during = await retry();
      for (let i = 0; i < 50 && during.statusCode !== 409; i++) during = await retry();
      expect(during.statusCode).toBe(409);
      expect(during.headers['retry-after']).toBe('1');
      expect(during.json()).toEqual({
        errors: [
          {
            error: 'IdempotencyKeyInProgress',
            message: 'A request with this Idempotency-Key is still being processed; retry later',
          },
        ],
      });
    } finally {
      await blocker.query('COMMIT');
      blocker.release();
    }
    const done = await first;
    expect(done.statusCode).toBe(200);
    const retry = await send(other, 'PATCH', `/trainees/${id}`, change, key);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(done.body);
  });

  it("stores the answer in the write's own transaction: a write whose answer cannot be stored does not happen, so a retry runs it once", async () => {
    // An instance that dies between committing a write and storing its answer would otherwise leave the key held
    // with no answer: once its lock ran out (here 100 ms), a retry would run the write a second time.
    const instance = await anotherInstance({ IDEMPOTENCY_LOCK_MS: '100' });
    const db = f.database.db;
    try {
      const created = await send(f.app, 'POST', '/trainees', { data: validTrainee({ last_name: 'PlacedOnce' }) });
      const id = created.json().data.trainee_id as string;
      const key = `unstorable-${newKey()}`;
      await sql`CREATE FUNCTION test_refuse_answer() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.key LIKE 'unstorable-%' AND NEW.response_status IS NOT NULL THEN RAISE EXCEPTION 'answer not stored'; END IF;
          RETURN NEW;
        END $$`.execute(db);
      await sql`CREATE TRIGGER test_refuse_answer BEFORE UPDATE ON idempotency_keys
        FOR EACH ROW EXECUTE FUNCTION test_refuse_answer()`.execute(db);
      const placement = { data: { name: 'Once school', postcode: 'BN1 1AA' } };
      let first;
      try {
        first = await send(instance, 'POST', `/trainees/${id}/placements`, placement, key);
      } finally {
        await sql`DROP TRIGGER test_refuse_answer ON idempotency_keys`.execute(db);
        await sql`DROP FUNCTION test_refuse_answer()`.execute(db);
      }
      expect(first.statusCode).toBe(500);
      const placements = () =>
        db.selectFrom('trainee_placements').select('name').where('trainee_id', '=', id).execute();
      expect(await placements()).toEqual([]);

      await new Promise((resolve) => setTimeout(resolve, 150));
      const retry = await send(instance, 'POST', `/trainees/${id}/placements`, placement, key);
      expect(retry.statusCode).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      const again = await send(f.app, 'POST', `/trainees/${id}/placements`, placement, key);
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toBe(retry.body);
      expect(again.headers['content-type']).toBe(retry.headers['content-type']);
      expect(await placements()).toEqual([{ name: 'Once school' }]);
    } finally {
      await instance.close();
    }
  });

  it('forgets a key once it expires: the next request with it runs', async () => {
    const key = newKey();
    expect(
      (await send(f.app, 'POST', '/trainees', { data: validTrainee({ last_name: 'Expiring' }) }, key)).statusCode,
    ).toBe(201);
    await f.database.db
      .updateTable('idempotency_keys')
      .set({ expires_at: sql`now() - interval '1 second'` })
      .where('key', '=', key)
      .execute();
    const reused = await send(f.app, 'POST', '/trainees', { data: validTrainee({ last_name: 'AfterExpiry' }) }, key);
    expect(reused.statusCode).toBe(201);
    expect(reused.headers['idempotent-replayed']).toBeUndefined();
    expect(await traineesNamed('AfterExpiry')).toHaveLength(1);
    const row = await f.database.db
      .selectFrom('idempotency_keys')
      .select(['response_status', 'expires_at'])
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    expect(row.response_status).toBe(201);
    // Kept for IDEMPOTENCY_KEY_TTL_S (24 hours by default).
    expect(row.expires_at.getTime() - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
  });

  it('two instances racing one key: the write happens once, and every answer is its response or a 409 to retry', async () => {
    for (let round = 0; round < 5; round++) {
      const key = newKey();
      const lastName = `Raced${round}`;
      const body = { data: validTrainee({ last_name: lastName }) };
      const answers = await Promise.all([
        send(f.app, 'POST', '/trainees', body, key),
        send(other, 'POST', '/trainees', body, key),
      ]);
      const statuses = answers.map((a) => a.statusCode).sort();
      expect(
        [
          ['201', '201'],
          ['201', '409'],
        ].map(String),
      ).toContain(statuses.map(String).join(','));
      expect(await traineesNamed(lastName)).toHaveLength(1);
      const winner = answers.find((a) => a.statusCode === 201 && a.headers['idempotent-replayed'] === undefined)!;
      const retry = await send(other, 'POST', '/trainees', body, key);
      expect(retry.statusCode).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.json().data.trainee_id).toBe(winner.json().data.trainee_id);
    }
  });

  it('refuses a malformed key with 400, and more unexpired keys than a provider may hold with 429', async () => {
    for (const bad of ['', 'x'.repeat(MAX_IDEMPOTENCY_KEY_LENGTH + 1), 'with space', '""']) {
      const response = await send(f.app, 'POST', '/trainees', { data: validTrainee({ last_name: 'BadKey' }) }, bad);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0].error).toBe('InvalidIdempotencyKey');
    }
    expect(await traineesNamed('BadKey')).toHaveLength(0);

    const bounded = await anotherInstance({ IDEMPOTENCY_MAX_KEYS_PER_PROVIDER: '3' });
    try {
      const limited = await createProviderWithToken(f.database.db, { environment: f.config.REGISTER_ENVIRONMENT });
      const held = [newKey(), newKey(), newKey()];
      for (const [i, key] of held.entries()) {
        expect(
          (await send(bounded, 'POST', '/trainees', { data: validTrainee({ last_name: `Bound${i}` }) }, key, limited))
            .statusCode,
        ).toBe(201);
      }
      const beyond = await send(
        bounded,
        'POST',
        '/trainees',
        { data: validTrainee({ last_name: 'Bound3' }) },
        newKey(),
        limited,
      );
      expect(beyond.statusCode).toBe(429);
      expect(beyond.json().errors[0].error).toBe('TooManyIdempotencyKeys');
      // A key it holds is still replayed; without a key the provider still writes.
      expect(
        (await send(bounded, 'POST', '/trainees', { data: validTrainee({ last_name: 'Bound0' }) }, held[0], limited))
          .headers['idempotent-replayed'],
      ).toBe('true');
      expect(
        (await send(bounded, 'POST', '/trainees', { data: validTrainee({ last_name: 'Bound3' }) }, undefined, limited))
          .statusCode,
      ).toBe(201);
      // Once one expires, there is room for a new one.
      await f.database.db
        .updateTable('idempotency_keys')
        .set({ expires_at: sql`now() - interval '1 second'` })
        .where('key', '=', held[0]!)
        .execute();
      expect(
        (await send(bounded, 'POST', '/trainees', { data: validTrainee({ last_name: 'Bound4' }) }, newKey(), limited))
          .statusCode,
      ).toBe(201);
    } finally {
      await bounded.close();
    }
  });
});
