import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken } from '../register/helpers.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('the capital-letter redirect', () => {
  it('lower-cases letters but keeps percent-escapes, so clients that upper-case escapes do not loop', async () => {
    const first = await t.app.inject({ url: '/v1/Publications/%2A?page=1' });
    expect(first.statusCode).toBe(308);
    expect(first.headers.location).toBe('/v1/publications/%2A?page=1');
    // Following it is not redirected again.
    const second = await t.app.inject({ url: first.headers.location as string });
    expect(second.statusCode).not.toBe(308);
  });
});

describe('X-Request-Id', () => {
  it('keeps a client id of safe characters', async () => {
    const response = await t.app.inject({ url: '/health/live', headers: { 'x-request-id': 'req-2026.11:a_b' } });
    expect(response.headers['x-request-id']).toBe('req-2026.11:a_b');
  });

  it.each([
    ['a line break', 'abc\r\nSet-Cookie: x=1'.replace(/[\r\n]/g, ' ')],
    ['markup', '<script>alert(1)</script>'],
    ['over 128 characters', 'x'.repeat(129)],
    ['spaces', 'two words'],
  ])('replaces an id with %s by one of its own', async (_name, id) => {
    const response = await t.app.inject({ url: '/health/live', headers: { 'x-request-id': id } });
    expect(response.headers['x-request-id']).not.toBe(id);
    expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('unknown methods on known paths', () => {
  it('statistics: 405 with Allow and a problem body', async () => {
    const response = await t.app.inject({ method: 'DELETE', url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query` });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toMatchObject({ status: 405, title: 'Method Not Allowed' });
    // An unknown path stays a 404.
    expect((await t.app.inject({ method: 'DELETE', url: '/v1/no-such-thing' })).statusCode).toBe(404);
  });

  it('register: 405 with Allow once authenticated (401 before), in the register error shape', async () => {
    const provider = await createProviderWithToken(t.database.db);
    expect((await t.app.inject({ method: 'PUT', url: '/api/v2026.1/trainees' })).statusCode).toBe(401);
    const response = await t.app.inject({ method: 'PUT', url: '/api/v2026.1/trainees', headers: provider.auth });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD, POST');
    expect(response.json()).toEqual({
      errors: [{ error: 'MethodNotAllowed', message: expect.stringContaining('PUT') }],
    });
    const unknown = await t.app.inject({ method: 'PUT', url: '/api/v2026.1/nothing-here', headers: provider.auth });
    expect(unknown.statusCode).toBe(404);
  });

  it('root: 405 for /health/ready with another method', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/health/ready' });
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
  });
});
