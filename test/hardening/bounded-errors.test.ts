import { Writable } from 'node:stream';
import type { FastifyError, FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { MAX_REPORTED_ERRORS } from '../../src/errors.js';
import { boundedLoggerOptions, LOG_LINE_MAX_BYTES } from '../../src/plugins/log-bounds.js';
import { MAX_JSON_ITEMS } from '../../src/plugins/api-scope.js';
import { toAppError } from '../../src/plugins/problem.js';
import { FORM_MAX_PAIRS } from '../../src/register/form-body.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import { createProviderWithToken, validTrainee, type TestProvider } from '../register/helpers.js';

/**
 * A refusal costs a fixed amount whatever the request holds: at most MAX_REPORTED_ERRORS errors and a count of the
 * rest, a body under 64 KB built in well under a second, and a few hundred bytes of log. The app logs through the
 * service's own bounded logger into a buffer, so the bytes logged per request are measured as production writes them.
 */
let database: TestDatabase;
let app: FastifyInstance;
let provider: TestProvider;
let logged = '';

const QUERY = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;
const BODY_BOUND = 64 * 1024;
const postQuery = (body: unknown) => ({
  method: 'POST' as const,
  url: QUERY,
  headers: { 'content-type': 'application/json' },
  payload: JSON.stringify(body),
});

beforeAll(async () => {
  database = await createTestDatabase();
  const config = loadConfig({ LOG_LEVEL: 'info', DATABASE_URL: database.url, RATE_LIMIT_REGISTER_MAX: '100000' });
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logged += chunk.toString();
      done();
    },
  });
  app = await buildApp(config, { db: database.db, logger: boundedLoggerOptions({ level: 'info', redact: [] }, sink) });
  provider = await createProviderWithToken(database.db);
  // Warm: the register's reference data loads on first use (once per process), which is not what is measured.
  const headers = { ...provider.auth, 'content-type': 'application/json' };
  await app.inject({
    method: 'POST',
    url: '/api/v2026.1/trainees',
    headers,
    payload: JSON.stringify({ data: { ...validTrainee(), degrees_attributes: [{}], placements_attributes: [{}] } }),
  });
  await app.inject(postQuery({ sorts: [{}] }));
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Sends one request and returns its response, the milliseconds it took and the bytes it logged. */
async function measured(request: InjectOptions) {
  logged = '';
  const started = performance.now();
  const response = await app.inject(request);
  const ms = performance.now() - started;
  return { response, ms, logBytes: Buffer.byteLength(logged), log: logged };
}

describe('the statistics query parsers', () => {
  it('1 MB of `sorts` (340,000 `{}` items): 400 with one error, refused before parsing, quickly', async () => {
    const payload = `{"sorts":[${new Array(340_000).fill('{}').join(',')}]}`;
    expect(payload.length).toBeLessThan(1024 * 1024);
    const { response, ms, logBytes, log } = await measured({
      method: 'POST',
      url: QUERY,
      headers: { 'content-type': 'application/json' },
      payload,
    });
    expect(response.statusCode).toBe(400);
    expect(response.body.length).toBeLessThan(BODY_BOUND);
    expect(ms).toBeLessThan(1000);
    expect(response.json()).toMatchObject({
      status: 400,
      title: 'One or more validation errors occurred.',
      errors: [
        { code: 'InvalidValue', message: `A list or object in the JSON body has more than ${MAX_JSON_ITEMS} items.` },
      ],
    });
    // Logged: status, code and counts only.
    expect(logBytes).toBeLessThan(16 * 1024);
    const rejected = log
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === 'request rejected');
    expect(rejected).toMatchObject({ status: 400, code: 'ValidationError', errors: 1 });
  });

  it('5,000 `{}` sorts (under the item limit): the first 100 errors and the count of the rest', async () => {
    const { response, ms, logBytes, log } = await measured(postQuery({ sorts: new Array(5000).fill({}) }));
    expect(response.statusCode).toBe(400);
    expect(ms).toBeLessThan(1000);
    const body = response.json();
    expect(body.errors).toHaveLength(MAX_REPORTED_ERRORS);
    // Each item lacks its field and its direction: 10,000 problems, 100 listed.
    expect(body.errors[0]).toEqual({ path: 'sorts[0].field', code: 'InvalidValue', message: expect.any(String) });
    expect(body.omittedErrors).toBe(10_000 - MAX_REPORTED_ERRORS);
    expect(logBytes).toBeLessThan(16 * 1024);
    const rejected = log
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === 'request rejected');
    expect(rejected).toMatchObject({ status: 400, code: 'ValidationError', errors: 10_000 });
  });

  it.each([
    ['indicators', (zeros: number[]) => ({ indicators: zeros })],
    ['criteria.and', (zeros: number[]) => ({ criteria: { and: zeros } })],
    ['filters.in', (zeros: number[]) => ({ criteria: { filters: { in: zeros } } })],
  ])('zeros in %s: 520,000 refused whole, 9,000 with 100 errors listed', async (_name, make) => {
    const wide = await measured(postQuery(make(new Array(520_000).fill(0))));
    expect(wide.response.statusCode).toBe(400);
    expect(wide.response.body.length).toBeLessThan(BODY_BOUND);
    expect(wide.ms).toBeLessThan(1000);
    expect(wide.response.json().errors).toHaveLength(1);
    expect(wide.logBytes).toBeLessThan(16 * 1024);
    const listed = await measured(postQuery(make(new Array(9000).fill(0))));
    expect(listed.response.statusCode).toBe(400);
    expect(listed.response.json().errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(listed.response.json().omittedErrors).toBe(9000 - MAX_REPORTED_ERRORS);
  });

  it('a GET query with 3,000 invalid locations lists 100 of them', async () => {
    const url = `${QUERY}?locations.in=${new Array(3000).fill('X').join(',')}`;
    const { response } = await measured({ url });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(response.json().omittedErrors).toBe(2900);
  });

  it('a small invalid body is reported as before, without a count', async () => {
    const { response } = await measured(postQuery({ sorts: [{}] }));
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toHaveLength(2);
    expect(response.json()).not.toHaveProperty('omittedErrors');
  });
});

