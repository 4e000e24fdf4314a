import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { registerFixture, type RegisterFixture } from '../register/helpers.js';
import { validTrainee } from '../register/helpers.js';
import {
  adversarialObjectArb,
  adversarialValueArb,
  encodedBodyArb,
  queryStringArb,
  sendAll,
} from './adversarial-shapes.js';
import { fuzzRuns, fuzzTimeoutMs } from './helpers.js';

/**
 * 10,000 generated requests to the register API on every version — trainee, placement, degree and action bodies of
 * every adversarial shape (deep, wide, wrong types, objects where strings are expected, JSON and Rails-style form
 * bodies, misleading encodings) and list queries — each answered without a 5xx, with a body of at most 64 KB,
 * within the time bound.
 */
const SEED = 20261123;
/** 1,000 by default (FUZZ_SCALE multiplies it: CI runs 10,000); FUZZ_REQUESTS sets it outright. */
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? fuzzRuns(1_000));
let f: RegisterFixture;
let trainees: string[] = [];

beforeAll(async () => {
  f = await registerFixture();
  // Warm: the reference data loads on first use (once per process), which is not what the time bound is about.
  await f.call('POST', 'v2026.1', '/trainees', {
    data: { ...validTrainee(), degrees_attributes: [{}], placements_attributes: [{}] },
  });
  trainees = [
    await f.insertTrainee({ state: 'trn_received' }),
    await f.insertTrainee({ state: 'deferred' }),
    await f.insertTrainee({ state: 'submitted_for_trn', trn: null }),
  ];
});
afterAll(async () => {
  await f?.close();
});

const VERSIONS = ['v2025.0', 'v2026.0', 'v2026.1'];
const KEYS = [
  ...Object.keys(validTrainee()),
  'degrees_attributes',
  'placements_attributes',
  'reasons',
  'trigger',
  'future_interest',
  'withdrawal_date',
  'withdraw_date',
  'defer_date',
  'urn',
  'name',
  'postcode',
  'subject',
  'grade',
  'country',
  'uk_degree',
  'graduation_year',
  'disability1',
  'qts_standards_met_date',
  'data',
];
const LIST_KEYS = ['page', 'per_page', 'sort_by', 'sort_order', 'status', 'since', 'academic_cycle', 'has_trn'];

/** `{"data": …}` where `data` is a valid trainee with members replaced by adversarial values, or any shape at all. */
const bodyArb = fc.oneof(
  { weight: 4, arbitrary: adversarialObjectArb(KEYS).map((changes) => ({ data: { ...validTrainee(), ...changes } })) },
  { weight: 2, arbitrary: adversarialObjectArb(KEYS).map((data) => ({ data })) },
  { weight: 1, arbitrary: adversarialValueArb(KEYS).map((data) => ({ data })) },
  { weight: 1, arbitrary: adversarialValueArb(KEYS) },
);

/** Trainee ids: the fixture's (known once it is made, so placeholders here) or unknown and hostile ones. */
const TRAINEE_IDS = ['@0', '@1', '@2', 'nonexistent', '%00', 'x'.repeat(300)];
const pathArb = fc
  .tuple(
    fc.constantFrom(...TRAINEE_IDS),
    fc.constantFrom(
      '',
      '/placements',
      '/degrees',
      '/withdraw',
      '/defer',
      '/update-qts-or-eyts-status',
      '/placements/nope',
      '/degrees/nope',
    ),
  )
  .map(([id, tail]) => `/trainees/${id}${tail}`);

const requestArb = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...VERSIONS),
        bodyArb.chain((body) => encodedBodyArb(body)),
      )
      .map(([version, body]) => ({ method: 'POST' as const, path: `/api/${version}/trainees`, body })),
  },
  {
    weight: 5,
    arbitrary: fc
      .tuple(
        fc.constantFrom(...VERSIONS),
        fc.constantFrom('POST' as const, 'PUT' as const, 'PATCH' as const),
        pathArb,
        bodyArb.chain((body) => encodedBodyArb(body)),
      )
      .map(([version, method, path, body]) => ({ method, path: `/api/${version}${path}`, body })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.constantFrom(...VERSIONS), queryStringArb(LIST_KEYS)).map(([version, query]) => ({
      method: 'GET' as const,
      path: `/api/${version}/trainees?${query}`,
      body: undefined,
    })),
  },
);

it(
  `${REQUESTS} adversarial register requests: no 5xx, refusals of at most 64 KB, each within the time bound`,
  async () => {
    const generated = fc.sample(requestArb, { seed: SEED, numRuns: REQUESTS });
    const requests: InjectOptions[] = generated.map(({ method, path, body }) => ({
      method,
      url: path.replace(/@(\d)/, (_, i: string) => trainees[Number(i)]!),
      headers: { authorization: `Bearer ${f.provider.token}`, ...(body?.headers ?? {}) },
      payload: body?.payload,
    }));
    const statuses = await sendAll(f.app, requests);
    expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(REQUESTS);
    // The generator reaches past the first refusal: refusals of several kinds, and some writes that succeed.
    expect(statuses.get(422) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
  },
  fuzzTimeoutMs(REQUESTS),
);
