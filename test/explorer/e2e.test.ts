import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { FastifyInstance } from 'fastify';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { seedCatalogue } from '../../src/statistics/seed/service.js';
import { formatValue } from '../../src/explorer/client/format.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { chromiumAvailable, launchChromium, MISSING_CHROMIUM_MESSAGE } from './browser.js';

/** "Pupil characteristics - Ethnicity and Language" (seed/catalog.json): versions 1.0, 1.1 and 2.0. */
const ETHNICITY = '9eee125b-5538-49b8-aa49-4fda877b5e57';
// The screenshots linked from the README are refreshed with UPDATE_SCREENSHOTS=1; an ordinary run writes its own
// under .test-data/ (ignored), so running the suite leaves the checkout unchanged.
const SCREENSHOTS = path.resolve(
  import.meta.dirname,
  process.env.UPDATE_SCREENSHOTS === '1' ? '../../docs/explorer' : '../../.test-data/explorer-screenshots',
);
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// Without a browser the test cannot run: a developer machine skips it with the reason, CI fails with it.
const inCi = process.env.CI === 'true' || process.env.CI === '1';
const skip = !chromiumAvailable() && !inCi;
if (skip) console.warn(`Skipping the explorer's browser tests: ${MISSING_CHROMIUM_MESSAGE}`);

const run = promisify(execFile);

function hasPythonRequests(): boolean {
  try {
    execFileSync('python3', ['-c', 'import requests'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Meta {
  filters: Array<{ id: string; label: string; options: Array<{ id: string; label: string }> }>;
  indicators: Array<{ id: string; label: string; unit?: string; decimalPlaces?: number }>;
  geographicLevels: Array<{ code: string; label: string }>;
  locations: Array<{ level: { code: string; label: string }; options: Array<{ id: string; label: string }> }>;
  timePeriods: Array<{ code: string; period: string; label: string }>;
}
interface Row {
  timePeriod: { period: string; code: string };
  geographicLevel: string;
  locations: Record<string, string>;
  filters: Record<string, string>;
  values: Record<string, string>;
}

/** Serious or critical accessibility violations on the page as it is now (axe-core, WCAG 2.x A/AA rules). */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: unknown): Promise<{ violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }> }> } }).axe;
    return axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function ready(page: Page): Promise<void> {
  await page.waitForSelector('main[data-ready]');
}

