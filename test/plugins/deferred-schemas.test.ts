import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deferredSchemaCompilers, referencedSchemas } from '../../src/plugins/deferred-schemas.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * Route schemas are compiled on first use, not at start: requests are validated and answers serialized exactly as
 * with Fastify's own compilers, and compiling what is left (what the server does once listening) compiles every
 * schema of the whole service without error, each request schema checked against the JSON Schema meta-schema (which
 * the server skips).
 */
describe('deferred route schemas', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({}, { checkRouteSchemas: true });
  });
  afterAll(async () => {
    await t.close();
  });

  it('validate requests and serialize answers on first use, and all of them compile', async () => {
    const refused = await t.app.inject({ method: 'GET', url: '/v1/publications?page=0&pageSize=1000' });
    expect(refused.statusCode).toBe(400);
    expect(
      refused
        .json()
        .errors.map((e: { path: string }) => e.path)
        .sort(),
    ).toEqual(['page', 'pageSize']);
    const listed = await t.app.inject({ method: 'GET', url: '/v1/publications?page=1&pageSize=1' });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().paging).toMatchObject({ page: 1, pageSize: 1 });

    const compiled = await t.app.compileDeferredSchemas();
    // Two requests compiled their own already; the service has hundreds more (both APIs, every prefix and version).
    expect(compiled).toBeGreaterThan(100);
    expect(await t.app.compileDeferredSchemas()).toBe(0);
  });

  it('give a response schema the shared schemas it refers to, directly or through one another, and no others', () => {
    const shared = {
      Page: {
        $id: 'Page',
        type: 'object',
        properties: { results: { type: 'array', items: { $ref: 'Row' } }, paging: { $ref: 'Paging#/properties/page' } },
      },
      Row: { $id: 'Row', type: 'object', properties: { location: { $ref: 'Location' }, self: { $ref: 'Row' } } },
      Location: { $id: 'Location', type: 'string' },
      Paging: { $id: 'Paging', type: 'object', properties: { page: { type: 'integer' } } },
      Unused: { $id: 'Unused', type: 'string' },
    };
    const response = { type: 'object', properties: { page: { $ref: 'Page' }, local: { $ref: '#/properties/page' } } };
    expect(Object.keys(referencedSchemas(response, shared)).sort()).toEqual(['Location', 'Page', 'Paging', 'Row']);
    expect(referencedSchemas({ type: 'string' }, shared)).toEqual({});
  });

  it('check request schemas against the meta-schema only when asked to', async () => {
    const route = { schema: { querystring: { type: 'object', properties: { n: { type: 'string', minLength: -1 } } } } };
    for (const checkRouteSchemas of [true, false]) {
      const schemas = deferredSchemaCompilers();
      const app = Fastify({
        schemaController: { compilersFactory: schemas.compilersFactory },
        ajv: { customOptions: { validateSchema: checkRouteSchemas, strict: false } },
      });
      app.get('/n', route, async () => ({ ok: true }));
      try {
        await app.ready();
        if (checkRouteSchemas) await expect(schemas.compileAll()).rejects.toThrow(/schema is invalid/);
        else expect(await schemas.compileAll()).toBe(1);
      } finally {
        await app.close();
      }
    }
  });

  it('match header names in any case, as Fastify does, and report what is wrong', async () => {
    const schemas = deferredSchemaCompilers();
    const app = Fastify({ schemaController: { compilersFactory: schemas.compilersFactory } });
    app.get(
      '/h',
      {
        schema: {
          headers: {
            type: 'object',
            properties: { 'X-Thing': { type: 'string', pattern: '^a+$' } },
            required: ['X-Thing'],
          },
        },
      },
      async () => ({ ok: true }),
    );
    app.post(
      '/b',
      {
        schema: {
          body: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
          response: { 200: { type: 'object', properties: { n: { type: 'integer' } } } },
        },
      },
      async (request) => ({ n: (request.body as { n: number }).n, dropped: 1 }),
    );
    try {
      expect((await app.inject({ url: '/h', headers: { 'x-thing': 'aaa' } })).statusCode).toBe(200);
      const missing = await app.inject({ url: '/h' });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().message).toMatch(/must have required property 'x-thing'/);
      expect((await app.inject({ url: '/h', headers: { 'x-thing': 'b' } })).json().message).toMatch(
        /must match pattern/,
      );
      const bad = await app.inject({ method: 'POST', url: '/b', payload: { n: 'x' } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toBe('body/n must be integer');
      // The response schema drops what it does not list, as fast-json-stringify does.
      expect((await app.inject({ method: 'POST', url: '/b', payload: { n: 2 } })).body).toBe('{"n":2}');
    } finally {
      await app.close();
    }
  });
});
