/**
 * The funding rules (`fund_code is not valid for this trainee`, `funding_method '…' is not allowed when …`) over HTTP,
 * from the worked examples shipped with the funding tables (seed/register/funding/examples.tsv) and from DfE's
 * request spec `spec/requests/api/v2026_1/post_trainees_with_2026_funding_rules_spec.rb`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { fundingErrors, loadFundingTables } from '../../src/register/funding.js';
import type { TestApp } from '../helpers/app.js';
import { validTrainee, type TestProvider, withRegisterApp } from './helpers.js';

let t: TestApp;
let p: TestProvider;
withRegisterApp((app, provider) => {
  t = app;
  p = provider;
});

const seedDir = new URL('../../seed/register/funding/', import.meta.url);

interface Example {
  case: string;
  academic_cycle: string;
  itt_start_date: string;
  training_route: string;
  course_subject_1: string;
  funding_method: string;
  fund_code: string;
  course_age_range: string;
  outcome: 'allowed' | 'refused';
  expected_errors: string;
  why: string;
}

function readTsv<T>(file: string): T[] {
  const [header, ...lines] = readFileSync(new URL(file, seedDir), 'utf8').trimEnd().split('\n');
  const names = header!.split('\t');
  return lines.map((line) => Object.fromEntries(line.split('\t').map((v, i) => [names[i], v])) as T);
}

const EXAMPLES = readTsv<Example>('examples.tsv');
const DEGREE = { grade: '02', subject: '100485', institution: '0117', uk_degree: '083', graduation_year: '2003' };
const UNDERGRADUATE = ['09', '11', '14', '18'];

let unique = 0;
/** A valid create payload for the example's route, subject, funding and start date (and nothing else that fails). */
function payload(
  e: Pick<
    Example,
    'itt_start_date' | 'training_route' | 'course_subject_1' | 'funding_method' | 'fund_code' | 'course_age_range'
  >,
) {
  unique += 1;
  const start = e.itt_start_date;
  const end = `${Number(start.slice(0, 4)) + 1}${start.slice(4)}`;
  return validTrainee({
    last_name: `Funding${unique}`,
    training_route: e.training_route,
    course_subject_1: e.course_subject_1,
    funding_method: e.funding_method,
    fund_code: e.fund_code,
    course_age_range: e.course_age_range,
    itt_start_date: start,
    itt_end_date: end,
    ...(UNDERGRADUATE.includes(e.training_route) ? {} : { degrees_attributes: [DEGREE] }),
  });
}

function create(version: string, data: unknown) {
  return t.app.inject({ method: 'POST', url: `/api/${version}/trainees`, headers: p.auth, payload: { data } });
}

const expectedErrors = (e: Example) => (e.expected_errors === '' ? [] : e.expected_errors.split(' || '));

describe('funding rules on POST /trainees (worked examples)', () => {
  it('has worked examples of every funding type, allowed and refused, and of the fund-code rule', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(20);
    const kinds = new Set(EXAMPLES.map((e) => `${e.funding_method}:${e.outcome}`));
    for (const kind of [
      '4:allowed',
      '4:refused',
      'D:allowed',
      'D:refused',
      'E:allowed',
      'E:refused',
      'B:allowed',
      'B:refused',
    ])
      expect(kinds).toContain(kind);
    expect(EXAMPLES.some((e) => e.expected_errors.includes('fund_code is not valid for this trainee'))).toBe(true);
  });

  it.each(EXAMPLES)(
    'example $case ($academic_cycle, route $training_route, subject $course_subject_1, funding $funding_method, fund code $fund_code): $outcome — $why',
    async (e) => {
      const response = await create('v2026.1', payload(e));
      if (e.outcome === 'allowed') {
        expect(response.json().errors).toBeUndefined();
        expect(response.statusCode).toBe(201);
        expect(response.json().data).toMatchObject({
          funding_method: e.funding_method,
          fund_code: e.fund_code,
          training_route: e.training_route,
        });
      } else {
        expect(response.statusCode).toBe(422);
        const errors = expectedErrors(e);
        expect(response.json()).toEqual({
          message: `Validation failed: ${errors.length} error${errors.length === 1 ? '' : 's'} prohibited this trainee from being saved`,
          errors,
        });
      }
    },
  );

  it('Enhanced-Errors: the same refusals keyed by attribute (example 14)', async () => {
    const e = EXAMPLES.find((x) => x.case === '14')!;
    const response = t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: { ...p.auth, 'enhanced-errors': 'true' },
      payload: { data: payload(e) },
    });
    expect((await response).json().errors).toEqual({
      funding_method: [
        "'scholarship' is not allowed when training_route is 'provider_led_postgrad' and course_subject_1 is 'psychology' in academic cycle '2026 to 2027'",
      ],
    });
  });
});

