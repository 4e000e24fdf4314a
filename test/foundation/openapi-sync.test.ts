import { readFile } from 'node:fs/promises';
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

describe('committed OpenAPI documents', () => {
  it.each(OPENAPI_DOCUMENTS.map(({ file, url }) => [file, url]))(
    'openapi/%s is what the app serves at %s (run `npm run openapi` after changing routes)',
    async (file, url) => {
      const served = await t.app.inject({ method: 'GET', url });
      expect(served.statusCode).toBe(200);
      const committed = JSON.parse(await readFile(`openapi/${file}`, 'utf8'));
      expect(served.json()).toEqual(committed);
    },
  );

  it('names shared schemas as components instead of def-N', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.components.schemas).filter((name) => name.startsWith('def-'))).toEqual([]);
  });
});
