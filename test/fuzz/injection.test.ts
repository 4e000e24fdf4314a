import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHOOL, UK_DEGREE } from '../register/helpers.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import { databaseFingerprint, HOSTILE_STRINGS, REGISTER_TABLES } from './helpers.js';
import { scaledMs } from '../helpers/machine-speed.js';

/**
 * Every hostile string (SQL injection, `%00`/NUL, path traversal, very long, unicode…) in every string parameter
 * of both APIs — path segments, query parameters, JSON body members, headers — gives a 2xx or a 4xx, never a
 * 5xx, and changes nothing: the database fingerprint is the same afterwards. Where a write legitimately succeeds,
 * the value is stored literally (read back unchanged), not interpreted.
 */
let f: TestApp;
let provider: TestProvider;
let traineeId: string;
let actionTraineeId: string;
/** A placement given by name (not linked to a school record), whose name the API stores as sent. */
let namedPlacementId: string;
let degreeId: string;

beforeAll(async () => {
  f = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '1000000', RATE_LIMIT_STATISTICS_MAX: '1000000' });
  provider = await createProviderWithToken(f.database.db, { environment: f.config.REGISTER_ENVIRONMENT });
  await f.database.db.insertInto('schools').values(SCHOOL).execute();
  const call = async (path: string, data: unknown) => {
    const response = await send({ method: 'POST', path, body: { data } });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data as Record<string, string>;
  };
  traineeId = (await call('/trainees', validTrainee({ last_name: 'Injection' }))).trainee_id!;
  await call(`/trainees/${traineeId}/placements`, { urn: SCHOOL.urn });
  namedPlacementId = (await call(`/trainees/${traineeId}/placements`, { name: 'Named school', postcode: 'BN1 1AA' }))
    .placement_id!;
  degreeId = (await call(`/trainees/${traineeId}/degrees`, UK_DEGREE)).degree_id!;
  actionTraineeId = (
    await call('/trainees', validTrainee({ last_name: 'Actions', first_names: 'Ada', date_of_birth: '1991-02-03' }))
  ).trainee_id!;
});
afterAll(async () => {
  await f?.close();
});

const TODAY = new Date().toISOString().slice(0, 10);
const DATA_SET = ABSENCE_SCHOOL.dataSetId;
const PUBLICATION = ABSENCE_SCHOOL.publicationId;

function label(request: { method: string; url: string; payload?: unknown }, response: LightMyRequestResponse) {
  const body = request.payload === undefined ? '' : ` ${JSON.stringify(request.payload).slice(0, 120)}`;
  return `${request.method} ${request.url.slice(0, 160)}${body} → ${response.statusCode} ${response.body.slice(0, 200)}`;
}

/** Every statistics request with a hole for the hostile string. */
const STATISTICS_TEMPLATES: Array<
  (s: string) => { method: 'GET' | 'POST'; url: string; payload?: unknown; headers?: Record<string, string> }
