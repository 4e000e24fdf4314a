/**
 * Every example request of both APIs' OpenAPI documents is sent to a fresh server (a cloned test database): it gets
 * the documented status, a body valid against the documented schema, and the very answer the documents show
 * (timestamps and generated ids aside). `UPDATE_EXAMPLES=1` records the answers instead (then `npm run openapi`):
 * `npm run openapi:examples` does both.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { OPENAPI_DOCUMENTS } from '../../src/app.js';
import {
  operationsOf,
  type ExampleRequest,
  type RecordedDocumentExamples,
  type RecordedExample,
} from '../../src/plugins/openapi-examples.js';
import {
  EXAMPLE_DRAFT_DATA_SET_ID,
  STATISTICS_EXAMPLES,
  statisticsRecordedExamples,
} from '../../src/statistics/openapi-examples.js';
import {
  REGISTER_EXAMPLES,
  registerRecordedExamples,
  registerOperation,
  UNKNOWN_ID,
  type RegisterExample,
} from '../../src/register/openapi/examples.js';
import { REGISTER_VERSIONS, type RegisterVersion } from '../../src/register/versions/index.js';
import { receiveTrn } from '../../src/register/transitions/service.js';
import { purgeEvents, sequencePendingEvents } from '../../src/events/outbox-repository.js';
import { WebhookWorker } from '../../src/events/webhook-worker.js';
import { registerEventApi } from '../../src/register/events/service.js';
import { statisticsEventApi } from '../../src/statistics/events/service.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createProviderWithToken } from '../register/helpers.js';
import { createDataSet, importFixtureVersion } from '../helpers/statistics.js';

type Json = Record<string, unknown>;
const UPDATE = process.env.UPDATE_EXAMPLES === '1';
const STATISTICS_FILE = new URL('../../src/statistics/openapi-examples.recorded.json', import.meta.url);
const REGISTER_FILE = new URL('../../src/register/openapi/recorded-examples.json', import.meta.url);
const COUNT_FILE = 'docs/api-reference.md';

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });

/** The documented schema of an answer; the document's components travel with it so that `$ref`s resolve. */
function responseSchema(document: Json, request: ExampleRequest, status: number, contentType: string): unknown {
  const operation = (document.paths as Record<string, Json>)[request.path]?.[request.method.toLowerCase()] as
    | Json
    | undefined;
  expect(operation, `${request.method} ${request.path} is in the document`).toBeDefined();
  const response = (operation!.responses as Record<string, Json>)[String(status)];
  expect(response, `${request.method} ${request.path} documents ${status}`).toBeDefined();
  const media = (response!.content as Record<string, Json> | undefined)?.[contentType.split(';')[0]!.trim()];
  expect(media, `${request.method} ${request.path} ${status} documents ${contentType}`).toBeDefined();
  return media!.schema;
}

const validators = new WeakMap<Json, Map<string, ReturnType<typeof ajv.compile>>>();
function validatorOf(document: Json, schema: Json) {
  const known = validators.get(document) ?? new Map<string, ReturnType<typeof ajv.compile>>();
  validators.set(document, known);
  const key = JSON.stringify(schema);
  if (!known.has(key)) known.set(key, ajv.compile({ ...schema, components: document.components }));
  return known.get(key)!;
}

function expectValid(document: Json, example: RecordedExample) {
  const schema = responseSchema(document, example.request, example.status, example.contentType) as Json;
  const validate = validatorOf(document, schema);
  const valid = validate(example.response);
  expect(
    validate.errors ?? [],
    `${example.request.method} ${example.request.path} (${example.name}): the answer matches its schema`,
  ).toEqual([]);
  expect(valid).toBe(true);
}

function urlOf(prefix: string, request: ExampleRequest): string {
  const path = request.path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    encodeURIComponent(request.pathParams?.[name] ?? ''),
  );
  const query = new URLSearchParams(request.query ?? {}).toString();
  return `${prefix}${path}${query ? `?${query}` : ''}`;
}

async function send(
  app: FastifyInstance,
  prefix: string,
  request: ExampleRequest,
  extraHeaders: Record<string, string> = {},
) {
  const options: InjectOptions = {
    method: request.method,
    url: urlOf(prefix, request),
    headers: { ...request.headers, ...extraHeaders },
  };
  if (request.rawBody !== undefined) {
    options.payload = request.rawBody;
    options.headers = { ...options.headers, 'content-type': 'application/json' };
  } else if (request.body !== undefined) {
    options.payload = JSON.stringify(request.body);
    options.headers = { ...options.headers, 'content-type': 'application/json' };
  }
  const response = await app.inject(options);
  const contentType = String(response.headers['content-type'] ?? '');
  const body: unknown = contentType.includes('json') ? response.json() : response.body;
  return {
    status: response.statusCode,
    contentType: contentType.split(';')[0]!.trim(),
    body,
    headers: response.headers,
  };
}

