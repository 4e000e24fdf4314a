/**
 * Request forms the real register accepts: form-encoded bodies with Rails-style keys (DfE's request specs send
 * `params: { data: {...} }` without `as: :json`, e.g. put_trainee_spec.rb "returns status code 422 with an invalid
 * `itt_start_date` and the trainee is not updated"), and repeated slashes in a path.
 */
import { describe, expect, it } from 'vitest';
import { parseRailsForm } from '../../../src/register/form-body.js';
import type { TestApp } from '../../helpers/app.js';
import { validTrainee, type TestProvider, withRegisterApp } from '../helpers.js';

let t: TestApp;
let p: TestProvider;
withRegisterApp((app, provider) => {
  t = app;
  p = provider;
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const DEGREE = { grade: '02', subject: '100485', institution: '0117', uk_degree: '083', graduation_year: '2003' };
let unique = 0;

/** Rails' `to_query` of `{ data }` (nested hashes and arrays of hashes; `null` as a bare key). */
function toQuery(value: unknown, prefix: string): string[] {
  if (value === null) return [encodeURIComponent(prefix)];
  if (Array.isArray(value)) return value.flatMap((item) => toQuery(item, `${prefix}[]`));
  if (typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => toQuery(v, `${prefix}[${k}]`));

  return [`${encodeURIComponent(prefix)}=${encodeURIComponent(String(value))}`];
}
const form = (data: unknown) => toQuery(data, 'data').join('&');

async function created(): Promise<Record<string, unknown>> {
  unique += 1;
  const response = await t.app.inject({
    method: 'POST',
    url: '/api/v2026.1/trainees',
    headers: p.auth,
    payload: {
      data: validTrainee({
        last_name: `Form${unique}`,
        training_route: '12',
        course_subject_1: '100425',
        fund_code: '7',
        degrees_attributes: [DEGREE],
      }),
    },
  });
  expect(response.statusCode).toBe(201);
  return response.json().data;
}

describe('form-encoded bodies (put_trainee_spec.rb, post_hesa_trainees_spec.rb)', () => {
  it('put_trainee_spec.rb: returns status code 422 with an invalid `itt_start_date` and the trainee is not updated', async () => {
    const trainee = await created();
    const response = await t.app.inject({
      method: 'PUT',
      url: `/api/v2026.1/trainees/${trainee.trainee_id}`,
      headers: { ...p.auth, ...FORM },
      payload: 'data[itt_start_date]=2023-02-30',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toContain('itt_start_date is invalid');
    const after = await t.app.inject({
      method: 'GET',
      url: `/api/v2026.1/trainees/${trainee.trainee_id}`,
      headers: p.auth,
    });
    expect(after.json().itt_start_date).toBe(trainee.itt_start_date);
  });

  it('put_trainee_spec.rb: an invalid `itt_start_date/itt_end_date` combination (hesa_id sent as a bare key, i.e. nil)', async () => {
    const trainee = await created();
    const payload = form({ hesa_id: null, itt_start_date: '2023-02-28', itt_end_date: '2022-02-28' });
    expect(payload).toBe('data%5Bhesa_id%5D&data%5Bitt_start_date%5D=2023-02-28&data%5Bitt_end_date%5D=2022-02-28');
    const response = await t.app.inject({
      method: 'PUT',
      url: `/api/v2026.1/trainees/${trainee.trainee_id}`,
      headers: { ...p.auth, ...FORM },
      payload,
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual(['itt_end_date must be after itt_start_date']);
  });

  it('a form PATCH that is valid updates the trainee like JSON', async () => {
    const trainee = await created();
    const response = await t.app.inject({
      method: 'PATCH',
      url: `/api/v2026.1/trainees/${trainee.trainee_id}`,
      headers: { ...p.auth, ...FORM },
      payload: 'data[first_names]=Alice+Mary&data[provider_trainee_id]=99157234%2F2%2F01',
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ first_names: 'Alice Mary', provider_trainee_id: '99157234/2/01' });
  });

  it('POST /trainees with nested degrees and placements as Rails array keys creates them', async () => {
    unique += 1;
    const data = validTrainee({
      last_name: `FormPost${unique}`,
      training_route: '12',
      course_subject_1: '100425',
      fund_code: '7',
      degrees_attributes: [DEGREE], // Each item starts with the same key, so Rack splits them into two hashes.
      placements_attributes: [
        { urn: '900020', name: 'Unused' },
        { name: 'Oak Academy', postcode: 'GU1 1AA' },
      ],
    });
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: { ...p.auth, ...FORM },
      payload: form(data),
    });
    expect(response.json().errors).toBeUndefined();
    expect(response.statusCode).toBe(201);
    const body = response.json().data;
    expect(body.degrees).toHaveLength(1);
    expect(body.placements.map((pl: { name: string }) => pl.name).sort()).toEqual([
      'Establishment does not have a URN',
      'Oak Academy',
    ]);
  });

  it('index-keyed nested hashes (`data[placements_attributes][0][urn]`) are read as a list', async () => {
    unique += 1;
    const data = validTrainee({
      last_name: `FormIdx${unique}`,
      training_route: '12',
      course_subject_1: '100425',
      fund_code: '7',
    });
    const payload = `${form(data)}&${form({ degrees_attributes: { 0: DEGREE } })}&data[placements_attributes][0][urn]=900020`;
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: { ...p.auth, ...FORM },
      payload,
    });
    expect(response.statusCode).toBe(201);
    expect(response.json().data.placements).toHaveLength(1);
  });

  it('a form body without data keys is "Param is missing" (as an empty JSON body)', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: { ...p.auth, ...FORM },
      payload: 'foo[bar]=Alice',
    });
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual(['Param is missing or the value is empty or invalid: data']);
  });

  it('bad percent-encoding, conflicting shapes and over-deep keys are 400 with the reason', async () => {
    for (const payload of ['data[first_names]=%E0%A4%A', 'data=1&data[first_names]=x', `data${'[a]'.repeat(40)}=1`]) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/api/v2026.1/trainees',
        headers: { ...p.auth, ...FORM },
        payload,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0]).toMatch(/not valid form data/);
    }
  });

  it('a NUL character in a form value is refused like one in JSON', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: { ...p.auth, ...FORM },
      payload: 'data[first_names]=a%00b',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual(['data.first_names must not contain the NUL character (\\u0000)']);
  });

  it('the statistics API does not read form bodies', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/data-sets/00000000-0000-0000-0000-000000000000/query',
      headers: FORM,
      payload: 'indicators[]=x',
    });
    expect(response.statusCode).toBe(415);
  });
});

