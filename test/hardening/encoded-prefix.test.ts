import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';

/**
 * The router decodes percent-escapes, so `/%761/…` is served by the statistics API and `/%61pi/…` by the register
 * API. Their rate limits, request timeout and CORS belong to those scopes, so such paths are treated exactly like
 * the plain ones (they used to be tested against the raw URL, and so were unlimited).
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '2', RATE_LIMIT_REGISTER_MAX: '2', REQUEST_TIMEOUT_MS: '2000' });
});
afterAll(async () => {
  await t?.close();
});

describe('percent-encoded API prefixes', () => {
  it('serves /%761/… as the statistics API, rate-limited with the plain path in one counter', async () => {
    const call = (url: string) => t.app.inject({ url, remoteAddress: '10.8.0.1' });
    const first = await call('/%761/publications');
    expect(first.statusCode).toBe(200);
    expect(first.headers['ratelimit-limit']).toBe('2');
    expect((await call('/v1/publications')).statusCode).toBe(200);
    const third = await call('/%76%31/publications');
    expect(third.statusCode).toBe(429);
    expect(third.headers['retry-after']).toBeDefined();
  });

  it('gives /%761/… the statistics CORS headers, preflight included', async () => {
    const get = await t.app.inject({
      url: '/%761/publications',
      remoteAddress: '10.8.0.2',
      headers: { origin: 'https://example.org' },
    });
    expect(get.headers['access-control-allow-origin']).toBe('*');
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: `/%761/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`,
      remoteAddress: '10.8.0.3',
      headers: {
        origin: 'https://example.org',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type',
      },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    expect(preflight.headers['access-control-allow-methods']).toMatch(/POST/);
  });

  it('answers /%761/… with the statistics 504 once REQUEST_TIMEOUT_MS has passed', async () => {
    const locker = await t.database.pool.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE data_sets IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      const response = await t.app.inject({
        url: `/%761/data-sets/${ABSENCE_SCHOOL.dataSetId}`,
        remoteAddress: '10.8.0.4',
      });
      expect(response.statusCode).toBe(504);
      expect(response.json()).toMatchObject({ status: 504, title: 'Gateway Timeout' });
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await locker.query('ROLLBACK');
      locker.release();
    }
  });

  it('serves /%61pi/… as the register API: rate-limited like /api/…, and without CORS', async () => {
    const call = (url: string) =>
      t.app.inject({
        url,
        remoteAddress: '10.8.0.5',
        headers: { authorization: 'Bearer not-a-token', origin: 'https://example.org' },
      });
    const first = await call('/%61pi/v2026.1/info');
    expect(first.statusCode).toBe(401);
    expect(first.headers['access-control-allow-origin']).toBeUndefined();
    expect((await call('/api/v2026.1/info')).statusCode).toBe(401);
    expect((await call('/%61%70%69/v2026.1/info')).statusCode).toBe(429);
  });
});
