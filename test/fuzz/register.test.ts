import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerFixture, SCHOOL, UK_DEGREE, type RegisterFixture } from '../register/helpers.js';
import { validTrainee } from '../register/helpers.js';
import { databaseFingerprint, HOSTILE_STRINGS, REGISTER_TABLES, fuzzRuns, fuzzPropertyTimeoutMs } from './helpers.js';

/**
 * Random register payloads (create/update trainee, placements, degrees, withdraw, defer, QTS status) on every
 * API version never give a 5xx; a refused request (4xx) leaves every register table exactly as it was.
 */
const SEED = 20261125;
const VERSIONS = ['v2025.0', 'v2026.0', 'v2026.1'] as const;
const REGISTER_SCHEMAS = ['public'];

let f: RegisterFixture;
let trainees: string[] = [];
let placementIds: string[] = [];
let degreeIds: string[] = [];

beforeAll(async () => {
  f = await registerFixture();
  // Trainees in the states the operations start from, plus one created through the API with a placement and degree.
  trainees = [
    await f.insertTrainee({ state: 'trn_received' }),
    await f.insertTrainee({ state: 'submitted_for_trn', trn: null }),
    await f.insertTrainee({ state: 'deferred' }),
    await f.insertTrainee({ state: 'withdrawn' }),
  ];
  const created = await f.call('POST', 'v2026.1', '/trainees', { data: validTrainee({ last_name: 'Fuzz' }) });
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().data.trainee_id as string;
  trainees.push(id);
  const placement = await f.call('POST', 'v2026.1', `/trainees/${id}/placements`, { data: { urn: SCHOOL.urn } });
  expect(placement.statusCode, placement.body).toBe(201);
  const degree = await f.call('POST', 'v2026.1', `/trainees/${id}/degrees`, { data: UK_DEGREE });
  expect(degree.statusCode, degree.body).toBe(201);
  placementIds = [placement.json().data.placement_id];
  degreeIds = [degree.json().data.degree_id];
});
afterAll(async () => {
  await f?.close();
});

const valid = validTrainee();
const TRAINEE_FIELDS = [
  ...Object.keys(valid),
  'middle_names',
  'trn',
  'ethnicity',
  'ethnic_background',
  'course_subject_2',
  'course_subject_3',
  'trainee_start_date',
  'lead_partner_urn',
  'employing_school_urn',
  'lead_partner_ukprn',
  'applying_for_bursary',
  'applying_for_scholarship',
  'applying_for_grant',
  'bursary_level',
  'training_initiative',
  'placements_attributes',
  'degrees_attributes',
  'provider_trainee_id',
  'application_id',
  'course_min_age',
  'course_max_age',
  'disability2',
  'disabilities',
  'state',
  'id',
  'provider_id',
];
const OTHER_FIELDS = [
  'urn',
  'name',
  'postcode',
  'address',
  'placement_id',
  'grade',
  'subject',
  'institution',
  'uk_degree',
  'non_uk_degree',
  'graduation_year',
  'country',
  'degree_id',
  'defer_date',
  'defer_reason',
  'withdraw_date',
  'withdrawal_date',
  'trigger',
  'reasons',
  'future_interest',
  'another_reason',
  'safeguarding_concern_reasons',
  'qts_standards_met_date',
  'outcome_date',
];

const scalar = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.constantFrom(
    '2025-09-01',
    '2026-02-30',
    '1899-01-01',
    '9999-12-31',
    '2025-9-1',
    '01/09/2025',
    '2025-09-01T00:00:00Z',
    '0',
    '-1',
    '',
  ),
  fc.constantFrom('yes', 'no', 'unknown', 'provider', 'trainee', 'Illness', '137404', '100425', '02', 'XF', '11', 'GB'),
  fc.integer(),
  fc.double(),
  fc.constant(2 ** 53 + 1),
  fc.boolean(),
  fc.constant(null),
);
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: scalar },
  fc.array(scalar, { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), scalar, { maxKeys: 2 }),
);
/** A `data` object: mostly a valid trainee with some fields replaced, removed or added. */
const traineeData = fc
  .tuple(
    fc.dictionary(fc.constantFrom(...TRAINEE_FIELDS, ...OTHER_FIELDS), anyValue, { maxKeys: 3 }),
    fc.subarray(Object.keys(valid), { maxLength: 2 }),
    fc.nat(4),
    fc.nat(),
  )
  .map(([changes, removed, mode, serial]) => {
    // One in five is valid as it is, under a random last name (so most are not duplicates of earlier ones).
    if (mode === 0) return { ...valid, last_name: `Valid${serial}` };
    const base: Record<string, unknown> = mode === 1 ? {} : { ...valid };
    for (const key of removed) delete base[key];
    return { ...base, ...changes };
  });
