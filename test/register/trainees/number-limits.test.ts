/**
 * Numbers beyond what the register can hold are refused with the usual 4xx naming the field, never a 500:
 * `course_year` (create and update, every version) and the trainee list's `page`.
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

const VERSIONS = ['v2025.0', 'v2026.0', 'v2026.1'] as const;
let unique = 0;

function data(version: string, overrides: Record<string, unknown> = {}) {
  unique += 1;
  const { course_subject_1, ...rest } = validTrainee({ last_name: `Numbers${unique}`, ...overrides });
  return version === 'v2025.0' ? { ...rest, course_subject_one: course_subject_1 } : { ...rest, course_subject_1 };
}

async function count(): Promise<number> {
  const row = await t.database.db
    .selectFrom('trainees')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('course_year', () => {
  it.each(
    VERSIONS.flatMap(
      (v) =>
        [
          [v, '2147483648', 'course_year must be less than or equal to 9999'],
          [v, 1e20, 'course_year must be less than or equal to 9999'],
          [v, '2147483647', 'course_year must be less than or equal to 9999'],
          [v, '10000', 'course_year must be less than or equal to 9999'],
          [v, '-1', 'course_year must be greater than or equal to 0'],
          [v, '1e3', 'course_year is not a valid course year'],
        ] as const,
    ),
  )('%s: POST with course_year %s → 422 %s, nothing created', async (version, value, message) => {
    const before = await count();
    const response = await t.app.inject({
      method: 'POST',
      url: `/api/${version}/trainees`,
      headers: p.auth,
      payload: { data: data(version, { course_year: value }) },
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([message]);
    expect(await count()).toBe(before);
  });

  it.each(VERSIONS)(
    "%s: 0 (foundation year), 3, 2012 (post_hesa_trainees_spec.rb's own value) and 9999 are accepted; PUT beyond int32 is 422 and changes nothing",
    async (version) => {
      for (const year of ['0', '3', '2012', 9999]) {
        const response = await t.app.inject({
          method: 'POST',
          url: `/api/${version}/trainees`,
          headers: p.auth,
          payload: { data: data(version, { course_year: year }) },
        });
        expect(response.statusCode).toBe(201);
        expect(Number(response.json().data.course_year)).toBe(Number(year));
      }
      const created = await t.app.inject({
        method: 'POST',
        url: `/api/${version}/trainees`,
        headers: p.auth,
        payload: { data: data(version) },
      });
      const id = created.json().data.trainee_id;
      const update = await t.app.inject({
        method: 'PUT',
        url: `/api/${version}/trainees/${id}`,
        headers: p.auth,
        payload: { data: { course_year: '9223372036854775808' } },
      });
      expect(update.statusCode).toBe(422);
      expect(update.json().errors).toEqual(['course_year must be less than or equal to 9999']);
      const enhanced = await t.app.inject({
        method: 'PATCH',
        url: `/api/${version}/trainees/${id}`,
        headers: { ...p.auth, 'enhanced-errors': 'true' },
        payload: { data: { course_year: -5 } },
      });
      expect(enhanced.json().errors).toEqual({ course_year: ['must be greater than or equal to 0'] });
      const after = await t.app.inject({ method: 'GET', url: `/api/${version}/trainees/${id}`, headers: p.auth });
      expect(after.json().course_year).toBe(created.json().data.course_year);
    },
  );
});

describe('GET /trainees page', () => {
  it.each(['184467440737095516000', '2147483648', '99999999999999999999999999999999999999'])(
    'page=%s → 422 naming page, never 500',
    async (page) => {
      const response = await t.app.inject({
        method: 'GET',
        url: `/api/v2026.1/trainees?page=${page}`,
        headers: p.auth,
      });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toEqual({
        message: 'Validation failed: 1 error prohibited this request being run',
        errors: { page: ['must be less than or equal to 2147483647'] },
      });
    },
  );

  it.each(['2147483647', 'abc', '-3', '1.5e300', '0'])(
    'page=%s is a page (404 when empty, or the first page), not a 500',
    async (page) => {
      const response = await t.app.inject({
        method: 'GET',
        url: `/api/v2026.1/trainees?page=${page}&per_page=1000`,
        headers: p.auth,
      });
      expect([200, 404]).toContain(response.statusCode);
    },
  );
});