> = [];
{
  const e = encodeURIComponent;
  const get = (url: (s: string) => string) => STATISTICS_TEMPLATES.push((s) => ({ method: 'GET', url: url(s) }));
  // Path segments.
  get((s) => `/v1/publications/${e(s)}`);
  get((s) => `/v1/publications/${e(s)}/data-sets`);
  get((s) => `/v1/data-sets/${e(s)}`);
  get((s) => `/v1/data-sets/${e(s)}/meta`);
  get((s) => `/v1/data-sets/${e(s)}/query`);
  get((s) => `/v1/data-sets/${e(s)}/csv`);
  get((s) => `/v1/data-sets/${DATA_SET}/versions/${e(s)}`);
  get((s) => `/v1/data-sets/${DATA_SET}/versions/${e(s)}/changes`);
  // Query parameters.
  for (const key of ['search', 'page', 'pageSize']) get((s) => `/v1/publications?${key}=${e(s)}`);
  get((s) => `/v1/publications/${PUBLICATION}/data-sets?page=${e(s)}`);
  get((s) => `/v1/data-sets/${DATA_SET}/versions?pageSize=${e(s)}`);
  get((s) => `/v1/data-sets/${DATA_SET}/versions/1.0/changes?includePatchHistory=${e(s)}`);
  for (const key of ['types', 'dataSetVersion']) get((s) => `/v1/data-sets/${DATA_SET}/meta?${key}=${e(s)}`);
  get((s) => `/v1/data-sets/${DATA_SET}/csv?dataSetVersion=${e(s)}`);
  const queryKeys = [
    'dataSetVersion',
    'filters.eq',
    'filters.notEq',
    'filters.in',
    'filters.notIn',
    'geographicLevels.eq',
    'geographicLevels.in',
    'locations.eq',
    'locations.in',
    'locations.notIn',
    'timePeriods.eq',
    'timePeriods.in',
    'timePeriods.gte',
    'indicators',
    'sorts',
    'debug',
    'page',
    'pageSize',
  ];
  for (const key of queryKeys) get((s) => `/v1/data-sets/${DATA_SET}/query?${key}=${e(s)}`);
  // Hostile strings inside well-formed location, time period and sort strings.
  get((s) => `/v1/data-sets/${DATA_SET}/query?locations.eq=${e(`LA|code|${s}`)}`);
  get((s) => `/v1/data-sets/${DATA_SET}/query?locations.in=${e(`SCH|urn|${s}`)}`);
  get((s) => `/v1/data-sets/${DATA_SET}/query?timePeriods.eq=${e(`${s}|AY`)}`);
  get((s) => `/v1/data-sets/${DATA_SET}/query?sorts=${e(`filter|${s}|Asc`)}`);
  // An unknown parameter name.
  get((s) => `/v1/data-sets/${DATA_SET}/query?${e(s)}=1`);
  // POST bodies: every string member of the request.
  const post = (body: (s: string) => unknown) =>
    STATISTICS_TEMPLATES.push((s) => ({ method: 'POST', url: `/v1/data-sets/${DATA_SET}/query`, payload: body(s) }));
  post((s) => ({ criteria: { filters: { eq: s } } }));
  post((s) => ({ criteria: { filters: { in: ['IzBzg', s] } } }));
  post((s) => ({ criteria: { geographicLevels: { notIn: [s] } } }));
  post((s) => ({ criteria: { locations: { eq: { level: 'LA', code: s } } } }));
  post((s) => ({ criteria: { locations: { in: [{ level: s, id: 'dP0Zw' }] } } }));
  post((s) => ({ criteria: { locations: { notEq: { level: 'SCH', urn: s } } } }));
  post((s) => ({ criteria: { not: { timePeriods: { gt: { period: s, code: 'AY' } } } } }));
  post((s) => ({ criteria: { or: [{ timePeriods: { eq: { period: '2021', code: s } } }] } }));
  post((s) => ({ indicators: [s] }));
  post((s) => ({ sorts: [{ field: s, direction: 'Asc' }] }));
  post((s) => ({ sorts: [{ field: 'timePeriod', direction: s }] }));
  post((s) => ({ criteria: { [s]: { eq: 'x' } } }));
  STATISTICS_TEMPLATES.push((s) => ({
    method: 'POST',
    url: `/v1/data-sets/${DATA_SET}/query?dataSetVersion=${e(s)}`,
    payload: null,
  }));
  // Headers (values a header can carry: no NUL, CR or LF).
  STATISTICS_TEMPLATES.push((s) => ({
    method: 'GET',
    url: `/v1/data-sets/${DATA_SET}/meta`,
    headers: { 'if-none-match': s },
  }));
  STATISTICS_TEMPLATES.push((s) => ({
    method: 'GET',
    url: `/v1/data-sets/${DATA_SET}/query`,
    headers: { 'preview-token': s },
  }));
}

describe('hostile strings in every statistics parameter', () => {
  it(
    `${STATISTICS_TEMPLATES.length} parameters × ${HOSTILE_STRINGS.length} strings: no 5xx, nothing changed`,
    async () => {
      const before = await databaseFingerprint(f.database.db);
      let requests = 0;
      for (const template of STATISTICS_TEMPLATES) {
        for (const hostile of HOSTILE_STRINGS) {
          const request = template(hostile);
          // eslint-disable-next-line no-control-regex -- NUL, CR and LF are what no HTTP header value may carry
          if (request.headers && Object.values(request.headers).some((v) => /[\u0000\r\n]|[^\u0000-\u00ff]/.test(v)))
            continue;
          const response = await f.app.inject({
            method: request.method,
            url: request.url,
            headers: {
              ...(request.payload === undefined ? {} : { 'content-type': 'application/json' }),
              ...request.headers,
            },
            payload: request.payload === undefined ? undefined : JSON.stringify(request.payload),
          });
          requests += 1;
          expect(response.statusCode, label(request, response)).toBeLessThan(500);
          // 414: a path parameter longer than the router's limit (500 characters).
          expect([200, 304, 308, 400, 403, 404, 414], label(request, response)).toContain(response.statusCode);
        }
      }
      expect(requests).toBeGreaterThan(1000);
      expect(await databaseFingerprint(f.database.db)).toEqual(before);
    },
    scaledMs(90000),
  );
});

type RegisterRequest = {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
};

