import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import { databaseFingerprint, HOSTILE_STRINGS, fuzzRuns, fuzzPropertyTimeoutMs } from './helpers.js';

/**
 * Random query strings, path ids and headers on every /v1 endpoint never give a 5xx: the answer is a result,
 * a redirect, 304, or a documented 4xx problem body whose `status` matches the response. Nothing changes.
 */
const SEED = 20261124;

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '1000000' });
});
afterAll(async () => {
  await t?.close();
});

const ID = ABSENCE_SCHOOL.dataSetId;
const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant(ID) },
  fc.constantFrom(
    ABSENCE_SCHOOL.publicationId,
    '00000000-0000-0000-0000-000000000000',
    ID.toUpperCase(),
    'not-a-uuid',
    '..',
    '%2e%2e',
    '%00',
    'a%2Fb',
  ),
  fc.uuid(),
);
const versionArb = fc.constantFrom(
  '1.0',
  '1',
  'v1.0',
  '*',
  '1.*',
  '2.0',
  'V1.0',
  '1.0.0.0',
  '-1',
  '99999999999999999999',
  '%20',
  'x',
);
const pathArb = fc.oneof(
  fc.constant('/v1/publications'),
  idArb.map((id) => `/v1/publications/${id}`),
  idArb.map((id) => `/v1/publications/${id}/data-sets`),
  idArb.map((id) => `/v1/data-sets/${id}`),
  idArb.map((id) => `/v1/data-sets/${id}/versions`),
  fc.tuple(idArb, versionArb).map(([id, v]) => `/v1/data-sets/${id}/versions/${v}`),
  fc.tuple(idArb, versionArb).map(([id, v]) => `/v1/data-sets/${id}/versions/${v}/changes`),
  idArb.map((id) => `/v1/data-sets/${id}/meta`),
  idArb.map((id) => `/v1/data-sets/${id}/csv`),
  { weight: 6, arbitrary: idArb.map((id) => `/v1/data-sets/${id}/query`) },
);

const KEYS = [
  'dataSetVersion',
  'page',
  'pageSize',
  'search',
  'types',
  'includePatchHistory',
  'indicators',
  'sorts',
  'debug',
  'filters.eq',
  'filters.notEq',
  'filters.in',
  'filters.notIn',
  'geographicLevels.eq',
  'geographicLevels.in',
  'geographicLevels.notIn',
  'locations.eq',
  'locations.notEq',
  'locations.in',
  'locations.notIn',
  'timePeriods.eq',
  'timePeriods.in',
  'timePeriods.gt',
  'timePeriods.gte',
  'timePeriods.lt',
  'timePeriods.lte',
  'timePeriods.notIn',
  'indicators[0]',
  'indicators[1]',
  'filters.in[0]',
  'sorts[0]',
  'filters',
  'filters.in.x',
  'criteria',
  '__proto__',
  'constructor',
  '__proto__.polluted',
  'a[b][c]',
  '',
  'PAGE',
];
const VALUES = [
  '1',
  '0',
  '-1',
  '2',
  '1000',
  '10001',
  '1e3',
  '1.5',
  'abc',
  'true',
  'false',
  'TRUE',
  '',
  ' ',
  '*',
  '1.0',
  'v1.0',
  '2.0',
  'IzBzg',
  'LxWjE',
  'IzBzg,LxWjE',
  'HTzLj,,0kT5D',
  'zzzzz',
  'x'.repeat(11),
  'LA',
  'NAT',
  'la',
  'WARD',
  'LA|code|E08000019',
  'LA|id|dP0Zw',
  'SCH|urn|102579',
  'RSC|code|x',
  'LA||x',
  'LA|code|',
  'LA|code|E08000019,SCH|laEstab|3144001',
  '2021/2022|AY',
  '2020|AY',
  '2022|CY',
  '20201|CY',
  '2022/2020|AY',
  '2021|',
  '|AY',
  'timePeriod|Desc',
  'geographicLevel|Asc',
  'location|LA|Asc',
  'filter|O7CLF|Desc',
  'indicator|dP0Zw|Asc',
  'invalid|Asc',
  'timePeriod|asc',
  '|',
  'dP0Zw',
  'Filters',
  'Indicators,Locations',
  'TimePeriods,GeographicLevels',
  'Nope',
  'abs',
  'absence',
];
const valueArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...VALUES) },
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);
const paramsArb = fc.array(
  fc.tuple(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...KEYS) }, fc.string({ maxLength: 10 })), valueArb),
  { maxLength: 6 },
);
const headersArb = fc.record(
  {
    accept: fc.constantFrom('application/json', 'text/csv', '*/*', 'text/html', 'application/xml;q=0.1', '', ';;;'),
    'if-none-match': fc.constantFrom('"abc"', '*', 'W/"x"', '""', 'garbage', '"x", "y"'),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'gzip;q=0, br;q=0', 'x-unknown'),
  },
  { requiredKeys: [] },
);

