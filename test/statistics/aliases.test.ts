import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import { createProviderWithToken } from '../register/helpers.js';

/**
 * The statistics API at the prefixes the reference answers at (`v1` and `v1.0` are one version; the public
 * deployment adds `/api/`): DfE's R client eesyapi calls `/api/v1.0/...`. Same handlers, bodies, limits and CORS.
 */
const { dataSetId, publicationId } = ABSENCE_SCHOOL;
const ALIASES = ['/v1.0', '/api/v1', '/api/v1.0'];

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '1000' });
});
afterAll(async () => {
  await t?.close();
});

const QUERY_BODY = { criteria: { geographicLevels: { eq: 'NAT' } }, indicators: ['dP0Zw'], pageSize: 5 };

describe.each(ALIASES)('the statistics API at %s', (prefix) => {
  it.each([
    ['publications', '/publications?page=1&pageSize=5'],
    ['a publication', `/publications/${publicationId}`],
    ["a publication's data sets", `/publications/${publicationId}/data-sets`],
    ['a data set', `/data-sets/${dataSetId}`],
    ['versions', `/data-sets/${dataSetId}/versions`],
    ['a version', `/data-sets/${dataSetId}/versions/1.0`],
    ['changes', `/data-sets/${dataSetId}/versions/1.0/changes`],
    ['meta', `/data-sets/${dataSetId}/meta`],
    ['query (GET)', `/data-sets/${dataSetId}/query?geographicLevels.eq=NAT&indicators=dP0Zw&pageSize=5`],
    ['a missing data set (404)', '/data-sets/00000000-0000-4000-8000-000000000000'],
  ])('%s answers as at /v1', async (_name, path) => {
    const canonical = await t.app.inject({ url: `/v1${path}` });
    const alias = await t.app.inject({ url: `${prefix}${path}` });
    expect(alias.statusCode).toBe(canonical.statusCode);
    expect(alias.headers['content-type']).toBe(canonical.headers['content-type']);
    const withoutTrace = (body: string) => body.replace(/"traceId":"[^"]*"/, '');
    expect(withoutTrace(alias.body)).toBe(withoutTrace(canonical.body));
  });

  it('query (POST) and the query CSV answer as at /v1', async () => {
    const post = (base: string, accept?: string) =>
      t.app.inject({
        method: 'POST',
        url: `${base}/data-sets/${dataSetId}/query`,
        payload: QUERY_BODY,
        headers: accept ? { accept } : {},
      });
    const [canonical, alias] = [await post('/v1'), await post(prefix)];
    expect(alias.statusCode).toBe(200);
    expect(alias.body).toBe(canonical.body);
    const csv = await post(prefix, 'text/csv');
    expect(csv.headers['content-type']).toMatch(/^text\/csv/);
    expect(csv.body).toBe((await post('/v1', 'text/csv')).body);
  });

  it('the data set CSV download answers as at /v1', async () => {
    const [canonical, alias] = [
      await t.app.inject({ url: `/v1/data-sets/${dataSetId}/csv` }),
      await t.app.inject({ url: `${prefix}/data-sets/${dataSetId}/csv` }),
    ];
    expect(alias.statusCode).toBe(200);
    expect(alias.rawPayload.equals(canonical.rawPayload)).toBe(true);
  });

  it('is open to browsers (CORS) like /v1', async () => {
    const response = await t.app.inject({ url: `${prefix}/publications`, headers: { origin: 'https://example.org' } });
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers['api-supported-versions']).toBe('1.0');
  });
});

describe('versions and prefixes that are not served', () => {
  it.each(['/v2/publications', '/v2.0/publications', '/v1.1/publications'])('%s is a 404', async (url) => {
    expect((await t.app.inject({ url })).statusCode).toBe(404);
  });

  it.each(['/api/v2.0/publications', '/api/v1.1/publications'])(
    '%s is an unsupported version under /api: 404 with a token, 401 without',
    async (url) => {
      const provider = await createProviderWithToken(t.database.db);
      expect((await t.app.inject({ url, headers: provider.auth })).statusCode).toBe(404);
      expect((await t.app.inject({ url })).statusCode).toBe(401);
    },
  );

  it('the register API keeps /api/v{YYYY.N} beside /api/v1', async () => {
    expect((await t.app.inject({ url: '/api/v2026.1/trainees' })).statusCode).toBe(401);
    expect((await t.app.inject({ url: '/api/v1/publications' })).statusCode).toBe(200);
  });

  it('capitals under an alias are redirected to the lower-case path', async () => {
    const response = await t.app.inject({ url: '/API/V1.0/Publications?page=1' });
    expect(response.statusCode).toBe(308);
    expect(response.headers.location).toBe('/api/v1.0/publications?page=1');
  });
});

describe('one rate limit whichever prefix is used', () => {
  it('counts /v1 and its aliases together', async () => {
    const limited = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '3' });
    try {
      const statuses: number[] = [];
      for (const prefix of ['/v1', '/v1.0', '/api/v1', '/api/v1.0']) {
        statuses.push(
          (await limited.app.inject({ url: `${prefix}/publications`, remoteAddress: '10.7.0.1' })).statusCode,
        );
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('the OpenAPI document', () => {
  it('shows the canonical /v1 paths only and names the aliases', async () => {
    const document = (await t.app.inject({ url: '/openapi.json' })).json<{
      info: { description: string };
      paths: Record<string, unknown>;
    }>();
    const paths = Object.keys(document.paths);
    expect(paths).toContain('/v1/publications');
    expect(paths.filter((p) => p.startsWith('/v1.0') || p.startsWith('/api/v1'))).toEqual([]);
    expect(document.info.description).toContain('/api/v1.0');
  });
});