describe('parseRailsForm (Rack semantics)', () => {
  it('nests hashes, arrays and arrays of hashes; a repeated key starts a new item; the last scalar wins', () => {
    expect(
      JSON.parse(
        JSON.stringify(parseRailsForm('a[b]=1&a[c][]=x&a[c][]=y&a[d][][u]=1&a[d][][n]=A&a[d][][u]=2&s=1&s=2&e=&f')),
      ),
    ).toEqual({
      a: { b: '1', c: ['x', 'y'], d: [{ u: '1', n: 'A' }, { u: '2' }] },
      s: '2',
      e: '',
      f: null,
    });
  });

  it('`__proto__` is an ordinary key (no prototype pollution)', () => {
    const parsed = parseRailsForm('data[__proto__][polluted]=yes&data[constructor][prototype][x]=1');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const data = parsed.data as Record<string, unknown>;
    expect(Object.getOwnPropertyDescriptor(data, '__proto__')?.value).toEqual({ polluted: 'yes' });
    expect(JSON.parse(JSON.stringify(data.constructor))).toEqual({ prototype: { x: '1' } });
  });
});

describe('repeated slashes in register paths', () => {
  it('are treated as one, as the real router does (GET, PUT)', async () => {
    const trainee = await created();
    for (const url of [
      `/api/v2026.1//trainees/${trainee.trainee_id}`,
      `/api//v2026.1/trainees/${trainee.trainee_id}`,
      `//api/v2026.1///trainees/${trainee.trainee_id}`,
    ]) {
      const response = await t.app.inject({ method: 'GET', url, headers: p.auth });
      expect(response.statusCode).toBe(200);
      expect(response.json().trainee_id).toBe(trainee.trainee_id);
    }
    const put = await t.app.inject({
      method: 'PUT',
      url: `/api/v2026.1//trainees/${trainee.trainee_id}`,
      headers: p.auth,
      payload: { data: { first_names: 'Slash' } },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json().data.first_names).toBe('Slash');
    const unauthenticated = await t.app.inject({ method: 'GET', url: `/api/v2026.1//trainees/${trainee.trainee_id}` });
    expect(unauthenticated.statusCode).toBe(401);
  });
});