describe('funding rules on PUT /trainees/{id} (worked examples)', () => {
  /** A stored trainee on route 12 with a physics bursary in 2026/27 (allowed), to be updated. */
  async function stored() {
    const created = await create(
      'v2026.1',
      payload({
        itt_start_date: '2026-09-01',
        training_route: '12',
        course_subject_1: '100425',
        funding_method: 'D',
        fund_code: '7',
        course_age_range: '13918',
      }),
    );
    expect(created.statusCode).toBe(201);
    return created.json().data as Record<string, unknown>;
  }

  it.each(EXAMPLES)('example $case on update: $outcome', async (e) => {
    const before = await stored();
    const { last_name: _l, first_names: _f, degrees_attributes: _d, ...changes } = payload(e);
    // The stored trainee_start_date decides the cycle unless it is sent too.
    const data = { ...changes, trainee_start_date: e.itt_start_date };
    const response = await t.app.inject({
      method: 'PUT',
      url: `/api/v2026.1/trainees/${before.trainee_id}`,
      headers: p.auth,
      payload: { data },
    });
    if (e.outcome === 'allowed') {
      expect(response.json().errors).toBeUndefined();
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toMatchObject({
        funding_method: e.funding_method,
        fund_code: e.fund_code,
        training_route: e.training_route,
      });
    } else {
      expect(response.statusCode).toBe(422);
      expect(response.json().errors).toEqual(expectedErrors(e));
      const after = await t.app.inject({
        method: 'GET',
        url: `/api/v2026.1/trainees/${before.trainee_id}`,
        headers: p.auth,
      });
      expect(after.json()).toMatchObject({
        funding_method: 'D',
        fund_code: '7',
        training_route: '12',
        course_subject_1: '100425',
      });
    }
  });

  it('PATCH of funding_method alone is checked against the stored route, subject and cycle', async () => {
    const before = await stored();
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/api/v2026.1/trainees/${before.trainee_id}`,
      headers: p.auth,
      payload: { data: { funding_method: 'E' } },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([
      "funding_method 'grant' is not allowed when training_route is 'provider_led_postgrad' and course_subject_1 is 'physics' in academic cycle '2026 to 2027'",
    ]);
    const scholarship = await t.app.inject({
      method: 'PATCH',
      url: `/api/v2026.1/trainees/${before.trainee_id}`,
      headers: p.auth,
      payload: { data: { funding_method: '4' } },
    });
    expect(scholarship.statusCode).toBe(200);
    expect(scholarship.json().data.funding_method).toBe('4');
  });
});

describe('post_trainees_with_2026_funding_rules_spec.rb', () => {
  const base = { itt_start_date: '2026-09-01', course_age_range: '13918' };
  const cases: Array<[string, Record<string, string>, string[]]> = [
    [
      'request is valid (route 11, mathematics, no funding, fund code 2)',
      { training_route: '11', course_subject_1: '100403', funding_method: '6', fund_code: '2' },
      [],
    ],
    [
      'postgrad bursary (D) on provider_led_undergrad mathematics is valid',
      { training_route: '11', course_subject_1: '100403', funding_method: 'D', fund_code: '7' },
      [],
    ],
    [
      'fund code not eligible',
      { training_route: '11', course_subject_1: '100403', funding_method: 'D', fund_code: '2' },
      ["funding_method 'bursary' is not allowed when fund_code is '2' and course_subject_1 is 'mathematics'"],
    ],
    [
      'no funding for combination',
      { training_route: '12', course_subject_1: '100497', funding_method: '4', fund_code: '7' },
      [
        "funding_method 'scholarship' is not allowed when training_route is 'provider_led_postgrad' and course_subject_1 is 'psychology' in academic cycle '2026 to 2027'",
      ],
    ],
    [
      'undergrad bursary (B)',
      { training_route: '11', course_subject_1: '100403', funding_method: 'B', fund_code: '7' },
      [],
    ],
    [
      'tier one bursary (7)',
      { training_route: '11', course_subject_1: '100403', funding_method: '7', fund_code: '7' },
      [],
    ],
    [
      'tier two bursary (8)',
      { training_route: '11', course_subject_1: '100403', funding_method: '8', fund_code: '7' },
      [],
    ],
    [
      'tier three bursary (9)',
      { training_route: '11', course_subject_1: '100403', funding_method: '9', fund_code: '7' },
      [],
    ],
    [
      'veterans bursary (C)',
      { training_route: '11', course_subject_1: '100403', funding_method: 'C', fund_code: '7' },
      [],
    ],
    [
      'scholarship physics provider_led_postgrad',
      { training_route: '12', course_subject_1: '100425', funding_method: '4', fund_code: '7' },
      [],
    ],
    [
      'grant physics school_direct_salaried',
      { training_route: '03', course_subject_1: '100425', funding_method: 'E', fund_code: '7' },
      [],
    ],
  ];
  it.each(cases)('%s', async (_title, fields, errors) => {
    const response = await create('v2026.1', payload({ ...base, ...fields } as Example));
    if (errors.length === 0) expect(response.statusCode).toBe(201);
    else {
      expect(response.statusCode).toBe(422);
      expect(response.json().errors).toEqual(errors);
    }
  });
});

describe('funding rule order and inputs', () => {
  const base = {
    itt_start_date: '2026-09-01',
    training_route: '11',
    course_subject_1: '100403',
    course_age_range: '13918',
  };

  it('the rule runs before the code-list checks: an unknown fund code is both reported by the rule (raw value) and refused', async () => {
    const response = await create('v2026.1', payload({ ...base, funding_method: 'D', fund_code: '9' }));
    expect(response.json().errors).toEqual([
      "funding_method 'bursary' is not allowed when fund_code is '9' and course_subject_1 is 'mathematics'",
      "fund_code has invalid reference data value of '9'. Valid values are '2', '7'.",
    ]);
  });

  it('a blank fund code is "can\'t be blank" and blocks the funding method with an empty value', async () => {
    const response = await create('v2026.1', payload({ ...base, funding_method: 'D', fund_code: '' }));
    expect(response.json().errors).toEqual([
      "fund_code can't be blank",
      "funding_method 'bursary' is not allowed when fund_code is '' and course_subject_1 is 'mathematics'",
    ]);
  });

  it('an unknown funding method is only the code-list error; an unknown route prints its raw code', async () => {
    const unknownMethod = await create('v2026.1', payload({ ...base, funding_method: 'Z', fund_code: '7' }));
    expect(unknownMethod.json().errors).toEqual([
      expect.stringMatching(/^funding_method has invalid reference data value of 'Z'/),
    ]);
    const unknownRoute = await create(
      'v2026.1',
      payload({ ...base, training_route: '99', funding_method: 'D', fund_code: '7' }),
    );
    expect(unknownRoute.json().errors).toEqual(
      expect.arrayContaining([
        'fund_code is not valid for this trainee',
        "funding_method 'bursary' is not allowed when training_route is '99' and course_subject_1 is 'mathematics' in academic cycle '2026 to 2027'",
      ]),
    );
  });

  it('trainee_start_date chooses the cycle before itt_start_date', async () => {
    // Physics on provider_led_undergrad had a bursary in 2025/26 but not in 2026/27.
    const data: Record<string, unknown> = {
      ...payload({ ...base, course_subject_1: '100425', funding_method: 'B', fund_code: '7' }),
      itt_start_date: '2026-07-01',
      itt_end_date: '2027-07-01',
    };
    expect((await create('v2026.1', { ...data, trainee_start_date: '2025-09-01' })).statusCode).toBe(201);
    const refused = await create('v2026.1', {
      ...data,
      last_name: `${String(data.last_name)}x`,
      trainee_start_date: '2026-09-01',
      itt_start_date: '2026-09-01',
    });
    expect(refused.json().errors).toEqual([
      "funding_method 'bursary' is not allowed when training_route is 'provider_led_undergrad' and course_subject_1 is 'physics' in academic cycle '2026 to 2027'",
    ]);
  });
});

describe('funding rules in the older versions', () => {
  it('v2026.0 applies the same tables and messages (route names, not codes)', async () => {
    const e = EXAMPLES.find((x) => x.case === '23')!;
    const response = await create('v2026.0', payload(e));
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual(expectedErrors(e));
  });

  it('v2025.0 knew the fund-code exception for 2025/26 only: physics with fund code 2 in 2026/27 is refused there, allowed in v2026.1', async () => {
    const e = {
      itt_start_date: '2026-09-01',
      training_route: '12',
      course_subject_1: '100425',
      funding_method: '4',
      fund_code: '2',
      course_age_range: '13918',
    };
    const { course_subject_1, ...rest } = payload(e);
    const legacy = await create('v2025.0', { ...rest, course_subject_one: course_subject_1 });
    expect(legacy.statusCode).toBe(422);
    expect(legacy.json().errors).toEqual([
      "funding_method 'scholarship' is not allowed when fund_code is '2' and course_subject_1 is 'physics'",
    ]);
    expect((await create('v2026.1', payload(e))).statusCode).toBe(201);
    const in2025 = { ...e, itt_start_date: '2025-09-01', funding_method: 'D' };
    const { course_subject_1: s2025, ...rest2025 } = payload(in2025);
    expect((await create('v2025.0', { ...rest2025, course_subject_one: s2025 })).statusCode).toBe(201);
  });
});

describe('funding tables are data', () => {
  it('a new academic cycle is an entry in funding-rules.yml: 2027/28 funds nothing until its table is added', () => {
    const input = {
      trainingRoute: '12',
      courseSubject1: '100425',
      courseAgeRange: '13918',
      fundCode: '7',
      fundingMethod: '4',
      cycle: 2027,
      exceptionStartYears: [2025, 2026],
    };
    expect(fundingErrors(input, loadFundingTables())).toEqual([
      'fund_code is not valid for this trainee',
      "funding_method 'scholarship' is not allowed when training_route is 'provider_led_postgrad' and course_subject_1 is 'physics' in academic cycle '2027 to 2028'",
    ]);
    const dir = mkdtempSync(join(tmpdir(), 'funding-'));
    const rules = parse(readFileSync(new URL('funding-rules.yml', seedDir), 'utf8'));
    rules.cycles['2027/28'] = {
      start_year: 2027,
      funded_training_routes: [{ name: 'provider_led_postgrad', code: '12' }],
      funding_methods: [
        {
          funding_type: 'scholarship',
          training_route: 'provider_led_postgrad',
          amount: 30000,
          allocation_subjects: ['Physics'],
        },
      ],
    };
    writeFileSync(join(dir, 'funding-rules.yml'), stringify(rules));
    writeFileSync(join(dir, 'allocation-subjects.yml'), readFileSync(new URL('allocation-subjects.yml', seedDir)));
    expect(fundingErrors(input, loadFundingTables(`${dir}/`))).toEqual([]);
  });
});
