import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { insertDataSet, insertPreviewToken, insertPublication, insertSmallMeta, insertVersion } from './fixtures.js';

/**
 * Endpoints 1–7 over a catalogue of our own (inserted here): visibility, 403/404, paging, version resolution,
 * preview tokens, caching headers and the statistics error shapes.
 */

let t: TestApp;
let baselinePublications: number;
const ids = {} as Record<string, string>;
const tokens = {} as Record<string, string>;
const HOUR = 3600_000;

async function get(url: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url, headers });
}

beforeAll(async () => {
  t = await buildTestApp();
  const db = t.database.db;
  baselinePublications = (await get('/v1/publications?pageSize=40')).json().paging.totalResults;

  ids.absencePub = await insertPublication(db, {
    title: 'Zeta pupil absence in schools',
    summary: 'Pupil absence, including authorised and unauthorised absence.',
  });
  ids.apprenticePub = await insertPublication(db, {
    title: 'Zeta apprenticeships',
    summary: 'Starts and achievements by provider.',
  });
  ids.draftOnlyPub = await insertPublication(db, { title: 'Zeta drafts only', summary: 'Nothing is published.' });
  ids.withdrawnOnlyPub = await insertPublication(db, {
    title: 'Zeta withdrawn only',
    summary: 'Everything was withdrawn.',
  });

  // A published data set with a version history and a draft.
  ids.main = await insertDataSet(db, {
    publicationId: ids.absencePub,
    title: 'Absence by school',
    status: 'Published',
  });
  await insertVersion(db, {
    dataSetId: ids.main,
    version: '1.0',
    status: 'Published',
    published: '2024-01-01T09:30:00Z',
  });
  await insertVersion(db, {
    dataSetId: ids.main,
    version: '1.1',
    status: 'Published',
    published: '2024-06-01T09:30:00Z',
  });
  const v2 = await insertVersion(db, {
    dataSetId: ids.main,
    version: '2.0',
    status: 'Published',
    published: '2025-01-01T09:30:00Z',
    totalResults: 216,
  });
  ids.mainFile = v2.file_id;
  await insertSmallMeta(db, v2.id);
  const draft = await insertVersion(db, { dataSetId: ids.main, version: '2.1', status: 'Draft' });
  tokens.mainDraft = await insertPreviewToken(db, draft.id, new Date(Date.now() + HOUR));
  tokens.mainDraftExpired = await insertPreviewToken(
    db,
    draft.id,
    new Date(Date.now() - HOUR),
    new Date(Date.now() - 2 * HOUR),
  );

  ids.deprecated = await insertDataSet(db, {
    publicationId: ids.absencePub,
    title: 'Absence (old series)',
    status: 'Deprecated',
    supersedingDataSetId: ids.main,
  });
  await insertVersion(db, {
    dataSetId: ids.deprecated,
    version: '1.0',
    status: 'Deprecated',
    published: '2023-01-01T09:30:00Z',
  });

  ids.draftDs = await insertDataSet(db, {
    publicationId: ids.absencePub,
    title: 'Absence (coming soon)',
    status: 'Draft',
  });
  const draftOnly = await insertVersion(db, { dataSetId: ids.draftDs, version: '1.0', status: 'Draft' });
  tokens.draftDs = await insertPreviewToken(db, draftOnly.id, new Date(Date.now() + HOUR));

  ids.withdrawn = await insertDataSet(db, {
    publicationId: ids.absencePub,
    title: 'Absence (withdrawn)',
    status: 'Withdrawn',
  });
  await insertVersion(db, {
    dataSetId: ids.withdrawn,
    version: '1.0',
    status: 'Withdrawn',
    published: '2022-01-01T09:30:00Z',
    withdrawn: '2022-06-01T09:30:00Z',
  });

  ids.apprentice = await insertDataSet(db, {
    publicationId: ids.apprenticePub,
    title: 'Provider starts',
    status: 'Published',
  });
  await insertVersion(db, {
    dataSetId: ids.apprentice,
    version: '1.0',
    status: 'Published',
    published: '2022-11-24T09:30:00Z',
  });

  const onlyDraft = await insertDataSet(db, { publicationId: ids.draftOnlyPub, title: 'Not yet', status: 'Draft' });
  await insertVersion(db, { dataSetId: onlyDraft, version: '1.0', status: 'Draft' });
  const onlyWithdrawn = await insertDataSet(db, {
    publicationId: ids.withdrawnOnlyPub,
    title: 'Gone',
    status: 'Withdrawn',
  });
  await insertVersion(db, {
    dataSetId: onlyWithdrawn,
    version: '1.0',
    status: 'Withdrawn',
    published: '2021-01-01T00:00:00Z',
  });

  // Wildcards: 1.0–1.2 and 3.0.0–3.0.2 Published; 2.0 Deprecated and 2.1 Withdrawn (never matched by a wildcard).
  ids.wild = await insertDataSet(db, { publicationId: ids.apprenticePub, title: 'Wildcards', status: 'Published' });
  for (const [version, status] of [
    ['1.0', 'Published'],
    ['1.1', 'Published'],
    ['1.2', 'Published'],
    ['2.0', 'Deprecated'],
    ['2.1', 'Withdrawn'],
    ['3.0.0', 'Published'],
    ['3.0.2', 'Published'],
    ['3.0.1', 'Published'],
    ['4.0', 'Draft'],
  ] as const) {
    await insertVersion(db, { dataSetId: ids.wild, version, status });
  }
});