const TODAY = new Date().toISOString().slice(0, 10);
/** Generated uuids: event and webhook ids (the statistics examples' fixed ids are checked by the requests' statuses). */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const BASE58_ID = /(?<![1-9A-Za-z])[1-9A-HJ-NP-Za-km-z]{24}(?![1-9A-Za-z])/g;
/**
 * What differs from one run to the next: timestamps, today's date, generated record ids (also inside ETags), a
 * problem's trace id, the random id of an imported file, seconds to wait, event and webhook uuids, signing secrets.
 */
function normalised(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (key === 'traceId' || key === 'file.id') return `<${key}>`;
    if (value.startsWith('whsec_')) return '<secret>';
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) return '<date-time>';
    if (value === TODAY) return '<today>';
    // The rate limit's message counts the window's remaining seconds.
    return value
      .replace(BASE58_ID, '<id>')
      .replace(UUID, '<uuid>')
      .replace(/requests per \d+ s exceeded; retry after [^.]*\./, 'requests per <n> s exceeded; retry after <time>.');
  }
  // Readiness reports the instance's event loop as measured at that moment.
  if (typeof value === 'number' && (key === 'eventLoopDelayMs' || key === 'eventLoopUtilization')) return `<${key}>`;
  if (Array.isArray(value)) return value.map((item) => normalised(item));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, normalised(v, key === 'file' ? `file.${k}` : k)]),
    );
  }
  return value;
}

function add(recorded: RecordedDocumentExamples, operationId: string, example: RecordedExample) {
  (recorded[operationId] ??= []).push(example);
}

/** Compares (or, with UPDATE_EXAMPLES, writes) what was recorded now with what the documents show. */
async function compareOrWrite(
  file: URL,
  actual: Record<string, RecordedDocumentExamples>,
  shown: Record<string, RecordedDocumentExamples>,
) {
  if (UPDATE) {
    await writeFile(file, `${JSON.stringify(actual, null, 2)}\n`);
    return;
  }
  expect(
    normalised(actual),
    'the documents show the answers the service gives (UPDATE_EXAMPLES=1 re-records them)',
  ).toEqual(normalised(shown));
}

async function served(app: FastifyInstance, url: string): Promise<Json> {
  const response = await app.inject({ method: 'GET', url });
  expect(response.statusCode).toBe(200);
  return response.json<Json>();
}

