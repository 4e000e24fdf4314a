/**
 * `PUT`/`PATCH /trainees/{id}` as DfE's request spec `spec/requests/api/v2026_1/put_trainee_spec.rb` describes it:
 * null members, ignored members, and which validation error wins.
 */
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../../helpers/app.js';
import { validTrainee, type TestProvider, withRegisterApp } from '../helpers.js';

let t: TestApp;
let p: TestProvider;
withRegisterApp((app, provider) => {
  t = app;
  p = provider;
});

const DEGREE = { grade: '02', subject: '100485', institution: '0117', uk_degree: '083', graduation_year: '2003' };
let unique = 0;

/** A stored provider-led postgraduate trainee with two subjects and an ethnicity. */
async function trainee(): Promise<{ id: string; body: Record<string, unknown>; etag: string }> {
  unique += 1;
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v2026.1/trainees',
    headers: p.auth,
    payload: {
      data: validTrainee({
        last_name: `Put${unique}`,
        training_route: '12',
        course_subject_1: '100425',
        course_subject_2: '100403',
        course_subject_3: '100346',
        ethnicity: '142',
        fund_code: '7',
        funding_method: '6',
        degrees_attributes: [DEGREE],
      }),
    },
  });
  expect(response.statusCode).toBe(201);
  const body = response.json().data;
  return { id: body.trainee_id, body, etag: response.headers.etag as string };
}

function put(id: string, data: unknown, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'PUT',
    url: `/api/v2026.1/trainees/${id}`,
    headers: { ...p.auth, ...headers },
    payload: { data },
  });
}
function get(id: string) {
  return t.app.inject({ method: 'GET', url: `/api/v2026.1/trainees/${id}`, headers: p.auth });
}

