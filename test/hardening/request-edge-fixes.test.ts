import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFixture, type RegisterFixture } from '../register/helpers.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';

/**
 * The smaller findings of the fault probe: two requests that were 500s, `Accept` q-values, a version with white space
 * around it, and the docs page's redirect loop.
 */
let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => {
  await f?.close();
});

const QUERY = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;
const today = () => new Date().toISOString().slice(0, 10);

describe('withdraw with `reasons` that is not a list of strings', () => {
  const base = { withdrawal_date: today(), trigger: 'provider', future_interest: 'no' };
  const NO_REASONS = 'reasons Choose one or more reasons why the trainee withdrew from the course';

  it.each(['v2025.0', 'v2026.0', 'v2026.1'])(
    '%s: `{"reasons":{"toString":1}}` is 422 "Choose one or more reasons", not 500',
    async (version) => {
      const id = await f.insertTrainee({ state: 'trn_received' });
      const data = version === 'v2025.0' ? { ...base, withdraw_date: today(), withdrawal_date: undefined } : base;
      const response = await f.call('POST', version, `/trainees/${id}/withdraw`, {
        data: { ...data, reasons: { toString: 1 } },
      });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toEqual({ errors: [{ error: 'UnprocessableEntity', message: NO_REASONS }] });
      const stored = await f.database.db
        .selectFrom('trainees')
        .select('state')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      expect(stored.state).toBe('trn_received');
    },
  );

  it('a list holding an object is dropped like the hash', async () => {
    const id = await f.insertTrainee({ state: 'trn_received' });
    const response = await f.call('POST', 'v2026.1', `/trainees/${id}/withdraw`, {
      data: { ...base, reasons: [{ toString: 1 }] },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[0].message).toBe(NO_REASONS);
  });

  it.each(['v2025.0', 'v2026.1'])('%s: the form body `data[reasons][a]=1` is 422, not 500', async (version) => {
    const id = await f.insertTrainee({ state: 'trn_received' });
    const dateField = version === 'v2025.0' ? 'withdraw_date' : 'withdrawal_date';
    const response = await f.app.inject({
      method: 'POST',
      url: `/api/${version}/trainees/${id}/withdraw`,
      headers: { authorization: `Bearer ${f.provider.token}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `data[${dateField}]=${today()}&data[trigger]=provider&data[future_interest]=no&data[reasons][a]=1`,
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors[0].message).toBe(NO_REASONS);
  });
});

describe('a statistics POST query whose body is not what its Content-Encoding says', () => {
  it('`Content-Encoding: gzip` with a plain body: 400 ValidationProblem, not 500', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: QUERY,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: '{"page":1}',
    });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.json()).toEqual({
      type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
      title: 'One or more validation errors occurred.',
      status: 400,
      errors: [{ code: 'InvalidValue', message: expect.any(String) }],
      traceId: expect.any(String),
    });
  });

  it('a real gzip body is read', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: QUERY,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync('{"pageSize":1}'),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().paging.pageSize).toBe(1);
  });
});

describe('Accept q-values on the query', () => {
  it.each([
    ['text/csv;q=0.1, application/json;q=0.2', 'application/json'],
    ['application/json;q=0.2, text/csv;q=0.9', 'text/csv'],
    ['text/csv', 'text/csv'],
    ['text/csv, application/json', 'text/csv'],
    ['application/json, text/csv', 'application/json'],
    ['*/*', 'application/json'],
    ['text/*', 'text/csv'],
  ])('`%s` gives %s', async (accept, expected) => {
    const response = await f.app.inject({ url: `${QUERY}?pageSize=1`, headers: { accept } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain(expected);
  });
});

describe('dataSetVersion with white space around it', () => {
  it.each([' 1.0', '1.0\n', '\n1.0\n', '1.0 '])(
    '%j is refused as not a version (404), in GET and POST queries and meta',
    async (version) => {
      const encoded = encodeURIComponent(version);
      const get = await f.app.inject({ url: `${QUERY}?dataSetVersion=${encoded}` });
      expect(get.statusCode).toBe(404);
      const post = await f.app.inject({
        method: 'POST',
        url: `${QUERY}?dataSetVersion=${encoded}`,
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(post.statusCode).toBe(404);
      const meta = await f.app.inject({
        url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/meta?dataSetVersion=${encoded}`,
      });
      expect(meta.statusCode).toBe(404);
    },
  );

  it('the version itself, and a blank one (the latest), still answer', async () => {
    expect((await f.app.inject({ url: `${QUERY}?dataSetVersion=1.0&pageSize=1` })).statusCode).toBe(200);
    expect((await f.app.inject({ url: `${QUERY}?dataSetVersion=&pageSize=1` })).statusCode).toBe(200);
  });
});

describe('the docs page', () => {
  it('`/docs/static/index.html?x` redirects to the page with its query, not to itself', async () => {
    const response = await f.app.inject({ url: '/docs/static/index.html?x' });
    expect(response.statusCode).toBe(302);
    expect(response.headers.location).toBe('/docs/?x');
    const page = await f.app.inject({ url: response.headers.location as string });
    expect(page.statusCode).toBe(200);
    const plain = await f.app.inject({ url: '/docs/static/index.html' });
    expect(plain.headers.location).toBe('/docs/');
  });
});
