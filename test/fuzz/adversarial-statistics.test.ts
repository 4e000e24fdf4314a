import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import {
  adversarialObjectArb,
  adversarialValueArb,
  encodedBodyArb,
  queryStringArb,
  sendAll,
} from './adversarial-shapes.js';
import { fuzzRuns, fuzzTimeoutMs } from './helpers.js';

/**
 * 10,000 generated requests to the statistics API — POST query bodies of every adversarial shape (deep, wide, wrong
 * types, objects for strings, misleading encodings), GET queries and catalogue reads with hostile query strings —
 * each answered without a 5xx, with a body of at most 64 KB, within the time bound.
 */
const SEED = 20261122;
/** 1,000 by default (FUZZ_SCALE multiplies it: CI runs 10,000); FUZZ_REQUESTS sets it outright. */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? fuzzRuns(1_000));
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '1000000' });
  // Warm: schemas compile and the query engine loads on first use, which is not what the time bound is about.
  await t.app.inject({
    method: 'POST',
    url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`,
    payload: { pageSize: 1 },
  });
});
afterAll(async () => {
  await t?.close();
});

const ID = ABSENCE_SCHOOL.dataSetId;
const BODY_KEYS = [
  'criteria',
  'indicators',
  'sorts',
  'debug',
  'page',
  'pageSize',
  'and',
  'or',
  'not',
  'filters',
  'geographicLevels',
  'locations',
  'timePeriods',
  'eq',
  'notEq',
  'in',
  'notIn',
  'gt',
  'lt',
  'field',
  'direction',
  'level',
  'id',
  'code',
  'period',
  'Criteria',
];
const GET_KEYS = [
  'filters.eq',
  'filters.in',
  'geographicLevels.in',
  'locations.in',
  'locations.eq',
  'timePeriods.in',
  'timePeriods.gte',
  'indicators',
  'sorts',
  'page',
  'pageSize',
  'debug',
  'dataSetVersion',
  'types',
  'publicationId',
  'search',
  'sort',
];
const dataSetIdArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant(ID) },
  fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-000000000000', '%00', 'x'.repeat(400)),
);

/** A body that is mostly a query's shape, with any member replaced by an adversarial value. */
const queryBodyArb = fc.oneof(
  { weight: 3, arbitrary: adversarialObjectArb(BODY_KEYS) },
  { weight: 1, arbitrary: adversarialValueArb(BODY_KEYS) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        adversarialValueArb(BODY_KEYS),
        fc.constantFrom(
          'criteria.filters.in',
          'criteria.and',
          'criteria.locations.eq',
          'sorts',
          'indicators',
          'criteria.timePeriods.in',
          'criteria.not',
        ),
      )
      .map(([value, where]) => {
        const body: Record<string, unknown> = { pageSize: 5 };
        const path = where.split('.');
        let node = body;
        for (const key of path.slice(0, -1)) node = node[key] = {};
        node[path.at(-1)!] = value;
        return body;
      }),
  },
);

const requestArb: fc.Arbitrary<InjectOptions> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        dataSetIdArb,
        queryBodyArb.chain((body) => encodedBodyArb(body)),
        fc.constantFrom('', '?dataSetVersion=1.0', '?dataSetVersion=%201.0', '?x=1'),
        fc.constantFrom(undefined, 'text/csv', 'text/csv;q=0.1, application/json;q=0.2', '*/*'),
      )
      .map(([id, body, query, accept]) => ({
        method: 'POST' as const,
        url: `/v1/data-sets/${id}/query${query}`,
        headers: { ...body.headers, ...(accept ? { accept } : {}) },
        payload: body.payload,
      })),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(dataSetIdArb, queryStringArb(GET_KEYS))
      .map(([id, query]) => ({ method: 'GET' as const, url: `/v1/data-sets/${id}/query?${query}` })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          '/v1/publications',
          `/v1/data-sets/${ID}/meta`,
          `/v1/data-sets/${ID}/versions`,
          `/v1/data-sets/${ID}`,
          `/api/v1.0/data-sets/${ID}/query`,
        ),
        queryStringArb(GET_KEYS),
      )
      .map(([path, query]) => ({ method: 'GET' as const, url: `${path}?${query}` })),
  },
);

it(
  `${REQUESTS} adversarial statistics requests: no 5xx, refusals of at most 64 KB, each within the time bound`,
  async () => {
    const requests = fc.sample(requestArb, { seed: SEED, numRuns: REQUESTS });
    const statuses = await sendAll(t.app, requests);
    const total = [...statuses.values()].reduce((a, b) => a + b, 0);
    expect(total).toBe(REQUESTS);
    // The generator reaches past the first refusal: valid queries (200) and refusals of several kinds.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(REQUESTS / 4);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
  },
  fuzzTimeoutMs(REQUESTS),
);
