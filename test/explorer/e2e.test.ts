import { execFile, execFileSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
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
/** "Pupil attendance since week commencing 12 September - weekly": 52 indicators. */
const WEEKLY = '14f4e111-506c-4bb9-86ff-6d4923acdd07';
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
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: unknown,
          ): Promise<{
            violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe;
    return axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function ready(page: Page): Promise<void> {
  await page.waitForSelector('main[data-ready]');
}

interface ShownTable {
  rows: string[];
  columns: string[];
  caption: string;
  /** Every value cell with the labels of its row groups and column groups, outermost first. */
  cells: Array<{ row: string[]; column: string[]; text: string }>;
}

/** The cross-tab as a reader sees it: each cell with its row and column headers (spans expanded). */
async function shownTable(page: Page): Promise<ShownTable> {
  await page.waitForSelector('table[data-crosstab][data-complete]');
  return page.$eval('table[data-crosstab]', (table) => {
    const t = table as HTMLTableElement;
    const columnLines = [...t.tHead!.rows].map((tr) =>
      [...tr.cells]
        .filter((c) => c.tagName === 'TH')
        .flatMap((th) => Array.from({ length: th.colSpan }, () => th.textContent ?? '')),
    );
    const columns = columnLines[0]?.length ?? 0;
    const rowLevels = (t.dataset.rows ?? '').split(',').length;
    const carry: Array<{ label: string; left: number }> = [];
    const cells: ShownTable['cells'] = [];
    // The body comes in blocks of rows (one <tbody> each), each naming its row headers again.
    for (const tr of [...t.tBodies].flatMap((body) => [...body.rows])) {
      const ths = [...tr.cells].filter((c): c is HTMLTableCellElement => c.tagName === 'TH');
      // Headers of this row: those still spanning from above, then the ones starting here.
      const start = rowLevels - ths.length;
      ths.forEach((th, i) => (carry[start + i] = { label: th.textContent ?? '', left: th.rowSpan }));
      const row = carry.slice(0, rowLevels).map((c) => c.label);
      [...tr.cells]
        .filter((c) => c.tagName === 'TD')
        .forEach((td, ci) =>
          cells.push({ row, column: columnLines.map((line) => line[ci]!), text: td.textContent ?? '' }),
        );
      for (const c of carry) c.left -= 1;
      if (cells.length % columns !== 0) throw new Error('ragged row');
    }
    return {
      rows: (t.dataset.rows ?? '').split(','),
      columns: (t.dataset.columns ?? '').split(','),
      caption: t.caption?.textContent ?? '',
      cells,
    };
  });
}

/**
 * What the cross-tab must show for the API's rows: one cell per row and indicator, found under the headers of its
 * time period, location, filter options and indicator (whichever groups are on the axes), with the indicator's format.
 */
function expectCellsMatch(shown: ShownTable, apiRows: Row[], meta: Meta, indicators: Meta['indicators']): void {
  const labelIn = (group: string, row: Row, indicator: Meta['indicators'][number]): string => {
    if (group === 'timePeriod')
      return meta.timePeriods.find((t) => t.period === row.timePeriod.period && t.code === row.timePeriod.code)!.label;
    if (group === 'location')
      return meta.locations
        .find((g) => g.level.code === row.geographicLevel)!
        .options.find((o) => o.id === row.locations[row.geographicLevel])!.label;
    if (group === 'indicator') return indicator.label;
    const filterId = group.slice('filter:'.length);
    return meta.filters.find((f) => f.id === filterId)!.options.find((o) => o.id === row.filters[filterId])!.label;
  };
  const byHeaders = new Map(shown.cells.map((c) => [`${c.row.join('|')}//${c.column.join('|')}`, c.text]));
  let checked = 0;
  for (const row of apiRows) {
    for (const indicator of indicators) {
      const key = `${shown.rows.map((g) => labelIn(g, row, indicator)).join('|')}//${shown.columns.map((g) => labelIn(g, row, indicator)).join('|')}`;
      expect(byHeaders.get(key), key).toBe(formatValue(row.values[indicator.id], indicator));
      checked += 1;
    }
  }
  // Every other cell is an empty combination (no row for it).
  expect(shown.cells.filter((c) => c.text !== '').length).toBe(
    apiRows.flatMap((r) => indicators.filter((i) => (r.values[i.id] ?? '') !== '')).length,
  );
  expect(checked).toBeGreaterThan(0);
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
    await seedCatalogue(database, { dataSetIds: [ETHNICITY, WEEKLY] });
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
    await publicationPage.goto(
      (await page
        .getByRole('link', { name: 'Schools, pupils and their characteristics' })
        .getAttribute('href', { timeout: 5000 }))!.replace(/^\//, `${base}/`),
    );
    await ready(publicationPage);
    await expect(publicationPage.locator('h1').textContent()).resolves.toBe(
      'Schools, pupils and their characteristics',
    );
    expect(
      await publicationPage.getByRole('link', { name: 'Pupil characteristics - Ethnicity and Language' }).count(),
    ).toBe(1);
    expect(await seriousViolations(publicationPage)).toEqual([]);
    await publicationPage.screenshot({ path: path.join(SCREENSHOTS, '2-publication.png'), fullPage: true });
    await publicationPage.close();

    // The data set page: versions and their changes in words.
    await page.getByRole('link', { name: 'Pupil characteristics - Ethnicity and Language' }).click();
    await page.waitForURL(`${base}/data-sets/${ETHNICITY}`);
    await ready(page);
    expect(await page.$$eval('[data-version]', (s) => s.map((e) => e.getAttribute('data-version')))).toEqual([
      '2.0',
      '1.1',
      '1.0',
    ]);
    await expect(page.locator('[data-version="2.0"] [data-changes="major"]').textContent()).resolves.toContain(
      'Removed option “Pupil referral unit” of filter “School type”.',
    );
    await expect(page.locator('[data-version="1.1"] [data-changes="minor"]').textContent()).resolves.toContain(
      'Added time period “2021/22”.',
    );
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, '3-data-set.png'), fullPage: true });

    // Build the query step by step: 2 time periods, 2 local authorities, 1 filter option, 2 indicators.
    await page.getByRole('button', { name: 'Build a query' }).click();
    await page.waitForURL(/\/query\?step=1$/);
    await ready(page);
    await page.getByLabel('Choose from a list').check();
    await page.getByLabel('2020/21', { exact: true }).check();
    await page.getByLabel('2021/22', { exact: true }).check();
    await page.getByRole('button', { name: 'Continue to locations' }).click();
    // Step 1 is summarised, with a way back to it; everything chosen so far is in the URL.
    await expect(page.locator('[data-summary="1"]').textContent()).resolves.toBe('2020/21, 2021/22');
    expect(page.url()).toContain('timePeriods.in=2020/2021|AY,2021/2022|AY&step=2');
    await page.getByLabel(/^Local authority \(/).check();
    // Two local authorities are called Dorset: their codes tell them apart.
    await page.getByLabel('Search local authority locations').fill('dorset');
    expect(await page.locator('[data-step="2"] .govuk-checkboxes__label').allTextContents()).toEqual(
      expect.arrayContaining(['Dorset (E06000059)', 'Dorset (E10000009)']),
    );
    await page.getByLabel('Search local authority locations').fill('barn');
    await page.getByLabel('Barnet', { exact: true }).check();
    await page.getByLabel('Barnsley', { exact: true }).check();
    await page.getByRole('button', { name: 'Continue to filters' }).click();
    await expect(page.locator('[data-summary="2"]').textContent()).resolves.toBe('Local authorityBarnet, Barnsley');
    // Back to step 1 and on again: the choices are kept.
    await page.getByRole('button', { name: 'Change time periods' }).click();
    expect(await page.getByLabel('2021/22', { exact: true }).isChecked()).toBe(true);
    expect(page.url()).toMatch(/step=1$/);
    await page.getByRole('button', { name: 'Continue to locations' }).click();
    await page.getByRole('button', { name: 'Continue to filters' }).click();
    await page.getByLabel('White - Irish', { exact: true }).check();
    await page.getByRole('button', { name: 'Continue to indicators' }).click();
    // Two indicators: no search box (that comes with more than 10).
    expect(await page.getByLabel('Search indicators').count()).toBe(0);
    await page.getByLabel('Headcount', { exact: true }).check();
    await page.getByLabel('Percent', { exact: true }).check();
    // No result yet, so nothing can be out of date.
    expect(await page.locator('[data-stale]').isVisible()).toBe(false);

    // The API's answer to the same query, built here from the metadata's labels.
    const meta = (await (await fetch(`${base}/v1/data-sets/${ETHNICITY}/meta`)).json()) as Meta;
    const la = meta.locations.find((g) => g.level.code === 'LA')!.options;
    const ethnicity = meta.filters.find((f) => f.label === 'Ethnicity')!;
    const headcount = meta.indicators.find((i) => i.label === 'Headcount')!;
    const percent = meta.indicators.find((i) => i.label === 'Percent')!;
    const body = {
      criteria: {
        timePeriods: {
          in: [
            { period: '2020/2021', code: 'AY' },
            { period: '2021/2022', code: 'AY' },
          ],
        },
        geographicLevels: { in: ['LA'] },
        locations: {
          in: ['Barnet', 'Barnsley'].map((label) => ({ level: 'LA', id: la.find((o) => o.label === label)!.id })),
        },
        filters: { in: [ethnicity.options.find((o) => o.label === 'White - Irish')!.id] },
      },
      indicators: [headcount.id, percent.id],
      page: 1,
      pageSize: 1000,
    };
    const api = (await (
      await fetch(`${base}/v1/data-sets/${ETHNICITY}/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as {
      paging: { totalResults: number };
      results: Row[];
    };
    expect(api.paging.totalResults).toBeGreaterThan(4);
    expect(api.results).toHaveLength(api.paging.totalResults);

    // The live count (one POST with pageSize=1) follows the choices.
    await expect
      .poll(() => page.locator('[data-count]').getAttribute('data-count'))
      .toBe(String(api.paging.totalResults));
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, '4-query-builder.png'), fullPage: true });

    await page.getByRole('button', { name: 'Show results' }).click();
    const optionLabel = (filterId: string, optionId: string) =>
      meta.filters.find((f) => f.id === filterId)!.options.find((o) => o.id === optionId)!.label;

    // The cross-tab in the publisher's default layout (fewer than 8 periods: periods innermost in the columns,
    // indicators innermost in the rows); the one ethnicity is in the caption, not a header group.
    const first = await shownTable(page);
    expect(first.columns[first.columns.length - 1]).toBe('timePeriod');
    expect(first.rows[first.rows.length - 1]).toBe('indicator');
    expect([...first.rows, ...first.columns]).not.toContain(`filter:${ethnicity.id}`);
    expect(first.caption).toContain('Ethnicity: White - Irish');
    expect(await page.locator('table[data-crosstab] th', { hasText: /^White - Irish$/ }).count()).toBe(0);
    expectCellsMatch(first, api.results, meta, [headcount, percent]);
    expect(await page.locator('[data-summary="3"]').isVisible()).toBe(true);

    // Pivot by keyboard: locations to the columns, time periods to the rows; each move is announced.
    await page.getByText('Move and reorder table headers').click();
    const press = async (id: string) => {
      await page.locator(`#${id}`).focus();
      await page.keyboard.press('Enter');
    };
    const location = first.rows.includes('location') ? 'toColumns' : undefined;
    if (location) {
      await press(`move-location-${location}`);
      await expect
        .poll(() => page.locator('#layout-status').textContent())
        .toMatch(/^Location moved to the columns\. Rows: .*Columns: .*Location\.$/);
      // Focus stays with the moved group.
      expect(
        await page.evaluate(() => document.activeElement?.closest('[data-group]')?.getAttribute('data-group')),
      ).toBe('location');
    }
    await press('move-timePeriod-toRows');
    await expect.poll(() => page.locator('#layout-status').textContent()).toMatch(/^Time period moved to the rows\./);
    const pivoted = await shownTable(page);
    expect(pivoted.columns).toContain('location');
    expect(pivoted.rows).toContain('timePeriod');
    expectCellsMatch(pivoted, api.results, meta, [headcount, percent]);

    // By pointer: drag the indicators onto the outermost row group.
    await page
      .locator('[data-group="indicator"]')
      .dragTo(page.locator(`[data-axis="rows"] [data-group="${pivoted.rows[0]}"]`));
    await expect
      .poll(async () => (await page.locator('table[data-crosstab]').getAttribute('data-rows'))?.split(',')[0])
      .toBe('indicator');
    await expect
      .poll(() => page.locator('#layout-status').textContent())
      .toMatch(/^Indicator moved to the rows, now first of \d row groups/);
    const dragged = await shownTable(page);
    expectCellsMatch(dragged, api.results, meta, [headcount, percent]);
    expect(await seriousViolations(page)).toEqual([]);
    await page.evaluate(() => document.getElementById('results-heading')!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '5-table-layout.png') });

    // The table as shown, as CSV: caption, a header line per column group, a line per row with its row headers.
    const [tableDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download this table (CSV)' }).click(),
    ]);
    const tableCsv: string[][] = parse(readFileSync(await tableDownload.path(), 'utf8'), { relax_column_count: true });
    expect(tableCsv[0]![0]).toBe(dragged.caption);
    const headerLines = dragged.columns.length;
    expect(tableCsv.length).toBe(1 + headerLines + new Set(dragged.cells.map((c) => c.row.join('|'))).size);
    expect(tableCsv[headerLines]!.slice(0, dragged.rows.length)).toEqual(
      dragged.rows.map((g) =>
        g === 'indicator'
          ? 'Indicator'
          : g === 'timePeriod'
            ? 'Time period'
            : g === 'location'
              ? 'Location'
              : meta.filters.find((f) => `filter:${f.id}` === g)!.label,
      ),
    );
    const shownValues = tableCsv
      .slice(1 + headerLines)
      .flatMap((line) => line.slice(dragged.rows.length))
      .filter((v) => v !== '')
      .sort();
    expect(shownValues).toEqual(api.results.flatMap((r) => [r.values[headcount.id]!, r.values[percent.id]!]).sort());

    // The chart: a line over the 2 periods, one series per chosen location, named in the legend.
    await page.waitForSelector('[data-chart] svg');
    expect(await page.locator('[data-chart]').getAttribute('data-kind')).toBe('line');
    expect(await page.locator('[data-chart] svg [data-series]').count()).toBe(2);
    const legend = await page.$$eval('.app-chart-legend__item', (items) => items.map((i) => i.textContent?.trim()));
    expect(legend.map((l) => l?.replace(/ \((circle|square)\)$/, '')).sort()).toEqual(['Barnet', 'Barnsley']);
    expect(await seriousViolations(page)).toEqual([]);
    await page.locator('#results-heading').scrollIntoViewIfNeeded();
    await page.getByText('Move and reorder table headers').click();
    await page.evaluate(() => document.getElementById('results-heading')!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '5-table.png') });
    await page.evaluate(() => document.querySelector('[data-chart]')!.parentElement!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '6-chart.png') });
    // The bar chart across the locations for one period: still one series (bar) per location.
    await page.getByLabel('Bars for one period').check();
    expect(await page.locator('[data-chart]').getAttribute('data-kind')).toBe('bar');
    expect(await page.locator('[data-chart] svg.app-chart [data-series]').count()).toBe(2);
    await page.getByLabel('Line over time').check();

    // The copied GET URL returns the same rows as the API's POST.
    await page
      .locator('.app-code-block', { has: page.locator('[data-code="get-url"]') })
      .getByRole('button', { name: 'Copy' })
      .click();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    expect(copied).toBe(await page.locator('[data-code="get-url"]').textContent());
    expect(copied.startsWith(`${base}/v1/data-sets/${ETHNICITY}/query?`)).toBe(true);
    const viaGet = (await (await fetch(copied)).json()) as { paging: { totalResults: number }; results: Row[] };
    expect(viaGet.results).toEqual(api.results);

    // The CSV download holds the same rows (labels in the CSV, ids in the JSON).
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download all matching rows (CSV)' }).click(),
    ]);
    const csv = parse<Record<string, string>>(readFileSync(await download.path(), 'utf8'), { columns: true });
    const csvRows = csv
      .map((r) =>
        [
          r.time_period,
          r.geographic_level,
          r['Local authority'],
          r.Ethnicity,
          r['First language'],
          r['School type'],
          r.Headcount,
          r.Percent,
        ].join(' | '),
      )
      .sort();
    const getRows = viaGet.results
      .map((row) =>
        [
          meta.timePeriods.find((t) => t.period === row.timePeriod.period)!.label,
          'Local authority',
          la.find((o) => o.id === row.locations.LA)!.label,
          ...['Ethnicity', 'First language', 'School type'].map((label) => {
            const filter = meta.filters.find((f) => f.label === label)!;
            return optionLabel(filter.id, row.filters[filter.id]!);
          }),
          row.values[headcount.id],
          row.values[percent.id],
        ].join(' | '),
      )
      .sort();
    expect(csvRows).toEqual(getRows);

    // The Parquet and Arrow downloads hold the same rows as typed columns (DuckDB reads the Parquet file).
    const [parquetDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download all matching rows (Parquet)' }).click(),
    ]);
    expect(parquetDownload.suggestedFilename()).toMatch(/-query\.parquet$/);
    const duck = await (await DuckDBInstance.create(':memory:')).connect();
    const parquetRows = (
      await duck.runAndReadAll(`SELECT la_name, headcount FROM read_parquet('${await parquetDownload.path()}')`)
    ).getRowObjectsJS();
    expect(parquetRows.map((r) => `${String(r.la_name)} | ${String(r.headcount)}`).sort()).toEqual(
      csv.map((r) => `${r['Local authority']} | ${Number(r.Headcount)}`).sort(),
    );
    duck.closeSync();
    const [arrowDownload] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download all matching rows (Arrow)' }).click(),
    ]);
    expect(tableFromIPC(readFileSync((await arrowDownload.path())!)).numRows).toBe(csv.length);

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

    // The permalink restores the same choices, the table's layout and its cells in a fresh page.
    const permalink = await page.locator('#permalink').inputValue();
    expect(permalink).toContain(`tableRows=${dragged.rows.join(',')}&tableColumns=${dragged.columns.join(',')}`);
    const restored = await context.newPage();
    await restored.goto(permalink);
    await ready(restored);
    const again = await shownTable(restored);
    expect(again).toEqual(dragged);
    expect(
      await restored.getByRole('checkbox', { name: 'Barnsley', exact: true, includeHidden: true }).isChecked(),
    ).toBe(true);
    expect(
      await restored.getByRole('checkbox', { name: 'White - Irish', exact: true, includeHidden: true }).isChecked(),
    ).toBe(true);
    expect(await seriousViolations(restored)).toEqual([]);
    // Once results are shown, a changed choice says they are out of date.
    await restored.getByRole('button', { name: 'Change filters' }).click();
    await restored.getByLabel('White - Irish', { exact: true }).uncheck();
    expect(await restored.locator('[data-stale]').isVisible()).toBe(true);
    await restored.getByLabel('White - Irish', { exact: true }).check();
    await restored.getByRole('button', { name: 'Show results' }).click();
    await expect.poll(() => restored.locator('[data-stale]').isVisible()).toBe(false);
    await restored.waitForSelector('table[data-crosstab][data-complete]');

    // At 375 px the "Change version" button sits beside the version list or directly under it, inside the screen.
    await restored.setViewportSize({ width: 375, height: 900 });
    const version = (await restored.locator('#version').boundingBox())!;
    const change = (await restored.getByRole('button', { name: 'Change version' }).boundingBox())!;
    expect(change.x + change.width).toBeLessThanOrEqual(375);
    expect(Math.abs(change.y - version.y) < 12 || Math.abs(change.x - version.x) < 1).toBe(true);

    // Readable at 320 px wide: nothing but the table's own scroll box is wider than the screen.
    await restored.setViewportSize({ width: 320, height: 900 });
    const overflow = await restored.evaluate(() => document.documentElement.scrollWidth);
    expect(overflow).toBeLessThanOrEqual(320);
    expect(await seriousViolations(restored)).toEqual([]);
    await restored.evaluate(() => window.scrollTo(0, 0));
    await restored.screenshot({ path: path.join(SCREENSHOTS, '8-query-320px.png') });
    // The chart is redrawn for the narrow width (its axis text keeps its size).
    await expect
      .poll(() => restored.locator('[data-chart] svg.app-chart').first().getAttribute('viewBox'))
      .toMatch(/^0 0 (2[89]\d|3[0-2]\d) /);
    await restored.evaluate(() => document.querySelector('[data-chart]')!.scrollIntoView());
    await restored.screenshot({ path: path.join(SCREENSHOTS, '9-chart-320px.png') });

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

  it('draws bars for one period across all 9 regions and all 33 London boroughs, sorted by value with the value on each bar', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const meta = (await (await fetch(`${base}/v1/data-sets/${ETHNICITY}/meta`)).json()) as Meta;
    const headcount = meta.indicators.find((i) => i.label === 'Headcount')!;
    const totals = meta.filters.map((f) => f.options.find((o) => o.label === 'Total')!.id);
    /** The API's headcounts for the Total of every filter in 2021/22, at these locations, largest first. */
    const expectedBars = async (level: string, ids: string[]) => {
      const criteria = {
        and: [
          {
            timePeriods: { in: [{ period: '2021/2022', code: 'AY' }] },
            geographicLevels: { in: [level] },
            ...(ids.length ? { locations: { in: ids.map((id) => ({ level, id })) } } : {}),
          },
          ...totals.map((id) => ({ filters: { in: [id] } })),
        ],
      };
      const answer = (await (
        await fetch(`${base}/v1/data-sets/${ETHNICITY}/query`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ criteria, indicators: [headcount.id], pageSize: 1000 }),
        })
      ).json()) as { results: Row[] };
      const names = meta.locations.find((g) => g.level.code === level)!.options;
      return answer.results
        .map((r) => ({
          label: names.find((o) => o.id === r.locations[level])!.label,
          value: Number(r.values[headcount.id]),
        }))
        .sort((a, b) => b.value - a.value)
        .map((b) => `${b.label}: ${formatValue(String(b.value), headcount)}`);
    };
    const shownBars = () =>
      page.$$eval('[data-chart] svg [data-series]', (gs) => gs.map((g) => g.getAttribute('aria-label')));

    // All 9 regions for 2021/22, chosen in the builder.
    await page.goto(`${base}/data-sets/${ETHNICITY}/query`);
    await ready(page);
    await page.getByLabel('Choose from a list').check();
    await page.getByLabel('2021/22', { exact: true }).check();
    await page.getByRole('button', { name: 'Continue to locations' }).click();
    await page.getByLabel(/^Regional \(/).check();
    await page.getByRole('button', { name: 'Continue to filters' }).click();
    await page.getByRole('button', { name: 'Continue to indicators' }).click();
    await page.getByLabel('Headcount', { exact: true }).check();
    await page.getByRole('button', { name: 'Show results' }).click();
    await page.waitForSelector('[data-chart] svg');
    expect(await page.locator('[data-chart]').getAttribute('data-kind')).toBe('bar');
    const regions = await expectedBars('REG', []);
    expect(regions).toHaveLength(9);
    expect(await shownBars()).toEqual(regions);
    expect(await page.locator('[data-chart] [data-value]').count()).toBe(9);
    expect(await seriousViolations(page)).toEqual([]);
    await page.evaluate(() => document.querySelector('[data-chart]')!.parentElement!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '6-chart-bars.png') });

    // All 33 London boroughs (the local authorities of the London region in the seeded file), from a link.
    const seedRows = parse<Record<string, string>>(
      gunzipSync(
        readFileSync(path.resolve(import.meta.dirname, '../../seed/spc_pupils_ethnicity_and_language/data.csv.gz')),
      ),
      { columns: true },
    );
    const boroughs = [
      ...new Set(
        seedRows
          .filter((r) => r.geographic_level === 'Local authority' && r.region_name === 'London')
          .map((r) => r.new_la_code),
      ),
    ];
    expect(boroughs).toHaveLength(33);
    const la = meta.locations.find((g) => g.level.code === 'LA')!.options as Array<{
      id: string;
      label: string;
      code?: string;
    }>;
    const ids = boroughs.map((code) => la.find((o) => o.code === code)!.id);
    // Every filter at its Total, as the chart does for filters left open (keeps the table to one cell per borough).
    const atTotals = meta.filters.map((f, i) => `&filters.${f.id}=${totals[i]}`).join('');
    await page.goto(
      `${base}/data-sets/${ETHNICITY}/query?timePeriods.in=2021/2022|AY&geographicLevels.in=LA&locations.in=${ids.map((id) => `LA|id|${id}`).join(',')}${atTotals}&indicators=${headcount.id}`,
    );
    await ready(page);
    await page.waitForSelector('[data-chart] svg');
    expect(await page.locator('[data-chart]').getAttribute('data-kind')).toBe('bar');
    expect(await shownBars()).toEqual(await expectedBars('LA', ids));
    // Too tall for the page: the bars scroll in their own box.
    expect(await page.$eval('.app-chart-scroll', (box) => box.scrollHeight > box.clientHeight)).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await page.evaluate(() => document.querySelector('[data-chart]')!.parentElement!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '6-chart-london.png') });

    // Lines over time for the 33 boroughs: one highlighted over the muted rest, or small multiples.
    await page.goto(
      `${base}/data-sets/${ETHNICITY}/query?geographicLevels.in=LA&locations.in=${ids.map((id) => `LA|id|${id}`).join(',')}${atTotals}&indicators=${headcount.id}`,
    );
    await ready(page);
    await page.waitForSelector('[data-chart] svg');
    expect(await page.locator('[data-chart]').getAttribute('data-kind')).toBe('line');
    await page.getByLabel('Highlighted series').selectOption({ label: 'Camden' });
    expect(await page.locator('[data-chart] svg [data-series]:not([data-muted])').getAttribute('aria-label')).toBe(
      'Camden',
    );
    expect(await page.locator('[data-chart] svg [data-series][data-muted]').count()).toBe(32);
    expect(await page.locator('.app-chart-legend').textContent()).toContain('Camden (highlighted, dark blue)');
    await page.evaluate(() => document.querySelector('[data-chart]')!.parentElement!.scrollIntoView());
    await page.screenshot({ path: path.join(SCREENSHOTS, '6-chart-highlight.png') });
    await page.getByLabel('Small multiples').check();
    expect(await page.locator('.app-small-multiples__item').count()).toBe(33);
    expect(await page.locator('.app-small-multiples__item h4').first().textContent()).toBe('Barking and Dagenham');
    // The chart's settings are in the permalink: the same link in a fresh page draws the same chart.
    const chartLink = new URL(page.url());
    expect(chartLink.searchParams.get('chartLines')).toBe('multiples');
    expect(chartLink.searchParams.get('chartHighlight')).toBeTruthy();
    const again = await context.newPage();
    await again.goto(chartLink.href);
    await ready(again);
    await again.waitForSelector('.app-small-multiples__item');
    expect(await again.locator('.app-small-multiples__item').count()).toBe(33);
    expect(await again.getByLabel('Small multiples').isChecked()).toBe(true);
    await again.getByLabel('Highlight one').check();
    expect(await again.locator('[data-chart] svg [data-series]:not([data-muted])').getAttribute('aria-label')).toBe(
      'Camden',
    );
    await again.close();
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  }, 120000);

  it('keeps a line chart’s x labels apart and inside the chart at 320 and 1,280 px, small multiples too; sorts the table, announced', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const meta = (await (await fetch(`${base}/v1/data-sets/${WEEKLY}/meta`)).json()) as Meta;
    const indicator = meta.indicators.find((i) => i.unit !== 'string')!;
    expect(meta.timePeriods.length).toBeGreaterThan(12);
    /** Per chart drawn, the x labels' boxes that overlap a neighbour or stick out of their chart (none expected). */
    const labelProblems = () =>
      page.$$eval('[data-chart] svg.app-chart', (charts) =>
        charts.flatMap((chart, c) => {
          const box = chart.getBoundingClientRect();
          const labels = [...chart.querySelectorAll('[data-x-label]')].map((t) => ({
            text: t.textContent,
            r: t.getBoundingClientRect(),
          }));
          const problems: string[] = [];
          if (labels.length < 2) problems.push(`chart ${c}: ${labels.length} labels`);
          labels.forEach((l, i) => {
            if (l.r.left < box.left - 0.5 || l.r.right > box.right + 0.5)
              problems.push(`chart ${c}: "${l.text}" outside`);
            const next = labels[i + 1];
            if (next && next.r.left < l.r.right) problems.push(`chart ${c}: "${l.text}" overlaps "${next.text}"`);
          });
          return problems;
        }),
      );
    for (const width of [1280, 320]) {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(
        `${base}/data-sets/${WEEKLY}/query?geographicLevels.in=REG&indicators=${indicator.id}&chartType=line`,
      );
      await ready(page);
      await page.waitForSelector('[data-chart] svg [data-x-label]');
      expect(await labelProblems(), `${width} px`).toEqual([]);
      await page.evaluate(() => document.querySelector('[data-chart]')!.scrollIntoView());
      await page.screenshot({ path: path.join(SCREENSHOTS, `6-chart-weeks-${width}px.png`) });
      if (await page.getByLabel('Small multiples').isVisible()) {
        await page.getByLabel('Small multiples').check();
        await page.waitForSelector('.app-small-multiples__item [data-x-label]');
        expect(await labelProblems(), `${width} px, small multiples`).toEqual([]);
      }
    }
    // Sorting the table by a column's values, largest first: announced, and the column marked for screen readers.
    await page.setViewportSize({ width: 1280, height: 900 });
    const select = page.locator('[data-sort-by]');
    const column = await select.locator('option').nth(1).getAttribute('value');
    await select.selectOption(column!);
    await page.click('#sort-descending');
    await expect
      .poll(() => page.locator('#layout-status').textContent())
      .toMatch(/^Table rows sorted by .+, largest first/);
    expect(await page.locator('table[data-crosstab] thead tr:last-child th[aria-sort="descending"]').count()).toBe(1);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('sort-descending');
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 180000);

  it('draws a large table 10,000 cells a page, each page with all its row headers, and pages on with Next rows', async () => {
    const meta = (await (await fetch(`${base}/v1/data-sets/${ETHNICITY}/meta`)).json()) as Meta;
    const language = meta.filters.find((f) => f.label === 'First language')!;
    const total = language.options.find((o) => o.label === 'Total')!;
    const page = await context.newPage();
    await page.goto(
      `${base}/data-sets/${ETHNICITY}/query?timePeriods.in=2021/2022|AY&geographicLevels.in=LA&filters.${language.id}=${total.id}`,
    );
    await ready(page);
    const table = page.locator('table[data-crosstab][data-complete]');
    await table.waitFor();
    const pageShape = () =>
      page.$eval('table[data-crosstab]', (t) => {
        const body = [...(t as HTMLTableElement).tBodies].flatMap((b) => [...b.rows]);
        return {
          pageRows: (t as HTMLElement).dataset.pageRows!,
          cells: Number((t as HTMLElement).dataset.cells),
          rowLevels: ((t as HTMLElement).dataset.rows ?? '').split(',').length,
          rows: body.length,
          tds: body.reduce((sum, tr) => sum + [...tr.cells].filter((c) => c.tagName === 'TD').length, 0),
          firstRowHeaders: [...body[0]!.cells].filter((c) => c.tagName === 'TH').length,
        };
      });
    const first = await pageShape();
    expect(first.cells).toBeGreaterThan(10000);
    expect(first.tds).toBeLessThanOrEqual(10000);
    expect(first.tds).toBeGreaterThan(10000 - first.tds / first.rows);
    expect(first.pageRows).toMatch(new RegExp(`^1-${first.rows} of \\d+$`));
    await expect
      .poll(() => page.locator('#crosstab-page-status').textContent())
      .toContain(`Showing table rows 1 to ${first.rows.toLocaleString('en-GB')} of`);
    expect(await page.locator('#crosstab-previous').isDisabled()).toBe(true);
    // What the eye sees: each cell under its column's header and beside its row's header, in the first rows and in
    // rows far down the page once scrolled to (blocks out of view are laid out only then); no text of the page wider
    // than its column.
    const misplaced = (rowIndex: number) =>
      page.$eval(
        'table[data-crosstab]',
        async (t, rowIndex) => {
          const table = t as HTMLTableElement;
          const rows = [...table.tBodies].flatMap((b) => [...b.rows]);
          const tr = rows[Math.min(rowIndex, rows.length - 1)]!;
          tr.cells[tr.cells.length - 1]!.scrollIntoView({ block: 'center' });
          await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
          const columns = [...table.tHead!.rows[table.tHead!.rows.length - 1]!.cells]
            .filter((c) => c.tagName === 'TH')
            .map((th) => th.getBoundingClientRect());
          const rowHeader = [...tr.cells].find((c) => c.getAttribute('scope') === 'row')!.getBoundingClientRect();
          const out: string[] = [];
          [...tr.cells]
            .filter((c) => c.tagName === 'TD')
            .forEach((td, i) => {
              const box = td.getBoundingClientRect();
              const column = columns[i]!;
              if (Math.abs(box.left - column.left) > 1 || Math.abs(box.right - column.right) > 1)
                out.push(`cell ${i} at x ${box.left}-${box.right}, its header at ${column.left}-${column.right}`);
              if (Math.abs(box.top - rowHeader.top) > 1)
                out.push(`cell ${i} at y ${box.top}, its row header at ${rowHeader.top}`);
              if (box.width < 1 || box.height < 1) out.push(`cell ${i} not drawn`);
            });
          return out;
        },
        rowIndex,
      );
    for (const rowIndex of [0, 5, 700, first.rows - 1]) expect(await misplaced(rowIndex)).toEqual([]);
    const tooNarrow = () =>
      page.$$eval('table[data-crosstab] tbody :is(th, td)', (cells) =>
        cells.flatMap((cell) => {
          const range = document.createRange();
          range.selectNodeContents(cell);
          const text = range.getBoundingClientRect().width;
          const style = getComputedStyle(cell);
          const room = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
          return text > room + 0.5 ? [`"${cell.textContent}" (${text} px in ${room})`] : [];
        }),
      );
    expect(await tooNarrow()).toEqual([]);
    // Text enlarged on its own (WCAG 1.4.4, 200 %): the columns grow with it.
    await page.evaluate(() => (document.documentElement.style.fontSize = '200%'));
    expect(await tooNarrow()).toEqual([]);
    await page.evaluate(() => (document.documentElement.style.fontSize = ''));

    await page.getByRole('button', { name: 'Next rows' }).click();
    await page.waitForSelector(`table[data-crosstab][data-complete][data-page-rows^="${first.rows + 1}-"]`);
    const second = await pageShape();
    // The second page starts inside the outer groups' spans: its first row names every row group again.
    expect(second.firstRowHeaders).toBe(second.rowLevels);
    expect(second.tds).toBeLessThanOrEqual(10000);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('crosstab-next');
    await page.getByRole('button', { name: 'Previous rows' }).click();
    await page.waitForSelector('table[data-crosstab][data-complete][data-page-rows^="1-"]');
    // Back on the first page "Previous rows" is disabled, so focus moves to "Next rows" rather than being lost.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('crosstab-next');
    await page.close();
  }, 120000);

  it('searches the indicators of a data set with more than 10', async () => {
    const page = await context.newPage();
    await page.goto(`${base}/data-sets/${WEEKLY}/query?step=4`);
    await ready(page);
    const boxes = page.locator('[data-step="4"] .govuk-checkboxes__input');
    expect(await boxes.count()).toBe(52);
    await page.getByLabel('Search indicators').fill('authorised');
    const labels = await page.locator('[data-step="4"] .govuk-checkboxes__label').allTextContents();
    expect(labels.length).toBeGreaterThan(0);
    expect(labels.length).toBeLessThan(52);
    for (const label of labels) expect(label.toLowerCase()).toContain('authorised');
    await page.getByLabel(labels[0]!, { exact: true }).check();
    expect(page.url()).toContain('indicators=');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, '10-indicator-search.png') });
  }, 60000);
});