afterAll(async () => {
  await t?.close();
});

describe('GET /v1/publications', () => {
  it('lists publications with a Published data set, by title, with paging and lastPublished', async () => {
    const res = await get('/v1/publications?pageSize=40');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.paging).toEqual({ page: 1, pageSize: 40, totalResults: baselinePublications + 2, totalPages: 1 });
    const mine = body.results.filter((p: { title: string }) => p.title.startsWith('Zeta'));
    expect(mine.map((p: { title: string }) => p.title)).toEqual([
      'Zeta apprenticeships',
      'Zeta pupil absence in schools',
    ]);
    const absence = mine[1];
    expect(absence).toEqual({
      id: ids.absencePub,
      title: 'Zeta pupil absence in schools',
      slug: expect.any(String),
      summary: 'Pupil absence, including authorised and unauthorised absence.',
      // The latest publication of any public version of its data sets (2.0 of the main data set).
      lastPublished: '2025-01-01T09:30:00.000Z',
    });
  });

  it('searches title and summary (full text, prefixes)', async () => {
    const res = await get('/v1/publications?search=unauthorised%20absen');
    expect(res.statusCode).toBe(200);
    const titles = res.json().results.map((p: { title: string }) => p.title);
    expect(titles).toContain('Zeta pupil absence in schools');
    expect(titles).not.toContain('Zeta apprenticeships');
    const none = await get('/v1/publications?search=xylophone');
    expect(none.json()).toEqual({ paging: { page: 1, pageSize: 20, totalResults: 0, totalPages: 1 }, results: [] });
  });

  it('pages: default size 20, a page past the end is empty', async () => {
    const res = await get('/v1/publications?page=99&pageSize=1');
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([]);
    expect(res.json().paging).toMatchObject({ page: 99, pageSize: 1, totalResults: baselinePublications + 2 });
    expect((await get('/v1/publications')).json().paging.pageSize).toBe(20);
  });

  it.each([
    [
      'pageSize=0',
      'pageSize',
      'InclusiveBetween',
      'Must be between 1 and 40 (inclusive).',
      { from: 1, to: 40, value: 0 },
    ],
    [
      'pageSize=-1',
      'pageSize',
      'InclusiveBetween',
      'Must be between 1 and 40 (inclusive).',
      { from: 1, to: 40, value: -1 },
    ],
    [
      'pageSize=41',
      'pageSize',
      'InclusiveBetween',
      'Must be between 1 and 40 (inclusive).',
      { from: 1, to: 40, value: 41 },
    ],
    ['page=0', 'page', 'GreaterThanOrEqual', "Must be greater than or equal to '1'.", { comparisonValue: 1, value: 0 }],
    [
      'page=-1',
      'page',
      'GreaterThanOrEqual',
      "Must be greater than or equal to '1'.",
      { comparisonValue: 1, value: -1 },
    ],
    [
      'search=a',
      'search',
      'MinimumLength',
      'Must be at least 3 characters (was 1).',
      { minLength: 3, totalLength: 1, value: 'a' },
    ],
    [
      'search=aa',
      'search',
      'MinimumLength',
      'Must be at least 3 characters (was 2).',
      { minLength: 3, totalLength: 2, value: 'aa' },
    ],
  ])('?%s is a 400 %s %s', async (query, path, code, message, detail) => {
    const res = await get(`/v1/publications?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toEqual({
      type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
      title: 'One or more validation errors occurred.',
      status: 400,
      errors: [{ path, code, message, detail }],
      traceId: expect.any(String),
    });
  });

  it('reports unknown and unreadable parameters only (binding errors are not mixed with rule errors)', async () => {
    const res = await get('/v1/publications?foo=1&owner.name=x&page=abc&pageSize=99');
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([
      {
        path: 'foo',
        code: 'UnknownField',
        message: 'The field was not expected in the request and should be removed.',
      },
      {
        path: 'owner.name',
        code: 'UnknownField',
        message: 'The field was not expected in the request and should be removed.',
      },
      {
        path: 'page',
        code: 'InvalidValue',
        message: 'Must be a valid value. Check that the type and format are correct.',
        detail: { value: 'abc' },
      },
    ]);
  });
});

describe('GET /v1/publications/{publicationId}', () => {
  it('returns a publication with a published data set', async () => {
    const res = await get(`/v1/publications/${ids.apprenticePub}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      id: ids.apprenticePub,
      title: 'Zeta apprenticeships',
      lastPublished: '2024-01-01T09:30:00.000Z',
    });
  });

  it.each([
    ['only Draft data sets', 'draftOnlyPub'],
    ['only Withdrawn data sets', 'withdrawnOnlyPub'],
  ])('is 404 for a publication with %s', async (_label, key) => {
    const res = await get(`/v1/publications/${ids[key]}`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({
      type: 'https://tools.ietf.org/html/rfc9110#section-15.5.5',
      title: 'Not Found',
      status: 404,
    });
  });

  it('is 404 for an unknown or non-uuid id, and 400 for a query parameter', async () => {
    expect((await get('/v1/publications/7e1b0a36-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await get('/v1/publications/not-a-uuid')).statusCode).toBe(404);
    const res = await get(`/v1/publications/${ids.apprenticePub}?dataSetVersion=1.0`);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([expect.objectContaining({ path: 'dataSetVersion', code: 'UnknownField' })]);
  });
});

describe('GET /v1/publications/{publicationId}/data-sets', () => {
  it('lists Published and Deprecated data sets, newest live version first, with latestVersion', async () => {
    const res = await get(`/v1/publications/${ids.absencePub}/data-sets`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.paging).toEqual({ page: 1, pageSize: 10, totalResults: 2, totalPages: 1 });
    expect(body.results.map((d: { id: string }) => d.id)).toEqual([ids.main, ids.deprecated]);
    expect(body.results[0]).toEqual({
      id: ids.main,
      title: 'Absence by school',
      summary: 'Absence by school summary',
      status: 'Published',
      latestVersion: {
        version: '2.0',
        published: '2025-01-01T09:30:00.000Z',
        totalResults: 216,
        file: { id: ids.mainFile },
        timePeriods: { start: '2020/21', end: '2021/22' },
        geographicLevels: ['Local authority', 'National'],
        filters: ['Academy type', 'School type'],
        indicators: ['Enrolments', 'Number of possible sessions'],
      },
    });
    expect(body.results[1]).toMatchObject({
      status: 'Deprecated',
      supersedingDataSetId: ids.main,
      latestVersion: { version: '1.0' },
    });
  });

  it('pages (default 10, 1–20) and is empty for a publication without visible data sets', async () => {
    const page2 = await get(`/v1/publications/${ids.absencePub}/data-sets?page=2&pageSize=1`);
    expect(page2.json()).toMatchObject({ paging: { page: 2, pageSize: 1, totalResults: 2, totalPages: 2 } });
    expect(page2.json().results.map((d: { id: string }) => d.id)).toEqual([ids.deprecated]);
    expect((await get(`/v1/publications/${ids.absencePub}/data-sets?page=2&pageSize=2`)).json().results).toEqual([]);
    expect((await get(`/v1/publications/${ids.draftOnlyPub}/data-sets`)).json()).toEqual({
      paging: { page: 1, pageSize: 10, totalResults: 0, totalPages: 1 },
      results: [],
    });
    const bad = await get(`/v1/publications/${ids.absencePub}/data-sets?pageSize=21`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([
      {
        path: 'pageSize',
        code: 'InclusiveBetween',
        message: 'Must be between 1 and 20 (inclusive).',
        detail: { from: 1, to: 20, value: 21 },
      },
    ]);
  });
});

describe('GET /v1/data-sets/{dataSetId}', () => {
  it('returns a Published data set with its latest live version (not the draft)', async () => {
    const res = await get(`/v1/data-sets/${ids.main}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: ids.main, status: 'Published', latestVersion: { version: '2.0' } });
    expect(res.json()).not.toHaveProperty('supersedingDataSetId');
  });

  it('returns a Deprecated data set', async () => {
    expect((await get(`/v1/data-sets/${ids.deprecated}`)).statusCode).toBe(200);
  });

  it.each([
    ['Draft', 'draftDs'],
    ['Withdrawn', 'withdrawn'],
  ])('is 403 for a %s data set', async (_status, key) => {
    const res = await get(`/v1/data-sets/${ids[key]}`);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({
      type: 'https://tools.ietf.org/html/rfc9110#section-15.5.4',
      title: 'Forbidden',
      status: 403,
    });
  });

  it('shows a Draft data set with a preview token for its draft version (no latestVersion yet)', async () => {
    const res = await get(`/v1/data-sets/${ids.draftDs}`, { 'preview-token': tokens.draftDs! });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      id: ids.draftDs,
      title: 'Absence (coming soon)',
      summary: 'Absence (coming soon) summary',
      status: 'Draft',
    });
    expect(res.headers['cache-control']).toBe('private, no-cache');
    // Another data set's token, or a token that is not a uuid, grants nothing.
    expect((await get(`/v1/data-sets/${ids.draftDs}`, { 'preview-token': tokens.mainDraft! })).statusCode).toBe(403);
    expect((await get(`/v1/data-sets/${ids.draftDs}`, { 'preview-token': 'nonsense' })).statusCode).toBe(403);
  });

  it('is 404 for an unknown or non-uuid id (before checking query parameters), 400 for a query parameter', async () => {
    expect((await get('/v1/data-sets/6a0c0d4e-1111-4222-8333-944455556666')).statusCode).toBe(404);
    expect((await get('/v1/data-sets/123?foo=bar')).statusCode).toBe(404);
    const res = await get(`/v1/data-sets/${ids.main}?dataSetVersion=1.0`);
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([expect.objectContaining({ path: 'dataSetVersion', code: 'UnknownField' })]);
  });
});

describe('GET /v1/data-sets/{dataSetId}/versions', () => {
  it('lists public versions newest first (major, minor, patch) with the version fields', async () => {
    const res = await get(`/v1/data-sets/${ids.wild}/versions`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.paging).toEqual({ page: 1, pageSize: 10, totalResults: 8, totalPages: 1 });
    expect(body.results.map((v: { version: string }) => v.version)).toEqual([
      '3.0.2',
      '3.0.1',
      '3.0',
      '2.1',
      '2.0',
      '1.2',
      '1.1',
      '1.0',
    ]);
    expect(body.results.map((v: { type: string }) => v.type)).toEqual([
      'Patch',
      'Patch',
      'Major',
      'Minor',
      'Major',
      'Minor',
      'Minor',
      'Major',
    ]);
    expect(body.results[3]).toMatchObject({ version: '2.1', status: 'Withdrawn' });
  });

  it('pages (3 per page)', async () => {
    const page1 = (await get(`/v1/data-sets/${ids.wild}/versions?pageSize=3`)).json();
    const page2 = (await get(`/v1/data-sets/${ids.wild}/versions?pageSize=3&page=2`)).json();
    expect(page1.results.map((v: { version: string }) => v.version)).toEqual(['3.0.2', '3.0.1', '3.0']);
    expect(page2.results.map((v: { version: string }) => v.version)).toEqual(['2.1', '2.0', '1.2']);
    expect(page2.paging).toEqual({ page: 2, pageSize: 3, totalResults: 8, totalPages: 3 });
  });

  it('includes the draft only with a valid preview token', async () => {
    const without = (await get(`/v1/data-sets/${ids.main}/versions`)).json();
    expect(without.results.map((v: { version: string }) => v.version)).toEqual(['2.0', '1.1', '1.0']);
    const withToken = (await get(`/v1/data-sets/${ids.main}/versions`, { 'preview-token': tokens.mainDraft! })).json();
    expect(withToken.results.map((v: { version: string }) => v.version)).toEqual(['2.1', '2.0', '1.1', '1.0']);
    expect(withToken.results[0]).toMatchObject({ status: 'Draft', type: 'Minor' });
    expect(withToken.results[0]).not.toHaveProperty('published');
    const expired = (
      await get(`/v1/data-sets/${ids.main}/versions`, { 'preview-token': tokens.mainDraftExpired! })
    ).json();
    expect(expired.paging.totalResults).toBe(3);
  });

  it('is 403 for Draft and Withdrawn data sets, 404 for unknown ones, 400 for bad paging', async () => {
    expect((await get(`/v1/data-sets/${ids.draftDs}/versions`)).statusCode).toBe(403);
    expect((await get(`/v1/data-sets/${ids.withdrawn}/versions`)).statusCode).toBe(403);
    expect((await get('/v1/data-sets/6a0c0d4e-1111-4222-8333-944455556666/versions')).statusCode).toBe(404);
    const bad = await get(`/v1/data-sets/${ids.main}/versions?pageSize=21&page=0`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: { path: string; code: string }) => [e.path, e.code])).toEqual([
      ['page', 'GreaterThanOrEqual'],
      ['pageSize', 'InclusiveBetween'],
    ]);
  });
});

describe('GET /v1/data-sets/{dataSetId}/versions/{dataSetVersion}', () => {
  it('returns an exact version with every field', async () => {
    const res = await get(`/v1/data-sets/${ids.main}/versions/2.0`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      version: '2.0',
      type: 'Major',
      status: 'Published',
      published: '2025-01-01T09:30:00.000Z',
      notes: 'Notes of 2.0',
      totalResults: 216,
      file: { id: ids.mainFile },
      timePeriods: { start: '2020/21', end: '2021/22' },
      geographicLevels: ['Local authority', 'National'],
      filters: ['Academy type', 'School type'],
      indicators: ['Enrolments', 'Number of possible sessions'],
      release: { title: 'Release of 2.0', slug: 'release-2-0' },
    });
  });

  it.each([
    ['1.*', '1.2'],
    ['1', '1.0'],
    ['v1.1', '1.1'],
    ['3.0', '3.0'],
    ['3.0.*', '3.0.2'],
    ['3.*', '3.0.2'],
    ['*', '3.0.2'],
    ['v*', '3.0.2'],
    ['2.1', '2.1'],
  ])('resolves %s to %s', async (selector, expected) => {
    const res = await get(`/v1/data-sets/${ids.wild}/versions/${encodeURIComponent(selector)}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().version).toBe(expected);
  });

  it('shows a Withdrawn version with its withdrawn time', async () => {
    const res = await get(`/v1/data-sets/${ids.withdrawn}/versions/1.0`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'Withdrawn', withdrawn: '2022-06-01T09:30:00.000Z' });
  });

  it.each(['2.*', '2.0.*', '4.*', '7.*', '1.3.*', '1.*.1', '*.1.0', '2.1*.0', '2.**.*', '1.', '1.a', '1.1.1.1', '5.0'])(
    '%s is 404 (no Published match, or not a version)',
    async (selector) => {
      const res = await get(`/v1/data-sets/${ids.wild}/versions/${encodeURIComponent(selector)}`);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ status: 404, title: 'Not Found' });
    },
  );

  it('is 403 for a draft version unless the preview token is for it and active; a wildcard never picks it', async () => {
    expect((await get(`/v1/data-sets/${ids.main}/versions/2.1`)).statusCode).toBe(403);
    expect(
      (await get(`/v1/data-sets/${ids.main}/versions/2.1`, { 'preview-token': tokens.mainDraftExpired! })).statusCode,
    ).toBe(403);
    expect((await get(`/v1/data-sets/${ids.main}/versions/2.1`, { 'preview-token': tokens.draftDs! })).statusCode).toBe(
      403,
    );
    const ok = await get(`/v1/data-sets/${ids.main}/versions/2.1`, { 'preview-token': tokens.mainDraft! });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ version: '2.1', status: 'Draft' });
    const wildcard = await get(`/v1/data-sets/${ids.main}/versions/2.*`, { 'preview-token': tokens.mainDraft! });
    expect(wildcard.json().version).toBe('2.0');
  });

  it('redirects capitalised paths with 308 to the lower-case path, keeping the query', async () => {
    const res = await get(`/v1/Data-Sets/${ids.main!.toUpperCase()}/versions/V1.0?x=Y`);
    expect(res.statusCode).toBe(308);
    expect(res.headers.location).toBe(`/v1/data-sets/${ids.main}/versions/v1.0?x=Y`);
    const prefix = await get(`/V1/Publications?page=1`);
    expect(prefix.statusCode).toBe(308);
    expect(prefix.headers.location).toBe('/v1/publications?page=1');
  });
});