const today = new Date().toISOString().slice(0, 10);
/** Valid payloads of the nested and action endpoints, which the generator mutates. */
const VALID_OTHER: Array<Record<string, unknown>> = [
  { urn: SCHOOL.urn },
  { name: 'Fuzz school', postcode: 'BN1 1AA' },
  { ...UK_DEGREE, subject: '100105' },
  { subject: '100425', non_uk_degree: '083', graduation_year: '2015', country: 'GL', grade: '02' },
  { defer_date: today, defer_reason: 'Illness' },
  {
    withdrawal_date: today,
    withdraw_date: today,
    trigger: 'trainee',
    future_interest: 'no',
    reasons: ['trainee_workload_issues'],
  },
  { qts_standards_met_date: today },
];
const otherData = fc
  .tuple(
    fc.constantFrom(...VALID_OTHER),
    fc.dictionary(fc.constantFrom(...OTHER_FIELDS, 'data', 'first_names'), anyValue, { maxKeys: 2 }),
    fc.nat(3),
  )
  // One in four keeps the valid payload as it is.
  .map(([base, changes, keep]) => (keep === 0 ? base : { ...base, ...changes }));
const wrap = (data: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 16, arbitrary: data.map((d) => ({ data: d })) },
    data,
    anyValue,
    fc.jsonValue({ maxDepth: 3 }),
    data.map((d) => ({ data: d, extra: 1 })),
  );

const versionArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...VERSIONS) },
  fc.constantFrom('v2024.0', 'v9', 'latest'),
);
const traineeIdArb = () =>
  fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...trainees) },
    fc.constantFrom('nonexistent', '%00', '..%2F..', 'x'.repeat(300), "1'--"),
  );
const placementIdArb = () =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...placementIds) }, fc.constantFrom('nope', '0', '-1'));
const degreeIdArb = () =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...degreeIds) }, fc.constantFrom('nope', '0'));

type Operation = { method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'; path: string; body?: unknown };

const operationArb = (): fc.Arbitrary<Operation> =>
  fc.oneof(
    { arbitrary: wrap(traineeData).map((body) => ({ method: 'POST' as const, path: '/trainees', body })), weight: 4 },
    {
      arbitrary: fc
        .tuple(fc.constantFrom('PUT' as const, 'PATCH' as const), traineeIdArb(), wrap(traineeData))
        .map(([method, id, body]) => ({ method, path: `/trainees/${id}`, body })),
      weight: 3,
    },
    {
      arbitrary: fc
        .tuple(traineeIdArb(), wrap(otherData))
        .map(([id, body]) => ({ method: 'POST' as const, path: `/trainees/${id}/placements`, body })),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(fc.constantFrom('PUT' as const, 'PATCH' as const), traineeIdArb(), placementIdArb(), wrap(otherData))
        .map(([method, id, p, body]) => ({ method, path: `/trainees/${id}/placements/${p}`, body })),
      weight: 1,
    },
    {
      arbitrary: fc
        .tuple(traineeIdArb(), wrap(otherData))
        .map(([id, body]) => ({ method: 'POST' as const, path: `/trainees/${id}/degrees`, body })),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(fc.constantFrom('PUT' as const, 'PATCH' as const), traineeIdArb(), degreeIdArb(), wrap(otherData))
        .map(([method, id, d, body]) => ({ method, path: `/trainees/${id}/degrees/${d}`, body })),
      weight: 1,
    },
    {
      arbitrary: fc
        .tuple(traineeIdArb(), wrap(otherData))
        .map(([id, body]) => ({ method: 'POST' as const, path: `/trainees/${id}/withdraw`, body })),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(traineeIdArb(), wrap(otherData))
        .map(([id, body]) => ({ method: 'POST' as const, path: `/trainees/${id}/defer`, body })),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(traineeIdArb(), wrap(otherData))
        .map(([id, body]) => ({ method: 'POST' as const, path: `/trainees/${id}/update-qts-or-eyts-status`, body })),
      weight: 1,
    },
    {
      arbitrary: fc
        .array(
          fc.tuple(
            fc.constantFrom(
              'page',
              'per_page',
              'sort_by',
              'status',
              'since',
              'academic_cycle',
              'has_trn',
              'foo',
              'page[size]',
            ),
            scalar.map(String),
          ),
          { maxLength: 4 },
        )
        .map((params) => ({
          method: 'GET' as const,
          path: `/trainees?${params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`,
        })),
      weight: 1,
    },
  );

async function send(version: string, op: Operation) {
  return f.app.inject({
    method: op.method,
    url: `/api/${version}${op.path}`,
    headers: {
      authorization: `Bearer ${f.provider.token}`,
      ...(op.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    payload: op.body === undefined ? undefined : JSON.stringify(op.body),
  });
}

describe('random register payloads', () => {
  it(
    'never give a 5xx; a refused write changes no register table',
    async () => {
      const statuses = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(versionArb, operationArb(), async (version, op) => {
          const before = await databaseFingerprint(f.database.db, REGISTER_SCHEMAS, REGISTER_TABLES);
          const response = await send(version, op);
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
          const label = `${op.method} /api/${version}${op.path} ${JSON.stringify(op.body)?.slice(0, 300)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
          expect(response.statusCode, label).toBeLessThan(500);
          if (response.statusCode >= 400) {
            expect(() => response.json(), label).not.toThrow();
            expect(await databaseFingerprint(f.database.db, REGISTER_SCHEMAS, REGISTER_TABLES), label).toEqual(before);
          }
        }),
        { seed: SEED, numRuns: fuzzRuns(300) },
      );
      // Some writes must have got through, or the generator would only exercise the first validation step.
      const succeeded = [...statuses].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0);
      expect(succeeded, JSON.stringify([...statuses])).toBeGreaterThan(30);
    },
    fuzzPropertyTimeoutMs(120000),
  );
});