function toQuery(params: Array<[string, string]>): string {
  return params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

function expectNoServerError(
  response: { statusCode: number; body: string; rawPayload: Buffer; headers: Record<string, unknown>; json(): unknown },
  label: string,
) {
  expect(response.statusCode, `${label} → ${response.body.slice(0, 300)}`).toBeLessThan(500);
  if (response.statusCode >= 400 && ((response.headers['content-type'] as string | undefined) ?? '').includes('json')) {
    // A request that accepts gzip may get its problem compressed (as any client asking so would).
    const encoding = response.headers['content-encoding'];
    const decode = { gzip: gunzipSync, br: brotliDecompressSync, deflate: inflateSync }[String(encoding)];
    const text = decode ? decode(response.rawPayload).toString('utf8') : response.body;
    const problem = JSON.parse(text) as { status?: number; title?: string };
    expect(problem.status, label).toBe(response.statusCode);
    expect(typeof problem.title, label).toBe('string');
  }
}

describe('random GET requests on /v1', () => {
  it(
    'never give a 5xx and change nothing',
    async () => {
      const before = await databaseFingerprint(t.database.db);
      await fc.assert(
        fc.asyncProperty(pathArb, paramsArb, headersArb, async (path, params, headers) => {
          const qs = toQuery(params);
          const url = qs ? `${path}?${qs}` : path;
          const response = await t.app.inject({ method: 'GET', url, headers });
          expectNoServerError(response, `GET ${url}`);
        }),
        { seed: SEED, numRuns: fuzzRuns(400) },
      );
      expect(await databaseFingerprint(t.database.db)).toEqual(before);
    },
    fuzzPropertyTimeoutMs(60000),
  );

  it(
    'mostly well-formed query criteria on the query endpoint give 200 or a 400 naming the parameter',
    async () => {
      const pools: Record<string, string[]> = {
        'filters.eq': ['IzBzg', 'HTzLj', 'zzzzz'],
        'filters.notEq': ['IzBzg', '6jrfe'],
        'filters.in': ['IzBzg,LxWjE', 'HTzLj,0kT5D,O7CLF', 'zzzzz'],
        'filters.notIn': ['IzBzg', 'dP0Zw,pTSoj'],
        'geographicLevels.eq': ['LA', 'NAT', 'WARD'],
        'geographicLevels.in': ['REG,LA', 'SCH'],
        'geographicLevels.notIn': ['LA', 'NAT,REG'],
        'locations.eq': ['LA|code|E08000019', 'NAT|id|IzBzg', 'SCH|urn|102579'],
        'locations.in': ['LA|code|E08000019,LA|id|dP0Zw', 'SCH|laEstab|3144001'],
        'locations.notIn': ['LA|oldCode|373'],
        'timePeriods.eq': ['2021/2022|AY', '2020|AY', '2022|CY'],
        'timePeriods.gt': ['2020/2021|AY'],
        'timePeriods.lte': ['2021|AY'],
        'timePeriods.in': ['2021|AY,2022/2023|AY'],
        indicators: ['dP0Zw', 'dP0Zw,IzBzg', '7zXob'],
        sorts: [
          'timePeriod|Asc',
          'geographicLevel|Desc',
          'location|LA|Asc',
          'filter|O7CLF|Desc',
          'indicator|dP0Zw|Asc',
        ],
        page: ['1', '2', '3'],
        pageSize: ['1', '10', '100', '1000'],
        debug: ['true', 'false'],
        dataSetVersion: ['1.0', '*', '1'],
      };
      const statuses = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(
          fc.uniqueArray(
            fc
              .constantFrom(...Object.keys(pools))
              .chain((key) =>
                fc.tuple(
                  fc.constant(key),
                  fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...pools[key]!) }, valueArb),
                ),
              ),
            { maxLength: 5, selector: ([key]) => key },
          ),
          async (params) => {
            const qs = toQuery(params);
            const url = `/v1/data-sets/${ID}/query${qs ? `?${qs}` : ''}`;
            const response = await t.app.inject({ method: 'GET', url });
            statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
            // An unparseable or unknown dataSetVersion is a 404.
            const allowed = params.some(([k]) => k === 'dataSetVersion') ? [200, 400, 404] : [200, 400];
            expect(allowed, `${url} → ${response.body.slice(0, 300)}`).toContain(response.statusCode);
            if (response.statusCode === 400) {
              const errors = response.json<{ errors: Array<{ path?: string }> }>().errors;
              const keys = params.map(([k]) => k.replace(/\[\d+\]$/, ''));
              for (const error of errors)
                if (error.path) expect(keys, url).toContain(error.path.replace(/\[\d+\]$/, ''));
            }
          },
        ),
        { seed: SEED + 2, numRuns: fuzzRuns(250) },
      );
      // The generator must mostly produce valid queries, or this property would test little.
      expect(statuses.get(200) ?? 0).toBeGreaterThan(100);
    },
    fuzzPropertyTimeoutMs(60000),
  );

  it('raw (badly encoded) query strings never give a 5xx', async () => {
    const raw = [
      '%',
      '%zz',
      '%00',
      '&&&',
      '===',
      'a=%E0%A4%A',
      'page=%FF',
      '?',
      '#x',
      'filters.in=%2C%2C',
      'indicators[99999999999]=x',
      'a[]=1&a[]=2',
      '%C0%AE%C0%AE/',
    ];
    await fc.assert(
      fc.asyncProperty(
        pathArb,
        fc.oneof(fc.constantFrom(...raw), fc.string({ maxLength: 30 })),
        async (path, query) => {
          const url = `${path}?${query}`;
          let response;
          try {
            response = await t.app.inject({ method: 'GET', url });
          } catch {
            return; // light-my-request refused to build the request at all (not the service's concern)
          }
          expectNoServerError(response, `GET ${url}`);
        },
      ),
      { seed: SEED + 1, numRuns: fuzzRuns(150) },
    );
  });

  it('unsupported methods on /v1 routes are 4xx', async () => {
    for (const method of ['PUT', 'DELETE', 'PATCH'] as const) {
      for (const path of ['/v1/publications', `/v1/data-sets/${ID}/query`, `/v1/data-sets/${ID}/csv`]) {
        const response = await t.app.inject({
          method,
          url: path,
          payload: '{}',
          headers: { 'content-type': 'application/json' },
        });
        expectNoServerError(response, `${method} ${path}`);
        expect(response.statusCode).toBeGreaterThanOrEqual(400);
      }
    }
  });
});