describe('the catalogue query binder and Ajv errors', () => {
  it('300 unknown parameters: 100 listed, 200 counted', async () => {
    const query = Array.from({ length: 300 }, (_, i) => `x${i}=1`).join('&');
    const { response } = await measured({ url: `/v1/publications?${query}` });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(response.json().errors[0]).toMatchObject({ path: 'x0', code: 'UnknownField' });
    expect(response.json().omittedErrors).toBe(200);
  });

  it('Ajv validation errors become at most 100 field errors and a count', () => {
    const validation = Array.from({ length: 5000 }, (_, i) => ({
      instancePath: `/items/${i}`,
      keyword: 'type',
      params: {},
      message: 'must be string',
    }));
    const error = Object.assign(new Error('invalid'), {
      validation,
      validationContext: 'body',
    }) as unknown as FastifyError;
    const appError = toAppError(error);
    expect(appError.status).toBe(400);
    expect((appError as unknown as { errors: unknown[] }).errors).toHaveLength(MAX_REPORTED_ERRORS);
    expect(appError.errorCount).toBe(5000);
    expect(appError.message.length).toBeLessThan(2000);
  });
});

describe('the register validators and form parser', () => {
  const post = (payload: string, contentType = 'application/json') => ({
    method: 'POST' as const,
    url: '/api/v2026.1/trainees',
    headers: { ...provider.auth, 'content-type': contentType },
    payload,
  });

  it('200,000 empty `degrees_attributes` (600 KB): 400 before parsing, under 64 KB, quickly, nothing stored', async () => {
    const payload = JSON.stringify({ data: { ...validTrainee(), degrees_attributes: new Array(200_000).fill({}) } });
    const { response, ms, logBytes, log } = await measured(post(payload));
    expect(response.statusCode).toBe(400);
    expect(response.body.length).toBeLessThan(BODY_BOUND);
    expect(ms).toBeLessThan(1000);
    expect(response.json()).toEqual({
      errors: [`A list or object in the JSON body has more than ${MAX_JSON_ITEMS} items.`],
    });
    expect(logBytes).toBeLessThan(16 * 1024);
    expect(log).toContain('"msg":"request rejected"');
    expect(await database.db.selectFrom('trainees').select('id').execute()).toEqual([]);
  });

  it('5,000 empty `degrees_attributes`: 422 naming the list as too long, its items not checked', async () => {
    const payload = JSON.stringify({ data: { ...validTrainee(), degrees_attributes: new Array(5000).fill({}) } });
    const { response, ms } = await measured(post(payload));
    expect(response.statusCode).toBe(422);
    expect(ms).toBeLessThan(1000);
    expect(response.json()).toEqual({
      message: 'Validation failed: 1 error prohibited this trainee from being saved',
      errors: ['degrees_attributes is too long (maximum is 20 degrees)'],
    });
  });

  it('many problems: the message counts them all, `errors` lists 100 and `omitted_errors` the rest', async () => {
    // 150 invalid disability codes, each its own error.
    const disabilities = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`disability${i + 1}`, `bad${i}`]));
    const { response } = await measured(post(JSON.stringify({ data: { ...validTrainee(), ...disabilities } })));
    expect(response.statusCode).toBe(422);
    const body = response.json();
    expect(body.errors).toHaveLength(MAX_REPORTED_ERRORS);
    const total = MAX_REPORTED_ERRORS + body.omitted_errors;
    expect(total).toBeGreaterThanOrEqual(150);
    expect(body.message).toBe(`Validation failed: ${total} errors prohibited this trainee from being saved`);
  });

  it(`a form body of more than ${FORM_MAX_PAIRS} pairs is refused before the rest is read`, async () => {
    const payload = Array.from({ length: 20_000 }, () => 'data[degrees_attributes][][subject]=').join('&');
    const { response, ms } = await measured(post(payload, 'application/x-www-form-urlencoded'));
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      errors: [`The request body is not valid form data: more than ${FORM_MAX_PAIRS} parameters.`],
    });
    expect(ms).toBeLessThan(1000);
  });
});

describe('the log line cap', () => {
  it(`a line over ${LOG_LINE_MAX_BYTES} bytes is replaced by a short line saying so`, () => {
    logged = '';
    app.log.info({ huge: 'x'.repeat(10) }, 'y'.repeat(100_000));
    app.log.warn({ list: new Array(100_000).fill('z'), nested: { a: { b: { c: { d: { e: 'deep' } } } } } }, 'wide');
    const lines = logged.split('\n').filter(Boolean);
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(LOG_LINE_MAX_BYTES);
    const wide = JSON.parse(lines[1]!);
    expect(wide.list).toHaveLength(21);
    expect(wide.level).toBe(40);
  });

  it('a 5xx line with a huge error message stays under the cap', () => {
    logged = '';
    app.log.error({ err: new Error('e'.repeat(200_000)) }, 'request failed');
    const line = logged.trim();
    expect(Buffer.byteLength(line)).toBeLessThanOrEqual(LOG_LINE_MAX_BYTES);
    expect(JSON.parse(line)).toMatchObject({ level: 50, originalMsg: 'request failed' });
  });
});
