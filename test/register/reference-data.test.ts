import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  // Many requests from one token: the per-token rate limit is not under test here.
  t = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000' });
});
afterAll(async () => {
  await t?.close();
});

const KEYS = [
  'country',
  'course_age_range',
  'course_subject',
  'degree_subject',
  'degree_grade',
  'degree_type',
  'disability',
  'ethnicity',
  'fund_code',
  'funding_method',
  'institution',
  'itt_aim',
  'nationality',
  'itt_qualification_aim',
  'sex',
  'study_mode',
  'training_route',
  'training_initiative',
  'withdrawal_reasons',
];

describe('GET /reference-data', () => {
  it('without a token and without field: the 19 keys', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v2026.1/reference-data' });
    expect(response.statusCode).toBe(200);
    expect(Object.keys(response.json()).sort()).toEqual([...KEYS].sort());
    expect((await t.app.inject({ method: 'GET', url: '/api/v2026.1/reference-data?field=' })).json()).toEqual(
      response.json(),
    );
  });

  it('?field=sex: that field unwrapped, metadata without source or change_log, display-name overrides applied', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v2026.1/reference-data?field=sex' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      metadata: { name: 'sex', display_name: 'Sex', description: '' },
      entries: [
        { code: '10', display_name: 'Female', start_year: null, end_year: null },
        { code: '11', display_name: 'Male', start_year: null, end_year: null },
        { code: '12', display_name: 'Other', start_year: null, end_year: null },
        { code: '96', display_name: 'Information refused', start_year: null, end_year: null },
        { code: '99', display_name: 'Not available', start_year: null, end_year: null },
      ],
    });
  });

  it('one entry per HESA code, sorted by code, with start years (training_route 12 from 2022)', async () => {
    const body = (
      await t.app.inject({ method: 'GET', url: '/api/v2026.1/reference-data?field=training_route' })
    ).json();
    expect(body.metadata).toEqual({ name: 'training_route', display_name: 'Training route' });
    const codes = body.entries.map((e: { code: string }) => e.code);
    expect(codes).toEqual([...codes].sort());
    expect(body.entries.find((e: { code: string }) => e.code === '12')).toMatchObject({
      start_year: 2022,
      end_year: null,
    });
    const studyMode = (
      await t.app.inject({ method: 'GET', url: '/api/v2026.1/reference-data?field=study_mode' })
    ).json();
    expect(studyMode.entries.map((e: { code: string }) => e.code)).toEqual(['01', '02', '31', '63', '64']);
  });

  it('withdrawal reasons: triggers, future interest and the 9 + 11 entries', async () => {
    const body = (
      await t.app.inject({ method: 'GET', url: '/api/v2026.1/reference-data?field=withdrawal_reasons' })
    ).json();
    expect(body.metadata).toEqual({ name: 'withdrawal_reasons', display_name: 'Withdrawal reasons' });
    expect(body.triggers).toEqual(['provider', 'trainee']);
    expect(body.future_interest).toEqual(['yes', 'no', 'unknown']);
    expect(body.entries).toHaveLength(20);
    expect(body.entries[0]).toEqual({
      code: 'record_added_in_error',
      display_name: 'This training record was added in error',
      trigger: 'provider',
      requires_another_reason: false,
      requires_safeguarding_concern_reasons: false,
    });
    expect(body.entries.filter((e: { trigger: string }) => e.trigger === 'trainee')).toHaveLength(11);
    expect(
      body.entries.find((e: { code: string }) => e.code === 'safeguarding_concerns')
        .requires_safeguarding_concern_reasons,
    ).toBe(true);
    expect(
      body.entries.find((e: { code: string }) => e.code === 'had_to_withdraw_trainee_another_reason')
        .requires_another_reason,
    ).toBe(true);
  });

  it('an unknown field is 404 with the field named', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v2026.1/reference-data?field=bogus' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      errors: [{ error: 'NotFound', message: "Reference data field 'bogus' not found" }],
    });
  });

  it('versions before v2026.1 publish no reference data (404, as the real service answered)', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/api/v2025.0/reference-data' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({
      errors: [{ error: 'NotFound', message: "Reference data is not available for version 'v2025.0'" }],
    });
  });
});