async function tableCells(page: Page): Promise<string[][]> {
  return page.$$eval('table[data-results] tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? '')));
}

describe.skipIf(skip)('explorer in headless Chromium', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let base: string;
  let context: BrowserContext;
  let closeBrowser: () => Promise<void>;
  const offOrigin: string[] = [];

  beforeAll(async () => {
    if (!chromiumAvailable()) throw new Error(MISSING_CHROMIUM_MESSAGE);
    database = await createTestDatabase();
    await seedCatalogue(database, { dataSetIds: [ETHNICITY] });
    const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url });
    app = await buildApp(config, { db: database.db, pools: { primary: database.pool }, logger: false });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    ({ context, close: closeBrowser } = await launchChromium());
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    context.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(base) && !url.startsWith('blob:') && !url.startsWith('data:')) offOrigin.push(url);
    });
    mkdirSync(SCREENSHOTS, { recursive: true });
  }, 180000);

  afterAll(async () => {
    await closeBrowser?.();
    await app?.close();
    await database?.drop();
  });

  it('finds the ethnicity data set, builds a query and shows the same rows as the API in table, chart, CSV, GET URL and permalink', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));

    // Find: the front page, then a search for "pupil".
    await page.goto(`${base}/`);
    await ready(page);
    await expect(page.locator('h1').textContent()).resolves.toBe('Find education statistics data');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, '1-find.png'), fullPage: true });

    await page.getByLabel('Search publications').fill('pupil');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(`${base}/?search=pupil`);
    await ready(page);
    await expect(page.locator('#results-heading').textContent()).resolves.toMatch(/publications? matching “pupil”/);
    const publications = await page.$$eval('.app-result h3', (hs) => hs.map((e) => e.textContent));
    expect(publications).toContain('Schools, pupils and their characteristics');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, '2-search.png'), fullPage: true });

    // A publication's own page (its title links there) lists its data sets too.
    const publicationPage = await context.newPage();
    await publicationPage.goto((await page.getByRole('link', { name: 'Schools, pupils and their characteristics' }).getAttribute('href', { timeout: 5000 }))!.replace(/^\//, `${base}/`));
    await ready(publicationPage);
    await expect(publicationPage.locator('h1').textContent()).resolves.toBe('Schools, pupils and their characteristics');
    expect(await publicationPage.getByRole('link', { name: 'Pupil characteristics - Ethnicity and Language' }).count()).toBe(1);
    expect(await seriousViolations(publicationPage)).toEqual([]);
    await publicationPage.screenshot({ path: path.join(SCREENSHOTS, '2-publication.png'), fullPage: true });
    await publicationPage.close();

    // The data set page: versions and their changes in words.
    await page.getByRole('link', { name: 'Pupil characteristics - Ethnicity and Language' }).click();
    await page.waitForURL(`${base}/data-sets/${ETHNICITY}`);
    await ready(page);
    expect(await page.$$eval('[data-version]', (s) => s.map((e) => e.getAttribute('data-version')))).toEqual(['2.0', '1.1', '1.0']);
    await expect(page.locator('[data-version="2.0"] [data-changes="major"]').textContent()).resolves.toContain('Removed option “Pupil referral unit” of filter “School type”.');
    await expect(page.locator('[data-version="1.1"] [data-changes="minor"]').textContent()).resolves.toContain('Added time period “2021/22”.');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, '3-data-set.png'), fullPage: true });

    // Build the query: 2 time periods, 2 local authorities, 1 filter option, 2 indicators.
    await page.getByRole('button', { name: 'Build a query' }).click();
    await page.waitForURL(`${base}/data-sets/${ETHNICITY}/query`);
    await ready(page);
    await page.getByLabel('2020/21', { exact: true }).check();
    await page.getByLabel('2021/22', { exact: true }).check();
    await page.getByLabel(/^Local authority \(/).check();
    await page.getByLabel('Search local authority locations').fill('barn');
    await page.getByLabel('Barnet', { exact: true }).check();
    await page.getByLabel('Barnsley', { exact: true }).check();
    await page.getByLabel('White - Irish', { exact: true }).check();
    await page.getByLabel('Headcount', { exact: true }).check();
    await page.getByLabel('Percent', { exact: true }).check();

    // The API's answer to the same query, built here from the metadata's labels.
    const meta = (await (await fetch(`${base}/v1/data-sets/${ETHNICITY}/meta`)).json()) as Meta;
    const la = meta.locations.find((g) => g.level.code === 'LA')!.options;
    const ethnicity = meta.filters.find((f) => f.label === 'Ethnicity')!;
    const headcount = meta.indicators.find((i) => i.label === 'Headcount')!;
    const percent = meta.indicators.find((i) => i.label === 'Percent')!;
    const body = {
      criteria: {
        timePeriods: { in: [{ period: '2020/2021', code: 'AY' }, { period: '2021/2022', code: 'AY' }] },
        geographicLevels: { in: ['LA'] },
        locations: { in: ['Barnet', 'Barnsley'].map((label) => ({ level: 'LA', id: la.find((o) => o.label === label)!.id })) },
        filters: { in: [ethnicity.options.find((o) => o.label === 'White - Irish')!.id] },
      },
      indicators: [headcount.id, percent.id],
      page: 1,
      pageSize: 20,
    };
    const api = (await (await fetch(`${base}/v1/data-sets/${ETHNICITY}/query`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as {
      paging: { totalResults: number };
      results: Row[];
    };
    expect(api.paging.totalResults).toBeGreaterThan(4);
    expect(api.paging.totalResults).toBeLessThanOrEqual(20);

    // The live count (one POST with pageSize=1) follows the choices.
    await expect.poll(() => page.locator('[data-count]').getAttribute('data-count')).toBe(String(api.paging.totalResults));
    await page.getByLabel('Search local authority locations').fill('');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, '4-query-builder.png'), fullPage: true });

    await page.getByRole('button', { name: 'Show results' }).click();
    await page.waitForSelector('table[data-results] tbody tr');

    const optionLabel = (filterId: string, optionId: string) => meta.filters.find((f) => f.id === filterId)!.options.find((o) => o.id === optionId)!.label;
    const expected = api.results.map((row) => [
      meta.timePeriods.find((t) => t.period === row.timePeriod.period && t.code === row.timePeriod.code)!.label,
      meta.geographicLevels.find((l) => l.code === row.geographicLevel)!.label,
      la.find((o) => o.id === row.locations.LA)!.label,
      ...meta.filters.map((f) => optionLabel(f.id, row.filters[f.id]!)),
      formatValue(row.values[headcount.id], headcount),
      formatValue(row.values[percent.id], percent),
    ]);
    const shown = await tableCells(page);
    expect(shown).toEqual(expected);
    const headers = await page.$$eval('table[data-results] thead th', (ths) => ths.map((th) => th.querySelector('button')?.childNodes[0]?.textContent ?? th.textContent));
    expect(headers).toEqual(['Time period', 'Geographic level', 'Location', ...meta.filters.map((f) => f.label), 'Headcount', 'Percent']);

    // The chart: a line over the 2 periods, one series per chosen location, named in the legend.
    await page.waitForSelector('[data-chart] svg');
    expect(await page.locator('[data-chart]').getAttribute('data-kind')).toBe('line');
    expect(await page.locator('[data-chart] svg [data-series]').count()).toBe(2);
    const legend = await page.$$eval('.app-chart-legend__item', (items) => items.map((i) => i.textContent?.trim()));
    expect(legend.map((l) => l?.replace(/ \((circle|square)\)$/, '')).sort()).toEqual(['Barnet', 'Barnsley']);
    expect(await seriousViolations(page)).toEqual([]);
    await page.locator('#results-heading').scrollIntoViewIfNeeded();
    await page.evaluate(() => document.getElementById('results-heading')!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '5-table.png') });
    await page.evaluate(() => document.querySelector('[data-chart]')!.parentElement!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '6-chart.png') });
    // The bar chart across the locations for one period: still one series (bar) per location.
    await page.getByLabel('Bars for one period').check();
    expect(await page.locator('[data-chart]').getAttribute('data-kind')).toBe('bar');
    expect(await page.locator('[data-chart] svg.app-chart [data-series]').count()).toBe(2);
    await page.screenshot({ path: path.join(SCREENSHOTS, '6-chart-bars.png') });
    await page.getByLabel('Line over time').check();

    // The copied GET URL returns the same rows as the API's POST.
    await page.locator('.app-code-block', { has: page.locator('[data-code="get-url"]') }).getByRole('button', { name: 'Copy' }).click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await page.locator('[data-code="get-url"]').textContent());
    expect(copied.startsWith(`${base}/v1/data-sets/${ETHNICITY}/query?`)).toBe(true);
    const viaGet = (await (await fetch(copied)).json()) as { paging: { totalResults: number }; results: Row[] };
    expect(viaGet.results).toEqual(api.results);

    // The CSV download holds the same rows (labels in the CSV, ids in the JSON).
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download all matching rows (CSV)' }).click()]);
    const csv = parse(readFileSync((await download.path())!, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    const csvRows = csv.map((r) => [r.time_period, r.geographic_level, r['Local authority'], r.Ethnicity, r['First language'], r['School type'], r.Headcount, r.Percent].join(' | ')).sort();
    const getRows = viaGet.results
      .map((row) => [
        meta.timePeriods.find((t) => t.period === row.timePeriod.period)!.label,
        'Local authority',
        la.find((o) => o.id === row.locations.LA)!.label,
        ...['Ethnicity', 'First language', 'School type'].map((label) => {
          const filter = meta.filters.find((f) => f.label === label)!;
          return optionLabel(filter.id, row.filters[filter.id]!);
        }),
        row.values[headcount.id],
        row.values[percent.id],
      ].join(' | '))
      .sort();
    expect(csvRows).toEqual(getRows);

    // The code snippets run as shown and answer the same rows (curl always; Python when requests is installed).
    await expect(page.locator('[data-code="r"]').textContent()).resolves.toContain(`query_dataset(\n  "${ETHNICITY}",`);
    for (const snippet of ['curl-get', 'curl-post']) {
      const line = (await page.locator(`[data-code="${snippet}"]`).textContent())!;
      // Asynchronously: the server answering it runs in this process.
      const answer = JSON.parse((await run('sh', ['-c', line], { encoding: 'utf8' })).stdout) as { results: Row[] };
      expect(answer.results, snippet).toEqual(api.results);
    }
    const python = (await page.locator('[data-code="python"]').textContent())!;
    if (hasPythonRequests()) {
      const output = (await run('python3', ['-c', python], { encoding: 'utf8' })).stdout;
      expect(output.split('\n')[0]).toBe(`${api.paging.totalResults} rows`);
      expect(output.trimEnd().split('\n')).toHaveLength(api.paging.totalResults + 1);
    }
    await page.evaluate(() => document.getElementById('code-heading')!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '7-code.png') });

    // The permalink restores the same choices and table in a fresh page.
    const permalink = await page.locator('#permalink').inputValue();
    const restored = await context.newPage();
    await restored.goto(permalink);
    await ready(restored);
    await restored.waitForSelector('table[data-results] tbody tr');
    expect(await tableCells(restored)).toEqual(shown);
    expect(await restored.getByRole('checkbox', { name: 'Barnsley', exact: true }).isChecked()).toBe(true);
    expect(await restored.getByRole('checkbox', { name: 'White - Irish', exact: true }).isChecked()).toBe(true);
    expect(await seriousViolations(restored)).toEqual([]);

    // Readable at 320 px wide: nothing but the table's own scroll box is wider than the screen.
    await restored.setViewportSize({ width: 320, height: 900 });
    const overflow = await restored.evaluate(() => document.documentElement.scrollWidth);
    expect(overflow).toBeLessThanOrEqual(320);
    expect(await seriousViolations(restored)).toEqual([]);
    await restored.evaluate(() => window.scrollTo(0, 0));
    await restored.screenshot({ path: path.join(SCREENSHOTS, '8-query-320px.png') });
    // The chart is redrawn for the narrow width (its axis text keeps its size).
    await expect.poll(() => restored.locator('[data-chart] svg.app-chart').getAttribute('viewBox')).toMatch(/^0 0 (2[89]\d|3[0-2]\d) /);
    await restored.evaluate(() => document.querySelector('[data-chart]')!.scrollIntoView());
    await restored.screenshot({ path: path.join(SCREENSHOTS, '9-chart-320px.png') });

    // Sorting by the API's sorts: headcount ascending reorders the table as the API does.
    await restored.getByRole('button', { name: /^Headcount/ }).click();
    await expect.poll(() => restored.locator('th[aria-sort="ascending"]').textContent()).toContain('Headcount');
    const sorted = (await (await fetch(`${base}/v1/data-sets/${ETHNICITY}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, sorts: [{ field: `indicator|${headcount.id}`, direction: 'Asc' }] }),
    })).json()) as { results: Row[] };
    expect((await tableCells(restored)).map((c) => c[6])).toEqual(sorted.results.map((r) => formatValue(r.values[headcount.id], headcount)));

    // Warnings in words: a permalink naming an option the data set does not have matches nothing.
    await restored.goto(`${base}/data-sets/${ETHNICITY}/query?filters.${ethnicity.id}=nope1`);
    await ready(restored);
    await expect.poll(() => restored.locator('[data-count]').getAttribute('data-count')).toBe('0');
    const warnings = await restored.locator('[data-warnings]').textContent();
    expect(warnings).toContain('One or more filters could not be found. (nope1)');
    expect(warnings).toContain('Nothing matches these choices.');

    expect(errors).toEqual([]);
    expect(offOrigin).toEqual([]);
  }, 240000);
});
