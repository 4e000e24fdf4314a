import zlib from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../../src/app.js';
import { loadConfig } from '../../../../src/config.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/database.js';
import { ABSENCE_SCHOOL, multiplyFixtureRows } from '../../../helpers/statistics.js';

/**
 * Query pages as a client receives them in each encoding it may ask for: a page over 512 KB (compressed in one call
 * off the event loop, http/compression.ts) and a small one (by the compression plugin) decode to the same JSON as
 * the plain page, with Content-Encoding, Content-Length and Vary as a cache needs them. The fixture version reads
 * from a view repeating its 216 rows 60 times, so a page of 10,000 rows is a JSON body of a few MB.
 */
let database: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase();
  await multiplyFixtureRows(database.db, 'many_rows', 60);
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, RATE_LIMIT_STATISTICS_MAX: '100000' });
  app = await buildApp(config, { db: database.db, logger: false });
  // Until the row index holds the values: before, a page's values are read from the view by row id, and the view
  // repeats every id 60 times.
  const deadline = Date.now() + 60000;
  while (((await page(10000, {})).json() as { results: unknown[] }).results.length !== 10000) {
    if (Date.now() > deadline) throw new Error('The row index did not load its values within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});
afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const decoders: Record<string, (body: Buffer) => Buffer> = {
  gzip: zlib.gunzipSync,
  br: zlib.brotliDecompressSync,
  deflate: zlib.inflateSync,
};

async function page(pageSize: number, headers: Record<string, string>) {
  return app.inject({
    method: 'GET',
    url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?pageSize=${pageSize}`,
    headers,
  });
}

describe.each([
  ['a page over 512 KB', 10000],
  ['a page of 100 rows', 100],
])('%s', (_name, pageSize) => {
  it.each([
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['deflate', 'deflate'],
    ['gzip, deflate, br', 'br'],
    ['deflate;q=1, gzip;q=0.5', 'deflate'],
  ])('Accept-Encoding: %s is answered in %s, the same JSON as the plain page', async (acceptEncoding, coding) => {
    const plain = await page(pageSize, { 'accept-encoding': 'identity' });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const json = JSON.parse(plain.body) as { results: unknown[]; paging: { totalResults: number } };
    expect(json.results).toHaveLength(pageSize);
    expect(json.paging.totalResults).toBe(216 * 60);
    if (pageSize === 10000) expect(plain.rawPayload.length).toBeGreaterThan(512 * 1024);

    const encoded = await page(pageSize, { 'accept-encoding': acceptEncoding });
    expect(encoded.statusCode).toBe(200);
    expect(encoded.headers['content-encoding']).toBe(coding);
    expect(encoded.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(String(encoded.headers.vary).toLowerCase()).toContain('accept-encoding');
    expect(encoded.headers['x-query-engine']).toBe(plain.headers['x-query-engine']);
    expect(Number(encoded.headers['content-length'])).toBe(encoded.rawPayload.length);
    expect(encoded.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(decoders[coding]!(encoded.rawPayload).equals(plain.rawPayload)).toBe(true);
  });

  it.each([
    ['no Accept-Encoding', {}],
    ['x-no-compression', { 'accept-encoding': 'gzip', 'x-no-compression': '1' }],
    ['an encoding the service does not make', { 'accept-encoding': 'zstd' }],
  ])('%s gets the plain page', async (_case, headers: Record<string, string>) => {
    const response = await page(pageSize, headers);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-encoding']).toBeUndefined();
    expect((JSON.parse(response.body) as { results: unknown[] }).results).toHaveLength(pageSize);
  });
});