describe('caching', () => {
  it('sends ETag and Cache-Control, and 304 for a matching If-None-Match', async () => {
    const first = await get(`/v1/data-sets/${ids.main}`);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^W\/".+"$/);
    expect(first.headers['cache-control']).toBe('public, max-age=300, must-revalidate');
    expect(first.headers.vary).toContain('preview-token');
    const again = await get(`/v1/data-sets/${ids.main}`, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    expect((await get(`/v1/data-sets/${ids.main}`, { 'if-none-match': 'W/"other"' })).statusCode).toBe(200);
    // Different content, different tag.
    expect((await get(`/v1/data-sets/${ids.deprecated}`)).headers.etag).not.toBe(etag);
  });

  it('names each header a compressed answer varies on once', async () => {
    const compressed = await get(`/v1/data-sets/${ids.main}/versions`, { 'accept-encoding': 'gzip' });
    expect(compressed.headers['content-encoding']).toBe('gzip');
    // The compression plugin added `accept-encoding` beside our `Accept-Encoding`.
    const names = String(compressed.headers.vary)
      .split(',')
      .map((name) => name.trim().toLowerCase());
    expect(names.sort()).toEqual(['accept-encoding', 'preview-token']);
  });
});

describe('unknown paths', () => {
  it('answers unknown /v1 paths with a 404 problem', async () => {
    const res = await get('/v1/nothing-here');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 404, title: 'Not Found', traceId: expect.any(String) });
    expect(res.headers['api-supported-versions']).toBe('1.0');
    expect((await get('/v1/publications')).headers['api-supported-versions']).toBe('1.0');
  });
});
