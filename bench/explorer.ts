import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildExplorerAssets } from '../src/explorer/build.js';
import { launchChromium, settledPage } from '../test/explorer/browser.js';
import { freePort, startServer, stopServer } from './server-process.js';

/**
 * `npm run bench:explorer`: the explorer's size and first page load.
 *
 * - Bundle: the client's main script, its chunks (loaded by `import()`) and the stylesheet as the server builds them
 *   (esbuild, minified), gzipped (level 9), as they go over the wire. Goal: under 250 KB together.
 * - First load: the service runs in its own process on localhost (DATA_DIR, default .data/bench-explorer, seeded
 *   with the catalogue on its first start, or DATABASE_URL); headless Chromium (/usr/bin/chromium) opens each page
 *   RUNS times, each time with a fresh profile (empty cache), and records the time from navigation start until the
 *   page shows its data (the client sets `data-ready-ms` on <main> once the API answers are rendered) and the load
 *   event. Goal: `/` under 1 s.
 * - Cross-tab: the query page for every local authority, ethnicity and school type in 2021/22 (first language at
 *   its Total; the table takes the API's first page of 10,000 rows), opened RUNS times in a fresh browser; the page
 *   records the time from receiving the rows to the frame after its first page (10,000 cells) is in the table
 *   (`data-first-draw-ms`: pivot, DOM, style, layout and paint; `data-built-ms`: pivot and DOM only) and its
 *   performance measures of the parts (pivot, DOM, paint); then "Next rows" is pressed and the next page's draw timed
 *   the same way (from the press).
 *   Goal: the first 10,000 cells within 200 ms.
 * Output: bench/results/explorer.json.
 */
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const ETHNICITY = '9eee125b-5538-49b8-aa49-4fda877b5e57';
const PAGES = {
  find: '/',
  search: '/?search=pupil',
  dataSet: `/data-sets/${ETHNICITY}`,
  query: `/data-sets/${ETHNICITY}/query?timePeriods.in=2020/2021|AY,2021/2022|AY&geographicLevels.in=LA&locations.in=LA|id|7zXob,LA|id|dP0Zw&filters.pTSoj=hgyW6&indicators=it6Xr,LxWjE`,
};

/** The cross-tab's goal: the first 10,000 cells drawn within this. */
const FIRST_CELLS_GOAL_MS = 200;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

