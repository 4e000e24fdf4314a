import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { FastifyInstance } from 'fastify';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken, type TestProvider } from './helpers.js';
import { hashToken, revokeToken } from '../../src/register/tokens.js';

const SECRET = 'test-secret-of-the-register-0123';
let t: TestApp;
let p: TestApp;
let production: FastifyInstance;
let sandboxProvider: TestProvider;
let productionProvider: TestProvider;

beforeAll(async () => {
  // The default test app is a sandbox; a production app runs on its own database (one environment per database).
  t = await buildTestApp({
    REGISTER_ENVIRONMENT: 'sandbox',
    REGISTER_TOKEN_SECRET: SECRET,
    RATE_LIMIT_REGISTER_MAX: '100000',
  });
  p = await buildTestApp({
    REGISTER_ENVIRONMENT: 'production',
    REGISTER_TOKEN_SECRET: SECRET,
    RATE_LIMIT_REGISTER_MAX: '100000',
  });
  production = p.app;
  sandboxProvider = await createProviderWithToken(t.database.db, { environment: 'sandbox', secret: SECRET });
  productionProvider = await createProviderWithToken(p.database.db, { environment: 'production', secret: SECRET });
});
afterAll(async () => {
  await p?.close();
  await t?.close();
});

const info = (headers: Record<string, string> = {}, app?: FastifyInstance) =>
  (app ?? t.app).inject({ method: 'GET', url: '/api/v2026.1/info', headers });

