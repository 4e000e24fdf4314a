import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL, createDataSet, fixtureVersion, importFixtureVersion } from '../helpers/statistics.js';
import { readParquetCopyBytes } from '../../src/statistics/storage/parquet-repository.js';
import { insertPreviewToken, insertVersion } from './fixtures.js';

/**
 * `GET /v1/data-sets/{id}/parquet`: the version's Parquet copy, whole or one byte range of it, with the CSV
 * download's access rules; bad ranges and a version without a copy answered in the problem format.
 */

let t: TestApp;
const FIXTURE = ABSENCE_SCHOOL.dataSetId;
let copy: Buffer;
let drafts: string;
let draftToken: string;
let withoutCopy: string;

async function get(url: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url, headers });
}

beforeAll(async () => {
  t = await buildTestApp();
  const db = t.database.db;
  copy = (await readParquetCopyBytes(db, (await fixtureVersion(db)).id))!;
  // A data set whose 2.0 is a Draft (imported: it has a copy), reachable with a preview token.
  drafts = await createDataSet(db, { status: 'Published' });
  await importFixtureVersion(t.database, { dataSetId: drafts, version: '1.0' });
  const draft = await importFixtureVersion(t.database, { dataSetId: drafts, version: '2.0', status: 'Draft' });
  draftToken = await insertPreviewToken(db, draft.versionId, new Date(Date.now() + 3600_000));
  // A version made without the importer: no Parquet copy.
  withoutCopy = await createDataSet(db, { status: 'Published' });
  await insertVersion(db, { dataSetId: withoutCopy, version: '1.0', status: 'Published' });
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/data-sets/{dataSetId}/parquet', () => {
  it('sends the whole copy with its SHA-256 as a strong ETag, never re-compressed', async () => {
    const res = await get(`/v1/data-sets/${FIXTURE}/parquet`, { 'accept-encoding': 'gzip, br' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.apache.parquet');
    expect(res.headers['accept-ranges']).toBe('bytes');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.headers['content-disposition']).toContain(`attachment; filename=${FIXTURE}_v1.0.parquet`);
    expect(Number(res.headers['content-length'])).toBe(copy.length);
    expect(res.headers.etag).toBe(`"${createHash('sha256').update(copy).digest('hex')}"`);
    expect(res.rawPayload.equals(copy)).toBe(true);
    expect(res.rawPayload.subarray(0, 4).toString()).toBe('PAR1');
  });

  it('answers one range with 206 and Content-Range, a suffix range too', async () => {
    const first = await get(`/v1/data-sets/${FIXTURE}/parquet`, { range: 'bytes=0-99' });
    expect(first.statusCode).toBe(206);
    expect(first.headers['content-range']).toBe(`bytes 0-99/${copy.length}`);
    expect(first.headers['content-length']).toBe('100');
    expect(first.rawPayload.equals(copy.subarray(0, 100))).toBe(true);
    const footer = await get(`/v1/data-sets/${FIXTURE}/parquet`, { range: 'bytes=-8' });
    expect(footer.statusCode).toBe(206);
    expect(footer.headers['content-range']).toBe(`bytes ${copy.length - 8}-${copy.length - 1}/${copy.length}`);
    expect(footer.rawPayload.equals(copy.subarray(copy.length - 8))).toBe(true);
    // A range past the end is cut at the end.
    const tail = await get(`/v1/data-sets/${FIXTURE}/parquet`, {
      range: `bytes=${copy.length - 3}-${copy.length + 1000}`,
    });
    expect(tail.statusCode).toBe(206);
    expect(tail.rawPayload.toString()).toBe('AR1');
  });

  it('answers a range that starts past the end with 416 in the problem format', async () => {
    const res = await get(`/v1/data-sets/${FIXTURE}/parquet`, { range: `bytes=${copy.length}-` });
    expect(res.statusCode).toBe(416);
    expect(res.headers['content-range']).toBe(`bytes */${copy.length}`);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 416, title: 'Range Not Satisfiable', traceId: expect.any(String) });
  });

  it('sends the whole file for several ranges, a malformed range, or an If-Range of another file', async () => {
    const cases: Array<Record<string, string>> = [
      { range: 'bytes=0-9,20-29' },
      { range: 'lines=1-2' },
      { range: 'bytes=0-9', 'if-range': '"another"' },
    ];
    for (const headers of cases) {
      const res = await get(`/v1/data-sets/${FIXTURE}/parquet`, headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(200);
      expect(res.rawPayload.equals(copy)).toBe(true);
    }
    const etag = (await get(`/v1/data-sets/${FIXTURE}/parquet`)).headers.etag as string;
    expect((await get(`/v1/data-sets/${FIXTURE}/parquet`, { range: 'bytes=0-9', 'if-range': etag })).statusCode).toBe(
      206,
    );
  });

  it('304s a matching If-None-Match, answers HEAD with the headers only', async () => {
    const etag = (await get(`/v1/data-sets/${FIXTURE}/parquet`)).headers.etag as string;
    const cached = await get(`/v1/data-sets/${FIXTURE}/parquet`, { 'if-none-match': etag });
    expect(cached.statusCode).toBe(304);
    expect(cached.body).toBe('');
    const head = await t.app.inject({ method: 'HEAD', url: `/v1/data-sets/${FIXTURE}/parquet` });
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect((await get(`/v1/data-sets/${FIXTURE}/parquet`)).statusCode).toBe(200);
  });

  it("follows the CSV download's access rules: drafts with a preview token only, 404s in the problem format", async () => {
    expect((await get(`/v1/data-sets/${drafts}/parquet`)).headers['content-disposition']).toContain('_v1.0.parquet');
    expect((await get(`/v1/data-sets/${drafts}/parquet?dataSetVersion=2.0`)).statusCode).toBe(403);
    const preview = await get(`/v1/data-sets/${drafts}/parquet?dataSetVersion=2.0`, { 'preview-token': draftToken });
    expect(preview.statusCode).toBe(200);
    expect(preview.headers['content-disposition']).toContain('_v2.0.parquet');
    expect(preview.headers['cache-control']).toBe('private, no-cache');
    const missing = await get(`/v1/data-sets/${withoutCopy}/parquet`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({
      status: 404,
      title: 'Not Found',
      detail: 'The Parquet file of this version is not available.',
    });
    expect((await get(`/v1/data-sets/${FIXTURE}/parquet?dataSetVersion=9.0`)).statusCode).toBe(404);
    expect((await get('/v1/data-sets/x/parquet')).statusCode).toBe(404);
    expect((await get(`/v1/data-sets/${FIXTURE}/parquet?format=csv`)).statusCode).toBe(400);
  });

  it('is in the OpenAPI document with its ranges', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const operation = doc.paths['/v1/data-sets/{dataSetId}/parquet'].get;
    expect(operation.operationId).toBe('DownloadDataSetParquet');
    expect(Object.keys(operation.responses).sort()).toEqual([
      '200',
      '206',
      '304',
      '400',
      '403',
      '404',
      '416',
      '429',
      '504',
    ]);
    expect(operation.responses[200].content['application/vnd.apache.parquet']).toBeDefined();
    expect(operation.parameters.map((p: { name: string }) => p.name).sort()).toEqual([
      'dataSetId',
      'dataSetVersion',
      'if-range',
      'preview-token',
      'range',
    ]);
  });
});