describe('statistics API examples', () => {
  let t: TestApp;
  let limited: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '100000' });
    // The service's default limit (the 429's message names it), reached by as many requests first.
    limited = await buildTestApp();
    await createDataSet(t.database.db, { id: EXAMPLE_DRAFT_DATA_SET_ID, title: 'A data set not yet published' });
    await importFixtureVersion(t.database, { dataSetId: EXAMPLE_DRAFT_DATA_SET_ID, version: '1.0', status: 'Draft' });
  });
  afterAll(async () => {
    await t?.close();
    await limited?.close();
  });

  it('every example request gets its documented status, a valid body and the answer the document shows', {
    timeout: 120_000,
  }, async () => {
    const document = await served(t.app, '/openapi.json');
    const recorded: RecordedDocumentExamples = {};
    for (const example of STATISTICS_EXAMPLES) {
      const {
        operationId: _id,
        name: _name,
        summary: _summary,
        status: _status,
        firstLines: _lines,
        firstCharacters: _characters,
        purgesEvents,
        ...request
      } = example;
      if (purgesEvents)
        await sequencePendingEvents(t.database.db).then(() =>
          purgeEvents(t.database.db, 0, new Date(Date.now() + 60_000)),
        );
      const answer = await send(t.app, '', request);
      expect
        .soft(answer.status, `${example.operationId} ${example.name}: ${JSON.stringify(answer.body).slice(0, 300)}`)
        .toBe(example.status);
      if (answer.status !== example.status) continue;
      let response = answer.body;
      if (example.firstLines && typeof response === 'string')
        response = `${response.split('\n').slice(0, example.firstLines).join('\n')}\n`;
      if (example.firstCharacters && typeof response === 'string')
        response = response.slice(0, example.firstCharacters);
      const entry: RecordedExample = {
        name: example.name,
        summary: example.summary,
        request: JSON.parse(JSON.stringify(request)),
        status: answer.status,
        contentType: answer.contentType,
        response,
      };
      if (!example.firstLines && !example.firstCharacters) expectValid(document, entry);
      add(recorded, example.operationId, entry);
    }
    // 403: the first example of every operation that documents it, on the draft data set (its version 1.0 named).
    for (const { path, method, operation } of operationsOf(document)) {
      if (!(operation.responses as Json)[403]) continue;
      const first = recorded[operation.operationId as string]![0]!.request;
      const pinned = first.pathParams?.dataSetVersion !== undefined;
      const request: ExampleRequest = {
        ...first,
        pathParams: {
          ...first.pathParams,
          dataSetId: EXAMPLE_DRAFT_DATA_SET_ID,
          ...(pinned ? { dataSetVersion: '1.0' } : {}),
        },
        ...(pinned || path === '/v1/data-sets/{dataSetId}' || path.endsWith('/versions')
          ? {}
          : { query: { ...first.query, dataSetVersion: '1.0' } }),
      };
      const answer = await send(t.app, '', request);
      expect.soft(answer.status, `${method} ${path} on a draft: ${JSON.stringify(answer.body)}`).toBe(403);
      if (answer.status !== 403) continue;
      const entry: RecordedExample = {
        name: 'not-available',
        summary: 'A data set or version not published yet (no preview token)',
        request,
        status: 403,
        contentType: answer.contentType,
        response: answer.body,
      };
      expectValid(document, entry);
      add(recorded, operation.operationId as string, entry);
    }
    // 429: past the service's default limit, for every operation that documents it.
    for (let sent = 0; sent < limited.config.RATE_LIMIT_STATISTICS_MAX; sent += 1)
      await limited.app.inject({ method: 'GET', url: '/v1/publications' });
    for (const { path, method, operation } of operationsOf(document)) {
      if (!(operation.responses as Json)[429]) continue;
      const first = recorded[operation.operationId as string]![0]!;
      const answer = await send(limited.app, '', first.request);
      expect(answer.status, `${method} ${path} past the limit`).toBe(429);
      const entry: RecordedExample = {
        name: 'rate-limited',
        summary: 'Past the rate limit (per IP)',
        request: first.request,
        status: 429,
        contentType: answer.contentType,
        response: answer.body,
      };
      expectValid(document, entry);
      add(recorded, operation.operationId as string, entry);
    }
    await compareOrWrite(STATISTICS_FILE, { statistics: recorded }, statisticsRecordedExamples());
  });
});