async function send(request: RegisterRequest) {
  return f.app.inject({
    method: request.method,
    url: `/api/v2026.1${request.path}`,
    headers: {
      authorization: `Bearer ${provider.token}`,
      ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...request.headers,
    },
    payload: request.body === undefined ? undefined : JSON.stringify(request.body),
  });
}

/** Register requests with a hole for the hostile string; reads and writes that the string must not get through. */
function registerTemplates(): Array<(s: string) => RegisterRequest> {
  const e = encodeURIComponent;
  const t: Array<(s: string) => RegisterRequest> = [];
  // Path segments.
  t.push((s) => ({ method: 'GET', path: `/trainees/${e(s)}` }));
  t.push((s) => ({ method: 'PATCH', path: `/trainees/${e(s)}`, body: { data: { first_names: 'X' } } }));
  t.push((s) => ({ method: 'GET', path: `/trainees/${traineeId}/placements/${e(s)}` }));
  t.push((s) => ({ method: 'DELETE', path: `/trainees/${traineeId}/placements/${e(s)}` }));
  t.push((s) => ({ method: 'DELETE', path: `/trainees/${traineeId}/degrees/${e(s)}` }));
  t.push((s) => ({ method: 'POST', path: `/trainees/${e(s)}/withdraw`, body: { data: {} } }));
  // Query parameters.
  for (const key of ['status', 'since', 'academic_cycle', 'has_trn', 'sort_order', 'page', 'per_page']) {
    t.push((s) => ({ method: 'GET', path: `/trainees?${key}=${e(s)}` }));
  }
  t.push((s) => ({ method: 'GET', path: `/reference-data?field=${e(s)}` }));
  // Headers.
  t.push((s) => ({ method: 'GET', path: '/trainees', headers: { authorization: `Bearer ${s}` } }));
  t.push((s) => ({
    method: 'GET',
    path: `/trainees/${traineeId}`,
    headers: { 'enhanced-errors': s, 'if-none-match': s },
  }));
  return t;
}

/** Body members of the writes; a string in any of them is either refused (4xx) or stored as it is. */
const TRAINEE_STRING_FIELDS = [
  'first_names',
  'middle_names',
  'email',
  'training_route',
  'itt_start_date',
  'course_subject_1',
  'study_mode',
  'course_age_range',
  'itt_qualification_aim',
  'fund_code',
  'disability1',
  'ethnicity',
  'lead_partner_urn',
  'employing_school_urn',
  'trainee_start_date',
  'provider_trainee_id',
  'application_id',
];
const CREATE_FIELDS = [
  'first_names',
  'last_name',
  'middle_names',
  'email',
  'date_of_birth',
  'sex',
  'nationality',
  'course_subject_1',
  'trn',
  'provider_trainee_id',
  'hesa_id',
];
const PLACEMENT_FIELDS = ['urn', 'name', 'postcode'];
/** One string of each kind for the body members (each write is fingerprinted, so fewer than for reads). */
const HOSTILE_BODY_STRINGS = [0, 1, 4, 6, 8, 10, 11, 14, 15, 16, 18, 23].map((i) => HOSTILE_STRINGS[i]!);
const FREE_TEXT = [
  'first_names',
  'last_name',
  'middle_names',
  'provider_trainee_id',
  'application_id',
  'name',
  'defer_reason',
];
const DEGREE_FIELDS = ['grade', 'subject', 'institution', 'uk_degree', 'non_uk_degree', 'graduation_year', 'country'];

