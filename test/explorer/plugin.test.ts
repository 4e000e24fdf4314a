import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildExplorerAssets, readExplorerAssets, writeExplorerAssets } from '../../src/explorer/build.js';
import { explorerPlugin } from '../../src/explorer/plugin.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/** The explorer's page and files, served by the app at the root scope (fastify inject; no browser needed). */
describe('explorer plugin', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers / and its deep links with the page shell, a CSP of its own and no caching', async () => {
    for (const url of [
      '/',
      '/?search=pupil',
      '/publications/638482b6-d015-4798-a1a4-e2311253b3e1',
      '/data-sets/9eee125b-5538-49b8-aa49-4fda877b5e57',
      '/data-sets/9eee125b-5538-49b8-aa49-4fda877b5e57/query?timePeriods.in=2020/2021|AY',
    ]) {
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.headers['cache-control']).toBe('no-cache');
      expect(response.headers['content-security-policy']).toContain("default-src 'self'");
      expect(response.headers['content-security-policy']).toContain("script-src 'self'");
      expect(response.body).toContain('<main class="govuk-main-wrapper" id="main-content"');
      // Offline: nothing is loaded from another origin.
      expect(response.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  it('answers HEAD like GET without a body', async () => {
    const response = await t.app.inject({ method: 'HEAD', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.body).toBe('');
  });

  it('serves the hashed bundle and stylesheet, compressed when asked, cached for a year', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/' });
    const script = /src="\/assets\/(explorer-[0-9a-f]{8}\.js)"/.exec(page.body)![1]!;
    const stylesheet = /href="\/assets\/(explorer-style-[0-9a-f]{8}\.css)"/.exec(page.body)![1]!;
    const js = await t.app.inject({ method: 'GET', url: `/assets/${script}`, headers: { 'accept-encoding': 'gzip' } });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    // The main script is small: the pages' code is in chunks it imports, which the page preloads.
    const preloads = [...page.body.matchAll(/<link rel="modulepreload" href="\/assets\/([^"]+)">/g)].map((m) => m[1]!);
    expect(preloads.length).toBeGreaterThan(0);
    let code = gunzipSync(js.rawPayload).toString();
    for (const name of preloads) {
      const chunk = await t.app.inject({ method: 'GET', url: `/assets/${name}` });
      expect(chunk.statusCode, name).toBe(200);
      expect(chunk.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(code, 'the main script imports it').toContain(`./${name}`);
      code += chunk.body;
    }
    expect(code).toContain('/v1/data-sets/');
    const css = await t.app.inject({ method: 'GET', url: `/assets/${stylesheet}` });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['content-encoding']).toBeUndefined();
    expect(css.body).toContain('.govuk-template');
    // Set in Arial: the GDS Transport typeface is for gov.uk alone, so neither its name nor its files are used.
    expect(css.body).toContain('font-family:arial,sans-serif');
    expect(css.body).not.toMatch(/GDS Transport|\/assets\/fonts\//);
    // The GOV.UK images the stylesheet points at are served.
    const images = css.body.match(/\/assets\/images\/[^)"']+/g) ?? [];
    for (const image of images) expect((await t.app.inject({ method: 'GET', url: image })).statusCode, image).toBe(200);
  });

  it('loads the query builder, chart and table CSV code only where they are used', async () => {
    const preloadsOf = async (url: string) =>
      [
        ...(await t.app.inject({ method: 'GET', url })).body.matchAll(
          /<link rel="modulepreload" href="\/assets\/([^"]+)">/g,
        ),
      ].map((m) => m[1]!);
    const find = await preloadsOf('/');
    const query = await preloadsOf('/data-sets/9eee125b-5538-49b8-aa49-4fda877b5e57/query');
    expect(find.some((name) => name.startsWith('query-'))).toBe(false);
    expect(query.filter((name) => name.startsWith('query-'))).toHaveLength(1);
    expect(query).toEqual(expect.arrayContaining(find));
    // The chart and the CSV writer: not preloaded even on the query page, fetched when a chart or CSV is made.
    expect([...find, ...query].some((name) => /^(chart|crosstab-csv)-/.test(name))).toBe(false);
    const queryCode = (
      await t.app.inject({ method: 'GET', url: `/assets/${query.find((name) => name.startsWith('query-'))}` })
    ).body;
    expect(queryCode).toMatch(/import\("\.\/chart-[A-Z0-9]+\.js"\)/);
    expect(queryCode).toMatch(/import\("\.\/crosstab-csv-[A-Z0-9]+\.js"\)/);
  });

  it('answers 404 problem details for a file it does not have', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/assets/nothing.js' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toContain('application/problem+json');
  });

  it('leaves the APIs as they are: no explorer CSP on /v1 or /api, the statistics CORS unchanged', async () => {
    const stats = await t.app.inject({
      method: 'GET',
      url: '/v1/publications',
      headers: { origin: 'https://example.org' },
    });
    expect(stats.statusCode).toBe(200);
    expect(stats.headers['access-control-allow-origin']).toBe('*');
    expect(stats.headers['content-security-policy']).toBeUndefined();
    const register = await t.app.inject({ method: 'GET', url: '/api/v2026.1/info' });
    expect(register.statusCode).toBe(401);
    expect(register.headers['content-security-policy']).toBeUndefined();
    // Not a page of the explorer: still the app's 404.
    const other = await t.app.inject({ method: 'GET', url: '/publications' });
    expect(other.statusCode).toBe(404);
  });

  it('serves the explorer built ahead (`npm run build` writes it beside the bundled server) exactly as built at start', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'explorer-built-'));
    try {
      expect(await readExplorerAssets(dir), 'nothing built there yet').toBeUndefined();
      const built = await buildExplorerAssets();
      await writeExplorerAssets(dir, built);
      const read = await readExplorerAssets(dir);
      expect(read).toEqual(built);
      const app = Fastify({ logger: false });
      await app.register(explorerPlugin, { assets: read });
      const script = await app.inject({
        method: 'GET',
        url: `/assets/${built.script}`,
        headers: { 'accept-encoding': 'br' },
      });
      expect(script.statusCode).toBe(200);
      expect(script.headers['content-encoding']).toBe('br');
      expect(script.rawPayload.equals(built.files.get(built.script)!.br!)).toBe(true);
      expect((await app.inject({ method: 'GET', url: '/data-sets/x/query' })).body).toBe(
        built.queryHtml.body.toString(),
      );
      await app.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
