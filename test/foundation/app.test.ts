import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_DOCUMENTS } from '../../src/app.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

describe('health', () => {
  it('is live', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health/live' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });

  it('is ready when the database answers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health/ready' });
    expect(res.statusCode).toBe(200);
    // With the instance's load (nothing else in progress).
    expect(res.json()).toEqual({
      status: 'ok',
      load: {
        inFlight: 0,
        eventLoopDelayMs: expect.any(Number),
        eventLoopUtilization: expect.any(Number),
        poolWaiting: 0,
      },
    });
  });

  it('echoes a request id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/health/live', headers: { 'x-request-id': 'abc-123' } });
    expect(res.headers['x-request-id']).toBe('abc-123');
  });
});

describe('problem details', () => {
  it('answers an unknown route with a 404 problem', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nowhere' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const body = res.json();
    expect(body).toMatchObject({ status: 404, title: 'Not Found' });
    expect(typeof body.type).toBe('string');
    expect(typeof body.traceId).toBe('string');
  });
});

describe('OpenAPI', () => {
  it('serves an OpenAPI 3.1 document', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.paths['/health/ready']).toBeDefined();
    expect(doc.components.schemas.Problem).toBeDefined();
  });

  it.each(OPENAPI_DOCUMENTS.map(({ url }) => url))(
    '%s: one entity tag, 304 when the client holds it, the same bytes brotli- or gzip-compressed',
    async (url) => {
      const plain = await t.app.inject({ url });
      expect(plain.statusCode).toBe(200);
      expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
      const etag = String(plain.headers.etag);
      expect(etag).toMatch(/^W\/".+"$/);
      const held = await t.app.inject({ url, headers: { 'if-none-match': etag } });
      expect(held.statusCode).toBe(304);
      expect(held.body).toBe('');
      const br = await t.app.inject({ url, headers: { 'accept-encoding': 'br, gzip' } });
      expect(br.headers['content-encoding']).toBe('br');
      expect(br.headers.etag).toBe(etag);
      expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
      const gzip = await t.app.inject({ url, headers: { 'accept-encoding': 'gzip' } });
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(gzip.rawPayload).toString()).toBe(plain.body);
    },
  );

  it('serves the interactive reference page from local assets', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).not.toMatch(/https?:\/\/(cdn|unpkg|cdnjs)/);
    const asset = await t.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
    expect(asset.statusCode).toBe(200);
  });
});

describe('router errors', () => {
  it('answers an over-long path parameter with a 414 problem', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/v1/data-sets/${'a'.repeat(600)}` });
    expect(res.statusCode).toBe(414);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 414, title: 'URI Too Long' });
  });
});