describe('put_trainee_spec.rb: null and ignored members', () => {
  it('when read only attributes are submitted / when the ethnicity is not provided: 200, the trainee unchanged', async () => {
    const before = await trainee();
    const response = await put(before.id, {
      trn: '567899',
      ethnic_group: 'mixed_ethnic_group',
      ethnic_background: 'Another Mixed background',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toEqual(before.body);
    expect(response.json().data.trn).toBeNull();
    const after = await get(before.id);
    expect(after.json()).toEqual(before.body);
    // Nothing was written: the ETag (lock version) is the same.
    expect(after.headers.etag).toBe(before.etag);
  });

  it('when read only attributes are submitted / when the ethnicity is provided: ethnicity decides the group and background', async () => {
    const before = await trainee();
    const response = await put(before.id, {
      trn: '567899',
      ethnicity: '899',
      ethnic_group: 'mixed_ethnic_group',
      ethnic_background: 'Another Mixed background',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({
      trn: null,
      ethnicity: '899',
      ethnic_group: 'other_ethnic_group',
      ethnic_background: 'Another ethnic background',
    });
  });

  it('a body of only trn (never permitted) is still "Param is missing"', async () => {
    const before = await trainee();
    const response = await put(before.id, { trn: '567899' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual(['Param is missing or the value is empty or invalid: data']);
  });

  it('with ethnicity / when nil: ethnicity is cleared to "not provided" (997)', async () => {
    const before = await trainee();
    const response = await put(before.id, { ethnicity: null });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.ethnicity).toBe('997');
  });

  it('with training_route / when not present (null): 200 and the stored route is kept', async () => {
    const before = await trainee();
    const response = await put(before.id, { training_route: null });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.training_route).toBe('12');
    expect((await get(before.id)).json().training_route).toBe('12');
  });

  it('null for a required member (first_names, hesa_id, sex) leaves the stored value unchanged', async () => {
    const before = await trainee();
    const response = await put(before.id, { first_names: null, hesa_id: null, sex: null, middle_names: 'Q' });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({
      first_names: before.body.first_names,
      hesa_id: before.body.hesa_id,
      sex: before.body.sex,
      middle_names: 'Q',
    });
  });

  it.each([
    ['via null values', null],
    ['via blank values', ''],
  ])('when course_subject_2 or course_subject_3 are being unset %s: both cleared', async (_title, value) => {
    const before = await trainee();
    expect(before.body).toMatchObject({ course_subject_2: '100403', course_subject_3: '100346' });
    const response = await put(before.id, {
      course_subject_1: '100425',
      course_subject_2: value,
      course_subject_3: value,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({
      course_subject_1: '100425',
      course_subject_2: null,
      course_subject_3: null,
    });
  });
});

describe('put_trainee_spec.rb: error precedence', () => {
  const tenYearsAgo = () => {
    const d = new Date();
    d.setUTCFullYear(d.getUTCFullYear() - 11);
    return d.toISOString().slice(0, 10);
  };

  it('returns status code 422 with an `itt_end_date` too old (only that error) and the trainee is not updated', async () => {
    const before = await trainee();
    const response = await put(before.id, { itt_end_date: tenYearsAgo() });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual(['itt_end_date must be within the last 10 years']);
    expect((await get(before.id)).json().itt_end_date).toBe(before.body.itt_end_date);
  });

  it('with enhanced errors: an `itt_end_date` too old is keyed alone', async () => {
    const before = await trainee();
    const response = await put(before.id, { itt_end_date: tenYearsAgo() }, { 'enhanced-errors': 'true' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual({ itt_end_date: ['must be within the last 10 years'] });
  });

  it('returns status code 422 with an `itt_end_date` too far in future (only that error)', async () => {
    const before = await trainee();
    const response = await put(before.id, { itt_end_date: `${new Date().getUTCFullYear() + 6}-01-01` });
    expect(response.json().errors).toEqual(['itt_end_date must be within the next 5 years']);
  });

  it('returns status code 422 with an invalid `itt_start_date/itt_end_date` combination (hesa_id: nil ignored)', async () => {
    const before = await trainee();
    const response = await put(before.id, { hesa_id: null, itt_start_date: '2023-02-28', itt_end_date: '2022-02-28' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual(['itt_end_date must be after itt_start_date']);
    const enhanced = await put(
      before.id,
      { hesa_id: null, itt_start_date: '2023-02-28', itt_end_date: '2022-02-28' },
      { 'enhanced-errors': 'true' },
    );
    expect(enhanced.json().errors).toEqual({ itt_end_date: ['must be after itt_start_date'] });
  });

  it('an invalid trainee_start_date skips the training_route check (the route depends on the start)', async () => {
    const before = await trainee();
    const response = await put(before.id, { trainee_start_date: '2023-04-31', training_route: '99' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toContain('trainee_start_date is invalid');
    expect(response.json().errors.some((e: string) => e.startsWith('training_route'))).toBe(false);
  });
});

describe('put_trainee_spec.rb: with training_route / when invalid (a known route outside its years)', () => {
  const EXAMPLES = "Example values include '03', '09', '10', '11', '12', '14', '15', '16', '17', '18'...";
  const before2022 = {
    itt_start_date: '2021-08-01',
    itt_end_date: '2022-01-01',
    training_route: '12',
    trainee_start_date: '2021-08-01',
  };

  it('put_trainee_spec.rb:1597: the message names the route (provider_led_postgrad), not its code', async () => {
    const before = await trainee();
    const response = await put(before.id, before2022);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({
      message: 'Validation failed: 1 error prohibited this trainee from being saved',
      errors: [`training_route has invalid reference data value of 'provider_led_postgrad'. ${EXAMPLES}`],
    });
    // Nothing changed.
    expect((await get(before.id)).json()).toEqual(before.body);
  });

  it('put_trainee_spec.rb:1607: the same with enhanced errors', async () => {
    const before = await trainee();
    const response = await put(before.id, before2022, { 'enhanced-errors': 'true' });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual({
      training_route: [`has invalid reference data value of 'provider_led_postgrad'. ${EXAMPLES}`],
    });
  });

  it('a retired route (02, school_direct_tuition_fee) is named too; an unknown code stays as sent', async () => {
    const before = await trainee();
    const retired = await put(before.id, { training_route: '02' });
    // (The stored fund code 7 has no funding rule on that route either: its own message follows.)
    expect(retired.json().errors).toContain(
      `training_route has invalid reference data value of 'school_direct_tuition_fee'. ${EXAMPLES}`,
    );
    const unknown = await put(before.id, { training_route: '13' });
    expect(unknown.json().errors).toContain(`training_route has invalid reference data value of '13'. ${EXAMPLES}`);
  });
});

describe('trainee_attributes.rb itt_end_date_valid: the window and order checks need a valid itt_start_date', () => {
  it('an invalid itt_start_date with an itt_end_date beyond five years: only itt_start_date is reported', async () => {
    const before = await trainee();
    const farEnd = `${new Date().getUTCFullYear() + 6}-12-01`;
    const response = await put(before.id, { itt_start_date: '2023-02-30', itt_end_date: farEnd });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toContain('itt_start_date is invalid');
    expect(response.json().errors.some((e: string) => e.startsWith('itt_end_date'))).toBe(false);
  });

  it('an invalid itt_end_date is still reported on its own', async () => {
    const before = await trainee();
    const response = await put(before.id, { itt_start_date: '2023-02-30', itt_end_date: '2024-13-01' });
    expect(response.json().errors).toEqual(
      expect.arrayContaining(['itt_start_date is invalid', 'itt_end_date is invalid']),
    );
  });
});