describe('register API examples', () => {
  let t: TestApp;
  let limited: TestApp;
  beforeAll(async () => {
    // The example receiver is on loopback (allowed by the test-only setting) and no worker runs: nothing is sent.
    const webhooks = { WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true' };
    t = await buildTestApp({ RATE_LIMIT_REGISTER_MAX: '100000', ...webhooks }, { webhookWorker: false });
    limited = await buildTestApp(webhooks, { webhookWorker: false });
  });
  afterAll(async () => {
    await t?.close();
    await limited?.close();
  });

  it('every example request of every version gets its documented status, a valid body and the answer the document shows', {
    timeout: 240_000,
  }, async () => {
    const all: Record<string, RecordedDocumentExamples> = {};
    for (const [index, version] of REGISTER_VERSIONS.entries()) {
      const prefix = `/api/${version}`;
      const document = await served(t.app, `${prefix}/openapi.json`);
      const provider = await createProviderWithToken(t.database.db, {
        ukprn: `1000000${index + 1}`,
        name: `Example Training Provider ${index + 1}`,
      });
      const saved: Record<string, string> = {};
      const recorded: RecordedDocumentExamples = {};
      const derivedFor = new Set<string>();
      const present = new Set(operationsOf(document).map((o) => o.operation.operationId as string));

      for (const example of examplesOf(version).filter((e) => present.has(e.operationId))) {
        const request = await resolve(t.app, prefix, provider.auth, example, version, saved);
        const operation = operationOf(document, request);
        // Derived errors first, while every record the request names exists: no token, an unknown id, a stale ETag.
        if (!derivedFor.has(example.operationId)) {
          derivedFor.add(example.operationId);
          for (const derived of derivedErrors(operation, request)) {
            const answer = await send(t.app, prefix, derived.request, derived.auth ? provider.auth : {});
            expect
              .soft(answer.status, `${version} ${example.operationId} ${derived.name}: ${JSON.stringify(answer.body)}`)
              .toBe(derived.status);
            if (answer.status !== derived.status) continue;
            const entry: RecordedExample = { ...derived, contentType: answer.contentType, response: answer.body };
            expectValid(document, entry);
            add(recorded, example.operationId, entry);
          }
        }
        if (example.before) await before(t, example.before, saved);
        const answer = await send(t.app, prefix, request, provider.auth);
        expect
          .soft(
            answer.status,
            `${version} ${example.operationId} ${example.name}: ${JSON.stringify(answer.body).slice(0, 600)}`,
          )
          .toBe(example.status);
        if (answer.status !== example.status) continue;
        const entry: RecordedExample = {
          name: example.name,
          summary: example.summary,
          request,
          status: answer.status,
          contentType: answer.contentType,
          response: answer.body,
        };
        if (answer.contentType) expectValid(document, entry);
        add(recorded, example.operationId, entry);
        if (example.saves) {
          const body = ((answer.body as Json).data ?? answer.body) as Json | Json[];
          // A list saves its first item's id (the delivery log, newest first).
          const data = Array.isArray(body) ? body[0]! : body;
          saved[example.saves] = String(data.placement_id ?? data.degree_id ?? data.trainee_id ?? data.id);
        }
      }
      // 429 for every operation: past the service's default limit (the message names it), reached by as many requests.
      const limitedProvider = await createProviderWithToken(limited.database.db, { ukprn: `1000000${index + 1}` });
      for (let sent = 0; sent < limited.config.RATE_LIMIT_REGISTER_MAX; sent += 1) {
        await limited.app.inject({ method: 'GET', url: `${prefix}/info`, headers: limitedProvider.auth });
      }
      for (const { operation } of operationsOf(document)) {
        if (!(operation.responses as Json)[429]) continue;
        const id = operation.operationId as string;
        const first = recorded[id]?.find((e) => e.status < 300);
        expect.soft(first, `${version} ${id} has an example`).toBeDefined();
        if (!first) continue;
        const answer = await send(limited.app, prefix, first.request, limitedProvider.auth);
        expect(answer.status, `${version} ${id} past the limit`).toBe(429);
        const entry: RecordedExample = {
          name: 'rate-limited',
          summary: 'Past the rate limit (per provider)',
          request: first.request,
          status: 429,
          contentType: answer.contentType,
          response: answer.body,
        };
        expectValid(document, entry);
        add(recorded, id, entry);
      }
      all[version] = recorded;
    }
    await compareOrWrite(REGISTER_FILE, all, registerRecordedExamples());
  });
});

/** What an example needs done first (see RegisterExample.before). */
async function before(t: TestApp, step: NonNullable<RegisterExample['before']>, saved: Record<string, string>) {
  // The events written so far get their positions first (the app's sequencer would within EVENTS_SEQUENCE_INTERVAL_MS).
  if (!('receiveTrn' in step)) await sequencePendingEvents(t.database.db);
  if ('receiveTrn' in step) await receiveTrn(t.database.db, saved[step.receiveTrn]!, step.trn);
  else if ('purgeEvents' in step) await purgeEvents(t.database.db, 0, new Date(Date.now() + 60_000));
  else {
    // The worker's fan-out alone (its send step never runs): deliveries are queued as the worker queues them.
    const worker = new WebhookWorker(t.database.db, {
      config: t.config,
      hub: t.app.events.hub,
      network: t.app.webhooks.network,
      policy: t.app.webhooks.policy,
      retentionDays: t.config.EVENTS_RETENTION_DAYS,
      apis: { statistics: statisticsEventApi, register: registerEventApi },
      log: console,
    });
    await worker.fanOut();
  }
}

function examplesOf(version: RegisterVersion): RegisterExample[] {
  return REGISTER_EXAMPLES.filter((e) => !e.versions || e.versions.includes(version));
}

function operationOf(document: Json, request: ExampleRequest): Json {
  return (document.paths as Record<string, Json>)[request.path]![request.method.toLowerCase()] as Json;
}

async function resolve(
  app: FastifyInstance,
  prefix: string,
  auth: Record<string, string>,
  example: RegisterExample,
  version: RegisterVersion,
  saved: Record<string, string>,
): Promise<ExampleRequest> {
  const { method, path } = registerOperation(example.operationId);
  const pathParams = Object.fromEntries(
    Object.entries(example.pathParams ?? {}).map(([k, v]) => [k, v.startsWith('$') ? saved[v.slice(1)]! : v]),
  );
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(example.headers ?? {})) {
    const etagOf = /^\$etag:(.+)$/.exec(value)?.[1];
    if (etagOf) {
      const current = await app.inject({ method: 'GET', url: `${prefix}/trainees/${saved[etagOf]}`, headers: auth });
      headers[name] = String(current.headers.etag);
    } else headers[name] = value;
  }
  const request: ExampleRequest = { method, path };
  if (Object.keys(pathParams).length) request.pathParams = pathParams;
  if (example.query) request.query = example.query;
  if (Object.keys(headers).length) request.headers = headers;
  if (example.body) request.body = example.body(version);
  if (example.rawBody !== undefined) request.rawBody = example.rawBody;
  return request;
}