async function main() {
  // The machine is shared: the load at the start and at the end go with the figures.
  const loadAverageAtStart = os.loadavg().map((l) => Math.round(l * 100) / 100);
  const assets = await buildExplorerAssets();
  const js = assets.files.get(assets.script)!;
  const css = assets.files.get(assets.stylesheet)!;
  const chunks = assets.chunks.map((file) => ({
    file,
    bytes: assets.files.get(file)!.body.length,
    gzipBytes: assets.files.get(file)!.gzip!.length,
  }));
  const kb = (bytes: number) => Math.round((bytes / 1024) * 10) / 10;
  const chunkGzip = chunks.reduce((sum, c) => sum + c.gzipBytes, 0);
  const bundle = {
    script: { file: assets.script, bytes: js.body.length, gzipBytes: js.gzip!.length },
    stylesheet: { file: assets.stylesheet, bytes: css.body.length, gzipBytes: css.gzip!.length },
    /** The code loaded by `import()` (and preloaded by the pages that import it at once). */
    chunks,
    /** Everything: main script, stylesheet and every chunk. */
    totalGzipKB: kb(js.gzip!.length + css.gzip!.length + chunkGzip),
    goalKB: 250,
  };
  console.log(
    `bundle: ${bundle.script.file} ${bundle.script.gzipBytes} B gzipped, ${bundle.stylesheet.file} ${bundle.stylesheet.gzipBytes} B gzipped, ${chunks.length} chunks ${chunkGzip} B gzipped (${chunks.map((c) => `${c.file} ${c.gzipBytes}`).join(', ')}); total ${bundle.totalGzipKB} KB`,
  );

  const port = await freePort();
  const dataDir = process.env.DATA_DIR ?? path.resolve('.data/bench-explorer');
  const server = await startServer(
    {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      SEED_ON_START: 'true',
    },
    600000,
  );
  const base = `http://127.0.0.1:${port}`;
  const loads: Record<string, { readyMs: number[]; loadEventMs: number[] }> = {};
  const crossTab = {
    url: '',
    cells: 0,
    pageRows: '',
    firstDrawMs: [] as number[],
    builtMs: [] as number[],
    pivotMs: [] as number[],
    domMs: [] as number[],
    paintMs: [] as number[],
    nextPageMs: [] as number[],
  };
  try {
    // One warm-up request per page, so the figures are of a running service (query indexes, connection pool).
    for (const url of Object.values(PAGES)) await fetch(base + url);
    for (const [name, url] of Object.entries(PAGES)) {
      loads[name] = { readyMs: [], loadEventMs: [] };
      for (let i = 0; i < RUNS; i++) {
        const { context, close } = await launchChromium();
        try {
          const page = await settledPage(context);
          await page.goto(base + url, { waitUntil: 'load' });
          await page.waitForSelector('main[data-ready]', { timeout: 30000 });
          if (name === 'query') await page.waitForSelector('table[data-crosstab] tbody tr');
          const { ready, load } = await page.evaluate(() => {
            const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
            const readyAttr = Number(document.getElementById('main-content')!.dataset.readyMs);
            return { ready: readyAttr, load: nav.loadEventEnd };
          });
          loads[name].readyMs.push(Math.round(ready));
          loads[name].loadEventMs.push(Math.round(load));
        } finally {
          await close();
        }
      }
      console.log(
        `${name} (${url}): shown with data after median ${median(loads[name].readyMs)} ms (max ${Math.max(...loads[name].readyMs)}), load event median ${median(loads[name].loadEventMs)} ms`,
      );
    }
    // The large cross-tab, its URL from the metadata's ids.
    const meta = (await (await fetch(`${base}/v1/data-sets/${ETHNICITY}/meta`)).json()) as {
      filters: Array<{ id: string; label: string; options: Array<{ id: string; label: string }> }>;
    };
    const language = meta.filters.find((f) => f.label === 'First language')!;
    const tableUrl = `/data-sets/${ETHNICITY}/query?timePeriods.in=2021/2022|AY&geographicLevels.in=LA&filters.${language.id}=${language.options.find((o) => o.label === 'Total')!.id}`;
    await fetch(base + tableUrl);
    for (let i = 0; i < RUNS; i++) {
      const { context, close } = await launchChromium();
      try {
        const page = await settledPage(context);
        await page.goto(base + tableUrl, { waitUntil: 'load' });
        const table = await page.waitForSelector('table[data-crosstab][data-complete]', { timeout: 60000 });
        // No named functions inside: tsx would wrap them in a helper the page does not have.
        const figures = await table.evaluate((t) => {
          const [pivotMs, domMs, paintMs] = [
            'explorer:crosstab-pivot',
            'explorer:crosstab-dom',
            'explorer:crosstab-paint',
          ].map((name) => Math.round(performance.getEntriesByName(name, 'measure')[0]?.duration ?? NaN));
          return {
            cells: Number((t as HTMLElement).dataset.cells),
            pageRows: (t as HTMLElement).dataset.pageRows ?? '',
            firstDrawMs: Number((t as HTMLElement).dataset.firstDrawMs),
            builtMs: Number((t as HTMLElement).dataset.builtMs),
            pivotMs: pivotMs!,
            domMs: domMs!,
            paintMs: paintMs!,
          };
        });
        crossTab.cells = figures.cells;
        crossTab.pageRows = figures.pageRows;
        crossTab.firstDrawMs.push(figures.firstDrawMs);
        crossTab.builtMs.push(figures.builtMs);
        crossTab.pivotMs.push(figures.pivotMs);
        crossTab.domMs.push(figures.domMs);
        crossTab.paintMs.push(figures.paintMs);
        // The next page, drawn when asked for.
        await page.click('#crosstab-next');
        const next = await page.waitForSelector('table[data-crosstab][data-complete]:not([data-page-rows^="1-"])', {
          timeout: 60000,
        });
        crossTab.nextPageMs.push(await next.evaluate((t) => Number((t as HTMLElement).dataset.firstDrawMs)));
      } finally {
        await close();
      }
    }
    console.log(
      `cross-tab (${crossTab.cells} cells, first page rows ${crossTab.pageRows}): first 10,000 drawn after median ${median(crossTab.firstDrawMs)} ms (max ${Math.max(...crossTab.firstDrawMs)}; medians: pivot ${median(crossTab.pivotMs)} ms, DOM ${median(crossTab.domMs)} ms, style, layout and paint ${median(crossTab.paintMs)} ms); next page after median ${median(crossTab.nextPageMs)} ms`,
    );
    crossTab.url = tableUrl;
  } finally {
    await stopServer(server);
  }
  const result = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      loadAverageAtStart,
      loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
      node: process.version,
    },
    runsPerPage: RUNS,
    bundle,
    firstLoad: Object.fromEntries(
      Object.entries(loads).map(([name, v]) => [
        name,
        {
          url: PAGES[name as keyof typeof PAGES],
          medianReadyMs: median(v.readyMs),
          maxReadyMs: Math.max(...v.readyMs),
          medianLoadEventMs: median(v.loadEventMs),
          readyMs: v.readyMs,
        },
      ]),
    ),
    goalFirstLoadMs: 1000,
    crossTab: {
      url: crossTab.url,
      cells: crossTab.cells,
      medianFirstDrawMs: median(crossTab.firstDrawMs),
      maxFirstDrawMs: Math.max(...crossTab.firstDrawMs),
      firstPageRows: crossTab.pageRows,
      medianBuiltMs: median(crossTab.builtMs),
      medianPivotMs: median(crossTab.pivotMs),
      medianDomMs: median(crossTab.domMs),
      medianPaintMs: median(crossTab.paintMs),
      medianNextPageMs: median(crossTab.nextPageMs),
      firstDrawMs: crossTab.firstDrawMs,
      builtMs: crossTab.builtMs,
      nextPageMs: crossTab.nextPageMs,
      goalFirstDrawMs: FIRST_CELLS_GOAL_MS,
    },
  };
  await mkdir('bench/results', { recursive: true });
  await writeFile('bench/results/explorer.json', `${JSON.stringify(result, null, 2)}\n`);
  console.log('wrote bench/results/explorer.json');
  const missed = [
    bundle.totalGzipKB >= 250 ? `bundle ${bundle.totalGzipKB} KB gzipped (goal < 250 KB)` : '',
    result.firstLoad.find!.medianReadyMs >= 1000
      ? `/ shown after ${result.firstLoad.find!.medianReadyMs} ms (goal < 1 s)`
      : '',
    result.crossTab.medianFirstDrawMs >= FIRST_CELLS_GOAL_MS
      ? `first 10,000 cells after ${result.crossTab.medianFirstDrawMs} ms (goal < ${FIRST_CELLS_GOAL_MS} ms)`
      : '',
  ].filter(Boolean);
  if (missed.length > 0) {
    console.error(`explorer goals not met: ${missed.join('; ')}`);
    process.exitCode = 1;
  }
}

await main();
