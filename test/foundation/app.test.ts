import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