/** The errors every operation can answer, made from its first example: 401 (a bad token), 404 (an unknown id), 412 (a stale ETag). */
function derivedErrors(
  operation: Json,
  request: ExampleRequest,
): Array<Omit<RecordedExample, 'contentType' | 'response'> & { auth: boolean }> {
  const responses = operation.responses as Json;
  const result: Array<Omit<RecordedExample, 'contentType' | 'response'> & { auth: boolean }> = [];
  const publicOperation = Array.isArray(operation.security) && operation.security.length === 0;
  if (!publicOperation && responses[401]) {
    result.push({
      name: 'bad-token',
      summary: 'A token that is missing, unknown, revoked or expired',
      request: { ...request, headers: { ...request.headers, Authorization: 'Bearer sandbox_not-a-token' } },
      status: 401,
      auth: false,
    });
  }
  const names = Object.keys(request.pathParams ?? {});
  if (responses[404] && names.length > 0) {
    const last = names[names.length - 1]!;
    const what = last.replace(/_id$/, '');
    result.push({
      name: `unknown-${what}`,
      summary: `An id no ${what} of this provider has`,
      request: { ...request, pathParams: { ...request.pathParams, [last]: UNKNOWN_ID } },
      status: 404,
      auth: true,
    });
  }
  if (responses[412]) {
    result.push({
      name: 'stale-etag',
      summary: 'If-Match with an ETag the trainee no longer has',
      request: { ...request, headers: { ...request.headers, 'If-Match': 'W/"stale"' } },
      status: 412,
      auth: true,
    });
  }
  return result;
}

describe('coverage', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Statuses no request can produce on demand or without a body: 204 and 304 have none; 503/504 need a database outage. */
  const NOT_SHOWN = ['204', '304', '503', '504'];

  it(`every operation of every document has request and response examples, counted in ${COUNT_FILE}`, {
    timeout: 60_000,
  }, async () => {
    let operations = 0;
    let covered = 0;
    const missing: string[] = [];
    for (const { file, url } of OPENAPI_DOCUMENTS) {
      const document = await served(t.app, url);
      const pathItems = document.paths as Record<string, Json>;
      for (const { path, method, operation } of operationsOf(document)) {
        operations += 1;
        const gaps: string[] = [];
        const parameters = [
          ...((pathItems[path]!.parameters as Json[]) ?? []),
          ...((operation.parameters as Json[]) ?? []),
        ];
        for (const p of parameters)
          if (p.in === 'path' && p.example === undefined) gaps.push(`path parameter ${String(p.name)}`);
        const body = ((operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.[
          'application/json'
        ];
        if (body && !body.examples) gaps.push('request body');
        for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
          if (NOT_SHOWN.includes(status)) continue;
          const shown = Object.values((response.content as Record<string, Json> | undefined) ?? {}).some(
            (m) => m.examples,
          );
          if (!shown) gaps.push(`response ${status}`);
        }
        if (!operation.operationId) gaps.push('operationId');
        if (!operation.description) gaps.push('description');
        if (gaps.length === 0) covered += 1;
        else missing.push(`${file} ${method.toUpperCase()} ${path}: ${gaps.join(', ')}`);
      }
    }
    expect(missing).toEqual([]);
    const line = `Operations with request and response examples: **${covered} of ${operations}**`;
    const text = await readFile(COUNT_FILE, 'utf8');
    if (UPDATE)
      await writeFile(
        COUNT_FILE,
        text.replace(/Operations with request and response examples: \*\*\d+ of \d+\*\*/, line),
      );
    else expect(text).toContain(line);
  });
});
