import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { statisticsErrorFormatter } from '../../src/statistics/errors.js';
import { acceptsGzip, chosenEncoding } from '../../src/http/downloads.js';
import { bindQuery, splitListValues } from '../../src/statistics/request-binding.js';
import { findStoredCsv, streamStoredCsvGzip } from '../../src/statistics/data-file/service.js';
import { parseVersionSelector, resolveDataSetVersion } from '../../src/statistics/versions/access.js';
import { ForbiddenError, NotFoundError } from '../../src/errors.js';
import { insertDataSet, insertPreviewToken, insertVersion } from './fixtures.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';

/** The OpenAPI description of endpoints 1–8 and 11, and the shared pieces' rules at their boundaries. */

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

const ENDPOINTS: Array<[string, string[], number[]]> = [
  ['/v1/publications', ['search', 'page', 'pageSize'], [200, 304, 400]],
  ['/v1/publications/{publicationId}', ['publicationId'], [200, 304, 400, 404]],
  ['/v1/publications/{publicationId}/data-sets', ['publicationId', 'page', 'pageSize'], [200, 304, 400, 404]],
  ['/v1/data-sets/{dataSetId}', ['dataSetId', 'preview-token'], [200, 304, 400, 403, 404]],
  ['/v1/data-sets/{dataSetId}/versions', ['dataSetId', 'page', 'pageSize', 'preview-token'], [200, 304, 400, 403, 404]],
  [
    '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}',
    ['dataSetId', 'dataSetVersion', 'preview-token'],
    [200, 304, 400, 403, 404],
  ],
  [
    '/v1/data-sets/{dataSetId}/versions/{dataSetVersion}/changes',
    ['dataSetId', 'dataSetVersion', 'includePatchHistory', 'preview-token'],
    [200, 304, 400, 403, 404],
  ],
  [
    '/v1/data-sets/{dataSetId}/meta',
    ['dataSetId', 'types', 'dataSetVersion', 'preview-token'],
    [200, 304, 400, 403, 404],
  ],
  ['/v1/data-sets/{dataSetId}/csv', ['dataSetId', 'dataSetVersion', 'preview-token'], [200, 304, 400, 403, 404]],
];

describe('OpenAPI', () => {
  it.each(ENDPOINTS)(
    'describes GET %s with its parameters, responses and error bodies',
    async (path, parameters, statuses) => {
      const doc = (await t.app.inject({ url: '/openapi.json' })).json();
      const operation = doc.paths[path]?.get;
      expect(operation, path).toBeDefined();
      expect(operation.operationId).toEqual(expect.any(String));
      expect(operation.parameters.map((p: { name: string }) => p.name).sort()).toEqual([...parameters].sort());
      expect(Object.keys(operation.responses).map(Number).sort()).toEqual([...statuses, 429, 504]);
      for (const status of statuses.filter((s) => s >= 400)) {
        const schema = operation.responses[status].content['application/problem+json'].schema;
        expect(schema.$ref).toBe(
          status === 400
            ? '#/components/schemas/ValidationProblemViewModel'
            : '#/components/schemas/ProblemDetailsViewModel',
        );
      }
      expect(operation.responses[200].description).not.toBe('Default Response');
    },
  );

  it('names the view models as components', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    for (const name of [
      'DataSetViewModel',
      'DataSetVersionViewModel',
      'DataSetMetaViewModel',
      'DataSetVersionChangesViewModel',
      'ValidationProblemViewModel',
    ]) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(doc.paths['/v1/data-sets/{dataSetId}/csv'].get.responses[200].content['text/csv']).toBeDefined();
  });
});

describe('query-string binding', () => {
  const schema = {
    type: 'object',
    properties: {
      types: { type: 'array', items: { type: 'string' } },
      page: { type: 'integer' },
      flag: { type: 'boolean' },
      'filters.eq': { type: 'string' },
    },
  };

  it('reads repeated keys, comma lists and indexed keys; trims; blank list elements are null', () => {
    expect(bindQuery({ types: ['a', 'b'] }, schema).values).toEqual({ types: ['a', 'b'] });
    expect(bindQuery({ types: 'a,,b' }, schema).values).toEqual({ types: ['a', 'b'] });
    expect(bindQuery({ 'types[1]': 'b', 'types[0]': 'a' }, schema).values).toEqual({ types: ['a', 'b'] });
    expect(bindQuery({ types: [' a ', ' '] }, schema).values).toEqual({ types: ['a', null] });
    expect(splitListValues([',a'])).toEqual([',a']);
  });

  it('parses integers and booleans, and keeps an empty nested scalar as ""', () => {
    expect(bindQuery({ page: ' 2 ', flag: 'TRUE', 'filters.eq': '' }, schema)).toEqual({
      values: { page: 2, flag: true, 'filters.eq': '' },
      errors: [],
    });
    expect(bindQuery({ page: '' }, schema).values).toEqual({});
    expect(
      bindQuery({ page: '1.5', flag: 'yes', other: 'x', 'page[0]': '1' }, schema).errors.map((e) => [e.path, e.code]),
    ).toEqual([
      ['other', 'UnknownField'],
      ['page[0]', 'UnknownField'],
      ['page', 'InvalidValue'],
      ['flag', 'InvalidValue'],
    ]);
  });
});

