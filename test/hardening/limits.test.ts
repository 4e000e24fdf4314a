import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonDepthExceeds } from '../../src/plugins/api-scope.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createToken } from '../../src/register/tokens.js';
import { createProviderWithToken } from '../register/helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '3', RATE_LIMIT_REGISTER_MAX: '2', BODY_LIMIT_BYTES: '65536' });
});
afterAll(async () => {
  await t?.close();
});

describe('rate limits', () => {
  it('answers 429 with Retry-After and RateLimit-* headers once a client passes the statistics limit', async () => {
    const statuses: number[] = [];
    let last: Awaited<ReturnType<typeof t.app.inject>> | undefined;
    for (let i = 0; i < 4; i++) {
      last = await t.app.inject({ method: 'GET', url: '/v1/publications', remoteAddress: '10.9.9.1' });
      statuses.push(last.statusCode);
    }
    expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
    expect(statuses[3]).toBe(429);
    expect(last!.headers['retry-after']).toBeDefined();
    expect(last!.headers['ratelimit-limit']).toBe('3');
    expect(last!.headers['ratelimit-remaining']).toBe('0');
    expect(last!.json()).toMatchObject({ status: 429, title: 'Too Many Requests' });
    // Another client is not affected.
    const other = await t.app.inject({ method: 'GET', url: '/v1/publications', remoteAddress: '10.9.9.2' });
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('2');
  });

  it('counts register calls per provider: its tokens share one counter, another provider on the same address has its own', async () => {
    const a = await createProviderWithToken(t.database.db);
    const aSecond = await createToken(t.database.db, { providerUkprn: a.ukprn, environment: 'sandbox' });
    const b = await createProviderWithToken(t.database.db);
    const call = (token: string) =>
      t.app.inject({
        method: 'GET',
        url: '/api/v2026.1/info',
        remoteAddress: '10.9.9.3',
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await call(a.token)).statusCode).toBe(200);
    expect((await call(aSecond.token)).statusCode).toBe(200);
    const third = await call(a.token);
    expect(third.statusCode).toBe(429);
    expect(third.headers['retry-after']).toBeDefined();
    expect((await call(b.token)).statusCode).toBe(200);
  });

  it('counts requests without a valid token per address: made-up tokens cannot each get a fresh counter', async () => {
    const call = (token: string, remoteAddress = '10.9.9.6') =>
      t.app.inject({
        method: 'GET',
        url: '/api/v2026.1/info',
        remoteAddress,
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await call('made-up-1')).statusCode).toBe(401);
    expect((await call('made-up-2')).statusCode).toBe(401);
    const third = await call('made-up-3');
    expect(third.statusCode).toBe(429);
    expect(third.body).toMatch(/Retry later/);
    // A real provider calling from that address is counted on its own.
    const provider = await createProviderWithToken(t.database.db);
    expect((await call(provider.token)).statusCode).toBe(200);
    // Unknown paths under a version count too (they authenticate before answering 404).
    const unknown = await t.app.inject({ method: 'GET', url: '/api/v2026.1/nothing-here', remoteAddress: '10.9.9.6' });
    expect(unknown.statusCode).toBe(429);
  });

  it('does not limit health checks', async () => {
    for (let i = 0; i < 6; i++) {
      expect((await t.app.inject({ method: 'GET', url: '/health/live', remoteAddress: '10.9.9.4' })).statusCode).toBe(
        200,
      );
    }
  });
});

describe('request bodies', () => {
  it('refuses a body over the size limit with 413', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: { 'content-type': 'application/json', ...(await createProviderWithToken(t.database.db)).auth },
      payload: JSON.stringify({ data: { first_names: 'x'.repeat(70000) } }),
      remoteAddress: '10.9.9.5',
    });
    expect(res.statusCode).toBe(413);
    expect(res.body).toMatch(/large|limit/i);
  });

  it('refuses deeply nested JSON with a 400 naming the body', async () => {
    const deep = '{"criteria":' + '{"not":'.repeat(200) + '{}' + '}'.repeat(200) + '}';
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/data-sets/7d4e2f60-1b3c-4a8e-9f25-6c0a3b9d8e71/query',
      headers: { 'content-type': 'application/json' },
      payload: deep,
      remoteAddress: '10.9.9.6',
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toMatch(/nested deeper than 100 levels/);
  });

  it('measures depth outside strings only', () => {
    expect(jsonDepthExceeds('{"a":"[[[[[[["}', 2)).toBe(false);
    expect(jsonDepthExceeds('[[[1]]]', 2)).toBe(true);
    expect(jsonDepthExceeds('{"a":"\\"[[["}', 1)).toBe(false);
  });
});

describe('security headers and CORS', () => {
  it('sends helmet headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health/live' });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['strict-transport-security']).toBeDefined();
  });

  it('lets browsers call the statistics API from any origin', async () => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/publications',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
      remoteAddress: '10.9.9.7',
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(String(preflight.headers['access-control-allow-methods'])).toMatch(/GET/);
  });

  it('gives browsers no CORS access to the register API', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v2026.1/reference-data',
      headers: { origin: 'https://example.org' },
      remoteAddress: '10.9.9.8',
    });
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('compression', () => {
  it('gzips JSON when the client accepts it', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { 'accept-encoding': 'gzip' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
  });
});

describe('metrics', () => {
  it('exposes request counts, latency and pool usage in Prometheus format', async () => {
    await t.app.inject({ method: 'GET', url: '/health/live' });
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/http_requests_total\{method="GET",route="\/health\/live",status="200"\} \d+/);
    expect(res.body).toMatch(
      /http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/health\/live",status="200"\}/,
    );
    expect(res.body).toMatch(/db_pool_connections\{pool="primary",state="total"\} \d+/);
    expect(res.body).toMatch(/statistics_import_rows_loaded 0/);
  });
});