describe('register authentication', () => {
  it('accepts `Bearer <token>` and the bare token', async () => {
    const bearer = await info(sandboxProvider.auth);
    expect(bearer.statusCode).toBe(200);
    expect(bearer.json()).toEqual({ status: 'ok', version: { requested: 'v2026.1', latest: 'v2026.1' } });
    expect((await info({ authorization: sandboxProvider.token })).statusCode).toBe(200);
  });

  it.each([
    ['no Authorization header', {}],
    ['an unknown token', { authorization: 'Bearer bob' }],
    ['a lower-case scheme', { authorization: `bearer ${'x'}` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
  ])('answers 401 {"error":"Unauthorized"} for %s', async (_name, headers) => {
    const response = await info(headers);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ error: 'Unauthorized' });
  });

  it('refuses `bearer <valid token>` (the scheme is case-sensitive, as the real service)', async () => {
    const response = await info({ authorization: `bearer ${sandboxProvider.token}` });
    expect(response.statusCode).toBe(401);
  });

  it('refuses a token on its expiry date, but accepts it the day before', async () => {
    const provider = await createProviderWithToken(t.database.db, { secret: SECRET });
    const today = new Date().toISOString().slice(0, 10);
    await t.database.db
      .updateTable('authentication_tokens')
      .set({ expires_at: today })
      .where('id', '=', provider.tokenId)
      .execute();
    expect((await info(provider.auth)).statusCode).toBe(401);
    const tomorrow = new Date(Date.now() + 86400000).toISOString().slice(0, 10);
    await t.database.db
      .updateTable('authentication_tokens')
      .set({ expires_at: tomorrow })
      .where('id', '=', provider.tokenId)
      .execute();
    expect((await info(provider.auth)).statusCode).toBe(200);
  });

  it('refuses a revoked token and the token of a soft-deleted provider', async () => {
    const revoked = await createProviderWithToken(t.database.db, { secret: SECRET });
    await t.database.db
      .updateTable('authentication_tokens')
      .set({ status: 'revoked', revoked_at: new Date() })
      .where('id', '=', revoked.tokenId)
      .execute();
    const revokedResponse = await info(revoked.auth);
    expect(revokedResponse.statusCode).toBe(401);
    expect(revokedResponse.json()).toEqual({ error: 'Unauthorized' });

    const discarded = await createProviderWithToken(t.database.db, { secret: SECRET });
    expect((await info(discarded.auth)).statusCode).toBe(200);
    await t.database.db
      .updateTable('providers')
      .set({ discarded_at: new Date() })
      .where('id', '=', discarded.id)
      .execute();
    // The token's lookup was cached by the request before: refused once the cache's REGISTER_TOKEN_CACHE_MS are over.
    const discardedAt = Date.now();
    while ((await info(discarded.auth)).statusCode !== 401) {
      expect(Date.now() - discardedAt).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 20));
    }
  });

  it('a token revoked through one instance is refused by another within a second (lookups are cached for at most REGISTER_TOKEN_CACHE_MS)', async () => {
    const provider = await createProviderWithToken(t.database.db, { secret: SECRET });
    const other = await buildApp(t.config, { db: t.database.db, logger: false, webhookWorker: false });
    try {
      const otherInfo = () => other.inject({ method: 'GET', url: '/api/v2026.1/info', headers: provider.auth });
      // Both instances have used (and so cached) the token.
      expect((await info(provider.auth)).statusCode).toBe(200);
      expect((await otherInfo()).statusCode).toBe(200);
      await revokeToken(t.database.db, provider.tokenId);
      const revokedAt = Date.now();
      const statuses: number[] = [];
      for (;;) {
        const status = (await otherInfo()).statusCode;
        statuses.push(status);
        if (status === 401) break;
        expect(Date.now() - revokedAt, `still ${status} after ${statuses.length} requests`).toBeLessThan(1000);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect((await info(provider.auth)).statusCode).toBe(401);
      expect(Date.now() - revokedAt).toBeLessThan(1000);
      // Once refused, refused for good (no instance brings the old lookup back).
      for (let i = 0; i < 5; i++) expect((await otherInfo()).statusCode).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('records last_used_at on a successful authentication only', async () => {
    const provider = await createProviderWithToken(t.database.db, { secret: SECRET });
    const before = await t.database.db
      .selectFrom('authentication_tokens')
      .select('last_used_at')
      .where('id', '=', provider.tokenId)
      .executeTakeFirstOrThrow();
    expect(before.last_used_at).toBeNull();
    await info(provider.auth);
    const after = await t.database.db
      .selectFrom('authentication_tokens')
      .select('last_used_at')
      .where('id', '=', provider.tokenId)
      .executeTakeFirstOrThrow();
    expect(after.last_used_at).toBeInstanceOf(Date);
  });

  it('stores only the HMAC of a token, with the environment in its prefix', async () => {
    expect(sandboxProvider.token).toMatch(/^sandbox_[0-9a-f]{64}$/);
    expect(productionProvider.token).toMatch(/^production_[0-9a-f]{64}$/);
    const row = await t.database.db
      .selectFrom('authentication_tokens')
      .selectAll()
      .where('id', '=', sandboxProvider.tokenId)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).toBe(hashToken(sandboxProvider.token, 'sandbox', SECRET));
    expect(JSON.stringify(row)).not.toContain(sandboxProvider.token);
  });

  it('a sandbox token is refused by a production app, and a production token by a sandbox app', async () => {
    expect((await info(sandboxProvider.auth, production)).statusCode).toBe(401);
    expect((await info(productionProvider.auth, production)).statusCode).toBe(200);
    expect((await info(productionProvider.auth)).statusCode).toBe(401);
    // Even a row copied into the production database as a production token does not match: the hash key differs
    // per environment.
    const row = await t.database.db
      .selectFrom('authentication_tokens')
      .selectAll()
      .where('id', '=', sandboxProvider.tokenId)
      .executeTakeFirstOrThrow();
    const provider = await p.database.db
      .selectFrom('providers')
      .select('id')
      .where('ukprn', '=', productionProvider.ukprn)
      .executeTakeFirstOrThrow();
    await p.database.db
      .insertInto('authentication_tokens')
      .values({
        provider_id: provider.id,
        name: 'copied',
        token_hash: row.token_hash,
        environment: 'production',
        expires_at: row.expires_at,
      })
      .execute();
    expect((await info(sandboxProvider.auth, production)).statusCode).toBe(401);
  });
});

describe('register rate limit', () => {
  it('answers 429 with the real text body and Retry-After once a token is over its limit', async () => {
    const limited = await buildApp(
      loadConfig({
        LOG_LEVEL: 'silent',
        DATABASE_URL: t.database.url,
        REGISTER_TOKEN_SECRET: SECRET,
        RATE_LIMIT_REGISTER_MAX: '2',
      }),
      {
        db: t.database.db,
        logger: false,
      },
    );
    try {
      for (let i = 0; i < 2; i++) expect((await info(sandboxProvider.auth, limited)).statusCode).toBe(200);
      const response = await info(sandboxProvider.auth, limited);
      expect(response.statusCode).toBe(429);
      expect(response.body).toBe('Retry later\n');
      expect(response.headers['content-type']).toMatch(/^text\/plain/);
      expect(response.headers['retry-after']).toBeDefined();
    } finally {
      await limited.close();
    }
  });
});

describe('register versions and routing', () => {
  it.each([
    ['v2025.0', 'v2025.0'],
    ['v2025.0-rc', 'v2025.0-rc'],
    ['v2026.0', 'v2026.0'],
    ['v2026.1', 'v2026.1'],
  ])('GET /api/%s/info reports the requested and the latest version', async (label, requested) => {
    const response = await t.app.inject({ method: 'GET', url: `/api/${label}/info`, headers: sandboxProvider.auth });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', version: { requested, latest: 'v2026.1' } });
  });

  it.each(['v2025.0', 'v2025.0-rc', 'v2026.0', 'v2026.1'])(
    '%s: every trainee endpoint needs a token (401 without, 401 with a bad one)',
    async (label) => {
      for (const [method, url] of [
        ['GET', '/trainees'],
        ['POST', '/trainees'],
        ['GET', '/trainees/x'],
        ['PUT', '/trainees/x'],
        ['PATCH', '/trainees/x'],
        ['GET', '/info'],
      ] as const) {
        for (const headers of [{}, { authorization: 'Bearer bob' }]) {
          const response = await t.app.inject({
            method,
            url: `/api/${label}${url}`,
            headers,
            payload: method === 'GET' ? undefined : { data: { first_names: 'X' } },
          });
          expect(response.statusCode, `${method} ${url}`).toBe(401);
          expect(response.json()).toEqual({ error: 'Unauthorized' });
        }
      }
    },
  );

  it('an unknown but well-formed version is 404 "Not found" with a token and 401 without', async () => {
    const withToken = await t.app.inject({ method: 'GET', url: '/api/v0.0/trainees', headers: sandboxProvider.auth });
    expect(withToken.statusCode).toBe(404);
    expect(withToken.json()).toEqual({ errors: [{ error: 'NotFound', message: 'Not found' }] });
    const without = await t.app.inject({ method: 'GET', url: '/api/v0.0/trainees' });
    expect(without.statusCode).toBe(401);
    expect(without.json()).toEqual({ error: 'Unauthorized' });
  });

  it('an unknown path under a served version is 404 "Not found" after authentication; an unknown method on a known path 405', async () => {
    const path = await t.app.inject({ method: 'GET', url: '/api/v2026.1/nothing-here', headers: sandboxProvider.auth });
    expect(path.statusCode).toBe(404);
    expect(path.json()).toEqual({ errors: [{ error: 'NotFound', message: 'Not found' }] });
    // The real service answers 404 here too; 405 with Allow is a deliberate difference (docs/compatibility.md).
    const method = await t.app.inject({
      method: 'DELETE',
      url: '/api/v2026.1/trainees',
      headers: sandboxProvider.auth,
    });
    expect(method.statusCode).toBe(405);
    expect(method.headers.allow).toBe('GET, HEAD, POST');
  });

  it('a malformed version segment is 404 {"error":"Resource not found"}', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/latest/trainees', headers: sandboxProvider.auth });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'Resource not found' });
  });

  it('serves one OpenAPI document per version without a token, with that version’s field names', async () => {
    const v2025 = (await t.app.inject({ method: 'GET', url: '/api/v2025.0/openapi.json' })).json();
    const v2026 = (await t.app.inject({ method: 'GET', url: '/api/v2026.1/openapi.json' })).json();
    expect(v2025.info.title).toContain('v2025.0');
    expect(v2025.components.schemas.Trainee.properties).toHaveProperty('lead_partner_urn');
    expect(v2025.components.schemas.Trainee.properties).not.toHaveProperty('training_partner_urn');
    expect(v2026.components.schemas.Trainee.properties).toHaveProperty('training_partner_urn');
    expect(v2026.components.schemas.Trainee.properties).toHaveProperty('iqts_country');
    expect(v2026.paths).toHaveProperty('/reference-data');
    expect(v2025.paths).not.toHaveProperty('/reference-data');
    const docs = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    for (const version of ['v2025.0', 'v2026.0', 'v2026.1'])
      expect(docs.body).toContain(`"url":"/api/${version}/openapi.json"`);
  });
});