describe('version selectors', () => {
  it.each([
    ['1', { kind: 'exact', major: 1, minor: 0, patch: 0 }],
    ['v2.1', { kind: 'exact', major: 2, minor: 1, patch: 0 }],
    ['2.1.4', { kind: 'exact', major: 2, minor: 1, patch: 4 }],
    ['*', { kind: 'wildcard', major: undefined, minor: undefined }],
    ['1.*', { kind: 'wildcard', major: 1, minor: undefined }],
    ['1.*.*', { kind: 'wildcard', major: 1, minor: undefined }],
    ['1.2.*', { kind: 'wildcard', major: 1, minor: 2 }],
  ])('%s parses', (input, expected) => {
    expect(parseVersionSelector(input)).toEqual(expected);
  });

  // White space around a version is refused (docs/compatibility.md).
  it.each([
    'V1.1',
    ' v2.1 ',
    '1.0\n',
    '1.',
    '1.a',
    '1.1.1.1',
    '',
    ' ',
    '1.*.1',
    '*.1.0',
    '2.1*.0',
    '2.**.*',
    '1 . 2 . *',
    '*.*.*.*',
  ])('%j is not a version', (input) => {
    expect(parseVersionSelector(input)).toBeUndefined();
  });
});

describe('resolveDataSetVersion policies', () => {
  it('lets Withdrawn versions be viewed but not queried; Deprecated both; drafts only with their token', async () => {
    const db = t.database.db;
    const dataSetId = await insertDataSet(db, {
      publicationId: ABSENCE_SCHOOL.publicationId,
      title: 'Policies',
      status: 'Published',
    });
    await insertVersion(db, { dataSetId, version: '1.0', status: 'Deprecated' });
    await insertVersion(db, { dataSetId, version: '1.1', status: 'Withdrawn' });
    const draft = await insertVersion(db, { dataSetId, version: '1.2', status: 'Draft' });
    const token = await insertPreviewToken(db, draft.id, new Date(Date.now() + 60_000));

    // Omitted version: the latest live one (1.1, Withdrawn).
    expect((await resolveDataSetVersion(db, { dataSetId })).versionNumber).toBe('1.1');
    await expect(resolveDataSetVersion(db, { dataSetId, policy: 'query' })).rejects.toBeInstanceOf(ForbiddenError);
    expect(
      (await resolveDataSetVersion(db, { dataSetId, dataSetVersion: '1.0', policy: 'query' })).version.status,
    ).toBe('Deprecated');
    await expect(
      resolveDataSetVersion(db, { dataSetId, dataSetVersion: '1.2', policy: 'query' }),
    ).rejects.toBeInstanceOf(ForbiddenError);
    const viaToken = await resolveDataSetVersion(db, {
      dataSetId,
      dataSetVersion: '1.2',
      policy: 'query',
      previewToken: token,
    });
    expect(viaToken).toMatchObject({ versionNumber: '1.2', viaPreviewToken: true });
    // A query-string `*` is the latest live version; in a path it is a wildcard over Published versions (none here).
    expect((await resolveDataSetVersion(db, { dataSetId, dataSetVersion: '*' })).versionNumber).toBe('1.1');
    await expect(resolveDataSetVersion(db, { dataSetId, dataSetVersion: '*', source: 'path' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    await expect(resolveDataSetVersion(db, { dataSetId: 'nope' })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe('Ajv errors in the statistics shape', () => {
  function requestWith(schema: Record<string, unknown>, data: { query?: unknown; body?: unknown }) {
    return {
      id: 'trace-1',
      routeOptions: { schema },
      query: data.query ?? {},
      body: data.body,
      params: {},
      headers: {},
    } as unknown as FastifyRequest;
  }

  it('maps keywords to the reference codes with the bounds of the field', () => {
    const request = requestWith(
      {
        body: {
          type: 'object',
          properties: {
            pageSize: { type: 'integer', minimum: 1, maximum: 10000 },
            page: { type: 'integer', minimum: 1 },
            criteria: {
              type: 'object',
              properties: {
                filters: {
                  type: 'object',
                  properties: { in: { type: 'array', items: { type: 'string', maxLength: 10 } } },
                },
              },
            },
            sorts: {
              type: 'array',
              items: { type: 'object', properties: { direction: { type: 'string', enum: ['Desc', 'Asc'] } } },
            },
          },
        },
      },
      {
        body: {
          pageSize: 0,
          page: 0,
          criteria: { filters: { in: ['a', 'b', 'x'.repeat(11)] } },
          sorts: [{ direction: 'up' }],
        },
      },
    );
    const error = new ValidationError([
      { path: 'body/pageSize', code: 'minimum', message: 'must be >= 1', detail: { comparison: '>=', limit: 1 } },
      { path: 'body/page', code: 'minimum', message: 'must be >= 1', detail: { comparison: '>=', limit: 1 } },
      { path: 'body/criteria/filters/in/2', code: 'maxLength', message: 'too long', detail: { limit: 10 } },
      {
        path: 'body/sorts/0/direction',
        code: 'enum',
        message: 'must be equal to one of the allowed values',
        detail: {},
      },
    ]);
    const formatted = statisticsErrorFormatter(error, request);
    expect(formatted.status).toBe(400);
    expect((formatted.body as { errors: unknown[] }).errors).toEqual([
      {
        path: 'pageSize',
        code: 'InclusiveBetween',
        message: 'Must be between 1 and 10000 (inclusive).',
        detail: { from: 1, to: 10000, value: 0 },
      },
      {
        path: 'page',
        code: 'GreaterThanOrEqual',
        message: "Must be greater than or equal to '1'.",
        detail: { comparisonValue: 1, value: 0 },
      },
      {
        path: 'criteria.filters.in[2]',
        code: 'MaximumLength',
        message: 'Must be 10 characters or fewer (was 11).',
        detail: { maxLength: 10, totalLength: 11, value: 'x'.repeat(11) },
      },
      {
        path: 'sorts[0].direction',
        code: 'AllowedValue',
        message: 'Must be one of the allowed values.',
        detail: { value: 'up', allowed: ['Asc', 'Desc'] },
      },
    ]);
  });

  it('reports only binding errors when there are any (unknown members, wrong types)', () => {
    const request = requestWith(
      { body: { type: 'object', properties: { page: { type: 'integer', minimum: 1 } } } },
      { body: { page: 0, extra: 1 } },
    );
    const error = new ValidationError([
      { path: 'body/page', code: 'minimum', message: 'x', detail: { limit: 1 } },
      { path: 'body/extra', code: 'additionalProperties', message: 'x', detail: { additionalProperty: 'extra' } },
    ]);
    expect((statisticsErrorFormatter(error, request).body as { errors: unknown[] }).errors).toEqual([
      {
        path: 'extra',
        code: 'UnknownField',
        message: 'The field was not expected in the request and should be removed.',
      },
    ]);
  });

  it('keeps errors of our own codes as they are, and omits an empty path', () => {
    const error = new ValidationError([
      { path: '', code: 'NotEmptyBody', message: 'The request body must not be empty.' },
      { path: 'body', code: 'InvalidJson', message: 'The request body is not valid JSON.' },
    ]);
    expect((statisticsErrorFormatter(error, requestWith({}, {})).body as { errors: unknown[] }).errors).toEqual([
      { code: 'NotEmptyBody', message: 'The request body must not be empty.' },
      { code: 'InvalidValue', message: 'Must be a valid value. Check that the type and format are correct.' },
    ]);
  });

  it('writes other problems as ProblemDetails without internals for a 500', async () => {
    const { AppError } = await import('../../src/errors.js');
    const formatted = statisticsErrorFormatter(
      new AppError(500, 'Internal Server Error', 'secret stack'),
      requestWith({}, {}),
    );
    expect(formatted.body).toEqual({
      type: 'https://tools.ietf.org/html/rfc9110#section-15.6.1',
      title: 'Internal Server Error',
      status: 500,
      traceId: 'trace-1',
    });
  });
});

describe('CSV streaming', () => {
  it('reads the stored gzip in slices that reassemble into the original file', async () => {
    const version = await t.database.db
      .selectFrom('data_set_versions')
      .select('id')
      .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
      .executeTakeFirstOrThrow();
    const file = await findStoredCsv(t.database.db, version.id);
    const chunks: Buffer[] = [];
    for await (const chunk of streamStoredCsvGzip(t.database.db, file, 1000)) chunks.push(chunk as Buffer);
    expect(chunks.length).toBe(Math.ceil(file.gzipBytes / 1000));
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(1000);
    expect(gunzipSync(Buffer.concat(chunks)).toString('utf8')).toBe(await readFile(ABSENCE_SCHOOL.dataPath, 'utf8'));
  });

  it.each([
    ['gzip', true],
    ['gzip;q=0', false],
    ['br, *;q=0.1', true],
    ['identity', false],
    ['br', false],
    [undefined, false],
    ['x-gzip', true],
    ['*;q=0', false],
  ])('Accept-Encoding %s → gzip %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });

  it.each([
    ['gzip, deflate, br', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['gzip;q=1, br;q=0.5', 'gzip'],
    ['*', 'br'],
    ['identity', null],
    ['gzip;q=0, br;q=0', null],
    [undefined, null],
  ])('Accept-Encoding %s → a body kept as br and gzip is sent as %s', (header, expected) => {
    expect(chosenEncoding(header, ['br', 'gzip'])).toBe(expected);
  });
});