describe('hostile strings in every register parameter', () => {
  it(
    'paths, query parameters and headers: no 5xx, nothing changed',
    async () => {
      const before = await databaseFingerprint(f.database.db);
      for (const template of registerTemplates()) {
        for (const hostile of HOSTILE_STRINGS) {
          const request = template(hostile);
          // eslint-disable-next-line no-control-regex -- NUL, CR and LF are what no HTTP header value may carry
          if (request.headers && Object.values(request.headers).some((v) => /[\u0000\r\n]|[^\u0000-\u00ff]/.test(v)))
            continue;
          const response = await send(request);
          const text = label({ method: request.method, url: request.path, payload: request.body }, response);
          expect(response.statusCode, text).toBeLessThan(500);
        }
      }
      expect(await databaseFingerprint(f.database.db)).toEqual(before);
    },
    scaledMs(60000),
  );

  it(
    'body members of create, update, placements, degrees, defer and withdraw: refused unchanged or stored literally',
    async () => {
      const writes: Array<[string, (field: string, s: string) => RegisterRequest, string[]]> = [
        [
          'create trainee',
          (field, s) => ({
            method: 'POST',
            path: '/trainees',
            body: { data: validTrainee({ last_name: `Inj${(serial += 1)}`, [field]: s }) },
          }),
          CREATE_FIELDS,
        ],
        [
          'update trainee',
          (field, s) => ({ method: 'PATCH', path: `/trainees/${traineeId}`, body: { data: { [field]: s } } }),
          TRAINEE_STRING_FIELDS,
        ],
        [
          'add placement',
          (field, s) => ({
            method: 'POST',
            path: `/trainees/${traineeId}/placements`,
            body: { data: { name: 'School', postcode: 'BN1 1AA', [field]: s } },
          }),
          PLACEMENT_FIELDS,
        ],
        [
          'update placement',
          (field, s) => ({
            method: 'PATCH',
            path: `/trainees/${traineeId}/placements/${namedPlacementId}`,
            body: { data: { [field]: s } },
          }),
          PLACEMENT_FIELDS,
        ],
        [
          'update degree',
          (field, s) => ({
            method: 'PATCH',
            path: `/trainees/${traineeId}/degrees/${degreeId}`,
            body: { data: { [field]: s } },
          }),
          DEGREE_FIELDS,
        ],
        [
          'defer',
          (field, s) => ({
            method: 'POST',
            path: `/trainees/${actionTraineeId}/defer`,
            body: { data: { defer_date: TODAY, [field]: s } },
          }),
          ['defer_date', 'defer_reason'],
        ],
        [
          'withdraw',
          (field, s) => ({
            method: 'POST',
            path: `/trainees/${actionTraineeId}/withdraw`,
            body: {
              data: {
                withdrawal_date: TODAY,
                trigger: 'trainee',
                future_interest: 'no',
                ...(field === 'reasons' ? { reasons: [s] } : { reasons: ['trainee_workload_issues'], [field]: s }),
              },
            },
          }),
          ['withdrawal_date', 'trigger', 'future_interest', 'reasons'],
        ],
      ];
      let stored = 0;
      let serial = 0;
      const fingerprint = () => databaseFingerprint(f.database.db, ['public'], REGISTER_TABLES);
      let before = await fingerprint();
      for (const [name, build, fields] of writes) {
        for (const field of fields) {
          for (const hostile of HOSTILE_BODY_STRINGS) {
            const request = build(field, hostile);
            const response = await send(request);
            const text = `${name}: ${label({ method: request.method, url: request.path, payload: request.body }, response)}`;
            expect(response.statusCode, text).toBeLessThan(500);
            const after = await fingerprint();
            if (response.statusCode >= 400) {
              expect(after, text).toEqual(before);
            } else {
              // Accepted into a free-text member: the value comes back as sent (or trimmed), never interpreted.
              // (Code members map blanks to their documented defaults, e.g. ethnicity 997, so they are not compared.)
              const echoed = response.json<{ data?: Record<string, unknown> }>().data?.[field];
              if (FREE_TEXT.includes(field) && hostile.trim() !== '' && typeof echoed === 'string') {
                expect(
                  [hostile, hostile.trim(), hostile.trim().toUpperCase(), hostile.trim().toLowerCase()],
                  text,
                ).toContain(echoed);
                stored += 1;
              }
            }
            before = after;
          }
        }
      }
      // Free-text fields (names, placement names) do take most of these strings.
      expect(stored).toBeGreaterThan(10);
      // Whatever was accepted, every table is still there and the providers and tokens are untouched.
      const tables = await databaseFingerprint(f.database.db, ['public']);
      expect(Object.keys(tables)).toEqual(
        expect.arrayContaining(['public.trainees', 'public.providers', 'public.authentication_tokens']),
      );
    },
    scaledMs(90000),
  );

  it('NUL in an id or a body member is a 404 or a 400 naming the member, not a 500', async () => {
    const missing = await send({ method: 'GET', path: '/trainees/%00' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ errors: [{ error: 'NotFound', message: 'Trainee(s) not found' }] });
    const placement = await send({ method: 'DELETE', path: `/trainees/${traineeId}/placements/a%00b` });
    expect(placement.statusCode).toBe(404);
    const body = await send({
      method: 'PATCH',
      path: `/trainees/${traineeId}`,
      body: { data: { first_names: 'a\u0000b' } },
    });
    expect(body.statusCode).toBe(400);
    expect(body.json()).toEqual({ errors: ['data.first_names must not contain the NUL character (\\u0000)'] });
    const nested = await send({
      method: 'POST',
      path: `/trainees/${actionTraineeId}/withdraw`,
      body: { data: { reasons: ['x', '\u0000'] } },
    });
    expect(nested.statusCode).toBe(400);
    expect(nested.json().errors[0]).toContain('data.reasons[1]');
  });
});
