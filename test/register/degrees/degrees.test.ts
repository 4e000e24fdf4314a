import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NON_UK_DEGREE, registerFixture, snapshot, UK_DEGREE, type RegisterFixture } from '../helpers.js';

let f: RegisterFixture;
beforeAll(async () => {
  f = await registerFixture();
});
afterAll(async () => {
  await f?.close();
});

const unprocessable = (...messages: string[]) => ({
  errors: messages.map((message) => ({ error: 'UnprocessableEntity', message })),
});
const DEGREE_KEYS = [
  'country',
  'created_at',
  'degree_id',
  'grade',
  'grade_uuid',
  'graduation_year',
  'institution',
  'institution_uuid',
  'non_uk_degree',
  'other_grade',
  'subject',
  'subject_uuid',
  'uk_degree',
  'uk_degree_uuid',
  'updated_at',
];
const nextYear = new Date().getUTCFullYear() + 1;

async function post(traineeId: string, data: unknown) {
  return f.call('POST', 'v2026.1', `/trainees/${traineeId}/degrees`, { data });
}

describe('degrees', () => {
  it('adds a UK degree: codes echoed, country dropped, reference ids as the *_uuid fields', async () => {
    const id = await f.insertTrainee();
    const res = await post(id, UK_DEGREE);
    expect(res.statusCode).toBe(201);
    const degree = res.json().data;
    expect(Object.keys(degree).sort()).toEqual(DEGREE_KEYS);
    expect(degree).toMatchObject({
      uk_degree: '014',
      non_uk_degree: null,
      subject: '100425',
      institution: '1166',
      grade: '02',
      country: null,
      graduation_year: 2015,
      other_grade: null,
      subject_uuid: '918170f0-5dce-e911-a985-000d3ab79618',
      institution_uuid: 'c63d87ce-7c3d-4e5a-93e2-337b71426d8f',
      uk_degree_uuid: '0caa1ea5-868a-47a4-9b26-4b7470528b67',
      grade_uuid: 'e2fe18d4-8655-47cf-ab1a-8c3e0b0f078f',
    });
    const stored = await f.database.db
      .selectFrom('trainee_degrees')
      .selectAll()
      .where('id', '=', degree.degree_id)
      .executeTakeFirstOrThrow();
    expect(stored.locale_code).toBe('uk');
    const one = await f.call('GET', 'v2026.1', `/trainees/${id}/degrees/${degree.degree_id}`);
    expect(one.json()).toEqual({ data: degree });
    expect((await f.call('GET', 'v2026.1', `/trainees/${id}`)).json().degrees).toEqual([degree]);
  });

  it('adds a non-UK degree: country kept, no institution', async () => {
    const id = await f.insertTrainee();
    const res = await post(id, NON_UK_DEGREE);
    expect(res.statusCode).toBe(201);
    expect(res.json().data).toMatchObject({
      country: 'GL',
      non_uk_degree: '083',
      uk_degree: null,
      institution: null,
      institution_uuid: null,
    });
  });

  it('maps an unknown institution to Other UK, 0133 to UCL and grade 09 to 14, and reads the year from a date or a number', async () => {
    const id = await f.insertTrainee();
    const other = await post(id, { ...UK_DEGREE, institution: 'University of Oxford', graduation_year: 2003 });
    expect(other.statusCode).toBe(201);
    expect(other.json().data).toMatchObject({
      institution: null,
      institution_uuid: '5070f34a-2887-e711-80d8-005056ac45bb',
      graduation_year: 2003,
    });
    const ucl = await post(id, { ...UK_DEGREE, institution: '0133', grade: '09', graduation_year: '2004-01-01' });
    expect(ucl.statusCode).toBe(201);
    expect(ucl.json().data).toMatchObject({ institution: '0149', grade: '14', graduation_year: 2004 });
    const list = await f.call('GET', 'v2026.1', `/trainees/${id}/degrees`);
    expect(list.json().data.map((d: { graduation_year: number }) => d.graduation_year)).toEqual([2003, 2004]);
  });

  it('answers 409 with the existing degree for a duplicate, and adds nothing', async () => {
    const id = await f.insertTrainee();
    const existing = (await post(id, UK_DEGREE)).json().data;
    const before = await snapshot(f, 'v2026.1', id);
    const res = await post(id, UK_DEGREE);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({
      errors: [{ error: 'Conflict', message: 'This is a duplicate degree' }],
      data: [existing],
    });
    // The duplicate check wins over other errors, and compares only the fields sent.
    const partial = await post(id, { subject: '100425', graduation_year: 2015 });
    expect(partial.statusCode).toBe(409);
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('lets only one of two simultaneous identical degrees in (the trainee row lock serializes them)', async () => {
    const id = await f.insertTrainee();
    const results = await Promise.all([post(id, UK_DEGREE), post(id, UK_DEGREE), post(id, UK_DEGREE)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409]);
    expect((await f.call('GET', 'v2026.1', `/trainees/${id}/degrees`)).json().data).toHaveLength(1);
  });

  it('lists every problem of a bad UK degree (facts case 81)', async () => {
    const id = await f.insertTrainee();
    const before = await snapshot(f, 'v2026.1', id);
    const res = await post(id, {
      grade: 'First',
      subject: 'Practical Magic',
      graduation_year: nextYear + 1,
      uk_degree: 'Bachelor of Arts',
      institution: 'University of Oxford',
    });
    expect(res.statusCode).toBe(422);
    const messages = res.json().errors.map((e: { message: string }) => e.message);
    expect(messages.sort()).toEqual(
      [
        'graduation_year must be in the past, for example 2014',
        'graduation_year is invalid',
        'subject must be entered if specifying a previous UK degree or non-UK degree',
        "uk_degree has invalid reference data value of 'Bachelor of Arts'. Example values include '001', '002', '003', '005', '007', '009', '010', '012', '013', '014'...",
        'grade must be entered if specifying a previous UK degree or non-UK degree',
      ].sort(),
    );
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it.each([
    [
      { country: 'MX' },
      [
        'non_uk_degree must be entered if specifying a previous non-UK degree',
        'subject must be entered if specifying a previous UK degree or non-UK degree',
        'graduation_year must be entered if specifying a previous UK degree or non-UK degree',
      ],
    ],
    [{ ...UK_DEGREE, graduation_year: 200 }, ['graduation_year is invalid']],
    [{ ...UK_DEGREE, graduation_year: 'abc' }, ['graduation_year is invalid']],
    [
      { ...UK_DEGREE, graduation_year: '3000-01-01' },
      ['graduation_year must be in the past, for example 2014', 'graduation_year is invalid'],
    ],
    [{ ...UK_DEGREE, institution: null }, ['institution must be entered if specifying a previous UK degree']],
    [
      { ...NON_UK_DEGREE, country: 'QQ' },
      [
        "country has invalid reference data value of 'QQ'. Example values include 'AD', 'AE', 'AF', 'AG', 'AI', 'AL', 'AM', 'AO', 'AR', 'AS'...",
      ],
    ],
  ])('refuses %j with the real messages', async (data, messages) => {
    const id = await f.insertTrainee();
    const res = await post(id, data);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual(unprocessable(...messages));
    expect((await f.call('GET', 'v2026.1', `/trainees/${id}/degrees`)).json()).toEqual({ data: [] });
  });

  it('changes only the fields sent, and switches between UK and non-UK (facts case 82)', async () => {
    const id = await f.insertTrainee();
    const degree = (await post(id, UK_DEGREE)).json().data;
    const url = `/trainees/${id}/degrees/${degree.degree_id}`;
    const subject = await f.call('PUT', 'v2026.1', url, { data: { subject: '100105' } });
    expect(subject.statusCode).toBe(200);
    expect(subject.json().data).toMatchObject({
      ...degree,
      subject: '100105',
      subject_uuid: '937f70f0-5dce-e911-a985-000d3ab79618',
      updated_at: expect.any(String),
    });
    const nonUk = await f.call('PATCH', 'v2026.1', url, { data: { non_uk_degree: '097', country: 'MX' } });
    expect(nonUk.statusCode).toBe(200);
    expect(nonUk.json().data).toMatchObject({
      non_uk_degree: '097',
      uk_degree: null,
      country: 'MX',
      subject: '100105',
    });
    const back = await f.call('PATCH', 'v2026.1', url, { data: { uk_degree: '051' } });
    expect(back.statusCode).toBe(200);
    expect(back.json().data).toMatchObject({
      uk_degree: '051',
      non_uk_degree: null,
      country: null,
      institution: '1166',
      grade: '02',
    });
  });

  it('refuses a change into a duplicate (409), a bad change (422) and a body without data (422), changing nothing', async () => {
    const id = await f.insertTrainee();
    const a = (await post(id, UK_DEGREE)).json().data;
    const b = (await post(id, { ...UK_DEGREE, subject: '100105' })).json().data;
    const before = await snapshot(f, 'v2026.1', id);
    const duplicate = await f.call('PUT', 'v2026.1', `/trainees/${id}/degrees/${b.degree_id}`, {
      data: { subject: '100425' },
    });
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toEqual({
      errors: [{ error: 'Conflict', message: 'This is a duplicate degree' }],
      data: [a],
    });
    const bad = await f.call('PUT', 'v2026.1', `/trainees/${id}/degrees/${b.degree_id}`, {
      data: { graduation_year: 'abc' },
    });
    expect(bad.json()).toEqual(unprocessable('graduation_year is invalid'));
    const missing = await f.call('PUT', 'v2026.1', `/trainees/${id}/degrees/${b.degree_id}`, { foo: { bar: 'Alice' } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json()).toEqual({ errors: ['Param is missing or the value is empty or invalid: data'] });
    const otherProvider = await f.call(
      'PUT',
      'v2026.1',
      `/trainees/${id}/degrees/${b.degree_id}`,
      { data: { subject: '100425' } },
      f.otherProvider.token,
    );
    expect(otherProvider.statusCode).toBe(404);
    expect(await snapshot(f, 'v2026.1', id)).toEqual(before);
  });

  it('deletes a degree and returns the trainee; another trainee’s degree is 404', async () => {
    const id = await f.insertTrainee();
    const other = await f.insertTrainee();
    const degree = (await post(id, UK_DEGREE)).json().data;
    const wrong = await f.call('DELETE', 'v2026.1', `/trainees/${other}/degrees/${degree.degree_id}`);
    expect(wrong.statusCode).toBe(404);
    expect(wrong.json()).toEqual({ errors: [{ error: 'NotFound', message: 'Degree(s) not found' }] });
    const res = await f.call('DELETE', 'v2026.1', `/trainees/${id}/degrees/${degree.degree_id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({ trainee_id: id, degrees: [] });
    const audits = await f.database.db
      .selectFrom('trainee_audits')
      .selectAll()
      .where('trainee_id', '=', id)
      .orderBy('id')
      .execute();
    expect(audits.map((a) => a.action)).toEqual(['degree.create', 'degree.delete']);
    expect(audits[1]!.before).toMatchObject({ degree_id: degree.degree_id });
    expect(audits[1]!.token_id).not.toBeNull();
  });
});
