import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  CHROMIUM_FLAGS,
  CHROMIUM_PATH,
  MISSING_CHROMIUM_MESSAGE,
  chromiumAvailable,
} from '../test/explorer/browser.js';
import { freePort, startBuiltServer, stopServer } from './server-process.js';

/**
 * `npm run bench:docs [-- --server FILE --label NAME --ui-config JSON]`: how long the API reference (`/docs`, swagger-ui) takes to show
 * its first document.
 *
 * The built server (`dist/server.mjs`: run `npm run build` first; or `--server`, another build to compare, such as
 * one of an earlier commit) runs in its own process on localhost with its own embedded PostgreSQL (DATA_DIR, default
 * .data/bench-docs, seeded with the catalogue on its first start, so that a fresh server warms its row indexes as a
 * newcomer's does), or DATABASE_URL. Headless Chromium (/usr/bin/chromium) opens `/docs` in a new browser context
 * each time (empty cache), and records from navigation start:
 *
 * - operations: the default document's operations list is in the page (the first `.opblock`);
 * - interactive: the page's main thread is free from then on: the end of its last task over 50 ms before a quiet
 *   second (none) and the network idle, or the operations' time if later (Lighthouse's time to interactive, with a
 *   one-second window instead of five); a click before it waits for the task that runs;
 * - network idle: the last of the page's responses (before the click below) ended;
 * - an operation opened: once the page is quiet, the first operation is clicked, and the time from the click to its
 *   responses shown (swagger-ui resolves the operation's references first);
 * - every request the page made: its URL, bytes over the wire and its start and end.
 *
 * First load: the browser is started and settled before the server, and `/docs` is opened as soon as the server
 * says it listens (a fresh server's first `/docs`). Warm loads: RUNS more, each in a new context, median.
 * `--ui-config '{"syntaxHighlight":false}'` lays swagger-ui settings over the served ones in the page (the browser is
 * given an initializer with them added), to measure a setting before serving it; `--ui-config '{}'` is the control
 * (the same detour through playwright for the initializer, nothing laid over).
 * Goal: interactive within 2 s on a warm server.
 * Output: bench/results/docs-render.json (docs-render-NAME.json with `--label`).
 */
const { values: options } = parseArgs({
  options: {
    server: { type: 'string', default: 'dist/server.mjs' },
    label: { type: 'string' },
    'ui-config': { type: 'string' },
  },
  strict: true,
});
const SERVER = options.server;
/** swagger-ui settings laid over the served ones in the page (a JSON object), to measure one before serving it. */
const UI_CONFIG = options['ui-config'] ? (JSON.parse(options['ui-config']) as Record<string, unknown>) : undefined;
const RESULTS = `bench/results/docs-render${options.label ? `-${options.label}` : ''}.json`;
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const GOAL_MS = 2000;
const DOCS_TIMEOUT_MS = 120000;
/** A new context starts its renderer process: the page is opened after it, as in a browser already running. */
const CONTEXT_SETTLE_MS = 1000;
/** The page is quiet after this long without a long task (Lighthouse waits 5 s; swagger-ui's tasks follow closer). */
const QUIET_MS = 1000;

interface Request {
  url: string;
  transferBytes: number;
  bodyBytes: number;
  startMs: number;
  endMs: number;
}

interface Load {
  operationsMs: number;
  interactiveMs: number;
  /** From a click on the first operation (once the page is quiet) to its responses shown. */
  operationOpenMs: number;
  networkIdleMs: number;
  /** Main-thread tasks over 50 ms, summed, until the page is quiet. */
  longTasksMs: number;
  requests: Request[];
  /** The machine's 1-minute load average when the load was measured. */
  loadAverage1m: number;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};
const loadAverage = () => os.loadavg().map((l) => Math.round(l * 100) / 100);

/**
 * Installed in every page before its scripts: when the first operation appears, the first click is handled and the
 * first operation's responses are shown, and the long tasks. No named functions inside: tsx would wrap them in a
 * helper the page does not have.
 */
const PAGE_PROBE = () => {
  const marks: Record<string, number> = {};
  const longTasks: Array<{ start: number; end: number }> = [];
  Object.assign(window, { __docsMarks: marks, __docsLongTasks: longTasks });
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      longTasks.push({ start: entry.startTime, end: entry.startTime + entry.duration });
  }).observe({ type: 'longtask', buffered: true });
  new MutationObserver(() => {
    if (marks.operations === undefined && document.querySelector('.opblock')) marks.operations = performance.now();
    if (marks.operationShown === undefined && document.querySelector('.opblock.is-open .responses-table .response'))
      marks.operationShown = performance.now();
  }).observe(document, { childList: true, subtree: true });
  document.addEventListener(
    'click',
    () => {
      marks.click ??= performance.now();
    },
    { capture: true },
  );
};

interface PageState {
  now: number;
  operations?: number;
  lastLongTaskEnd: number;
}

/** Polls the page until the operations are shown, the network is idle and no long task ran for QUIET_MS. */
async function quiet(page: Page, networkIdle: Promise<unknown>): Promise<void> {
  await networkIdle;
  const deadline = Date.now() + DOCS_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const state: PageState = await page.evaluate(() => {
      const { __docsMarks: marks, __docsLongTasks: longTasks } = window as unknown as {
        __docsMarks: Record<string, number>;
        __docsLongTasks: Array<{ end: number }>;
      };
      return {
        now: performance.now(),
        operations: marks.operations,
        lastLongTaskEnd: Math.max(0, ...longTasks.map((task) => task.end)),
      };
    });
    if (state.operations !== undefined && state.now - Math.max(state.lastLongTaskEnd, state.operations) >= QUIET_MS)
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/docs did not show its operations and go quiet within ${DOCS_TIMEOUT_MS / 1000} s`);
}

async function loadDocs(browser: Browser, base: string, beforeOpen?: () => Promise<void>): Promise<Load> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    await context.addInitScript(PAGE_PROBE);
    if (UI_CONFIG) {
      await context.route('**/docs/static/swagger-initializer.js', async (route) => {
        const served = await (await route.fetch()).text();
        // The initializer reads `config` into swagger-ui's options on the next line.
        const patched = served.replace(
          /^\s*const config = .*$/m,
          (line) => `${line}\nObject.assign(config, ${JSON.stringify(UI_CONFIG)});`,
        );
        if (patched === served) throw new Error('the served initializer no longer declares `const config`');
        await route.fulfill({ contentType: 'application/javascript; charset=utf-8', body: patched });
      });
    }
    const page: Page = await context.newPage();
    await page.goto('about:blank');
    await new Promise((resolve) => setTimeout(resolve, CONTEXT_SETTLE_MS));
    await beforeOpen?.();
    const networkIdle = page.goto(`${base}/docs/`, { waitUntil: 'networkidle', timeout: DOCS_TIMEOUT_MS });
    await quiet(page, networkIdle);
    await page.click('.opblock .opblock-summary-control');
    await page.waitForSelector('.opblock.is-open .responses-table .response', { timeout: DOCS_TIMEOUT_MS });
    const figures = await page.evaluate((quietMs) => {
      const { __docsMarks: marks, __docsLongTasks: longTasks } = window as unknown as {
        __docsMarks: Record<string, number>;
        __docsLongTasks: Array<{ start: number; end: number }>;
      };
      const navigationEntry = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
      const resources = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
      const requests = [navigationEntry, ...resources]
        .filter((entry) => entry.startTime < marks.click!)
        .map((entry) => ({
          url: entry.name.replace(location.origin, ''),
          transferBytes: entry.transferSize,
          bodyBytes: entry.decodedBodySize,
          startMs: Math.round(entry.startTime),
          endMs: Math.round(entry.responseEnd),
        }));
      // Lighthouse's time to interactive: the end of the last long task before the first quiet window after the
      // operations are shown (the click's own preparation, such as playwright's injected script, comes after it).
      let interactive = marks.operations!;
      let longTasksMs = 0;
      for (const task of [...longTasks].sort((a, b) => a.start - b.start)) {
        if (task.start - interactive >= quietMs) break;
        interactive = Math.max(interactive, task.end);
        longTasksMs += task.end - task.start;
      }
      return {
        operationsMs: Math.round(marks.operations!),
        interactiveMs: Math.round(interactive),
        networkIdleMs: Math.max(...requests.map((r) => r.endMs)),
        longTasksMs: Math.round(longTasksMs),
        operationOpenMs: Math.round(marks.operationShown! - marks.click!),
        requests,
      };
    }, QUIET_MS);
    return { ...figures, loadAverage1m: loadAverage()[0]! };
  } finally {
    await context.close();
  }
}

function describeLoad(name: string, load: Load): string {
  const documents = load.requests
    .filter((r) => r.url.endsWith('.json'))
    .map((r) => `${r.url} ${Math.round(r.transferBytes / 1024)} KB ${r.startMs}-${r.endMs} ms`)
    .join(', ');
  return `${name}: operations after ${load.operationsMs} ms, interactive after ${load.interactiveMs} ms, network idle ${load.networkIdleMs} ms, long tasks ${load.longTasksMs} ms, an operation opened in ${load.operationOpenMs} ms (load average ${load.loadAverage1m}); documents: ${documents}`;
}

async function main() {
  if (!chromiumAvailable()) throw new Error(MISSING_CHROMIUM_MESSAGE);
  if (!existsSync(SERVER)) throw new Error(`${SERVER} is missing: run \`npm run build\` first`);
  const loadAverageAtStart = loadAverage();
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_FLAGS });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv & { DATA_DIR: string } = {
    ...process.env,
    DATA_DIR: process.env.DATA_DIR ?? path.resolve('.data/bench-docs'),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SEED_ON_START: 'true',
  };
  // The data directory's first start seeds the catalogue (minutes): done once, untimed.
  if (!env.DATABASE_URL && !existsSync(path.join(env.DATA_DIR, 'postgres'))) {
    console.log(`seeding ${env.DATA_DIR} (first start) ...`);
    const first = startBuiltServer(env, { file: SERVER });
    await first.listening;
    await stopServer(first.child);
  }
  let server: ReturnType<typeof startBuiltServer> | undefined;
  let listeningS = 0;
  let first: Load;
  const warm: Load[] = [];
  try {
    first = await loadDocs(browser, base, async () => {
      server = startBuiltServer(env, { file: SERVER });
      listeningS = await server.listening;
    });
    console.log(`server listening after ${listeningS.toFixed(2)} s; ${describeLoad('first load', first)}`);
    for (let i = 0; i < RUNS; i++) {
      const load = await loadDocs(browser, base);
      warm.push(load);
      console.log(describeLoad(`warm ${i + 1}`, load));
    }
  } finally {
    if (server) await stopServer(server.child);
    await browser.close();
  }
  const medianOf = (key: 'operationsMs' | 'interactiveMs' | 'operationOpenMs' | 'networkIdleMs' | 'longTasksMs') =>
    median(warm.map((load) => load[key]));
  const result = {
    date: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model,
      loadAverageAtStart,
      loadAverage: loadAverage(),
      node: process.version,
    },
    server: SERVER,
    uiConfig: UI_CONFIG,
    listeningS: Math.round(listeningS * 100) / 100,
    firstLoad: first,
    warm: {
      runs: RUNS,
      medianOperationsMs: medianOf('operationsMs'),
      maxOperationsMs: Math.max(...warm.map((l) => l.operationsMs)),
      medianInteractiveMs: medianOf('interactiveMs'),
      medianOperationOpenMs: medianOf('operationOpenMs'),
      medianNetworkIdleMs: medianOf('networkIdleMs'),
      medianLongTasksMs: medianOf('longTasksMs'),
      operationsMs: warm.map((l) => l.operationsMs),
      interactiveMs: warm.map((l) => l.interactiveMs),
      networkIdleMs: warm.map((l) => l.networkIdleMs),
      operationOpenMs: warm.map((l) => l.operationOpenMs),
      loadAverage1m: warm.map((l) => l.loadAverage1m),
      requests: warm[warm.length - 1]!.requests,
    },
    goalWarmInteractiveMs: GOAL_MS,
  };
  await mkdir('bench/results', { recursive: true });
  await writeFile(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `warm (${RUNS} runs, median): operations ${result.warm.medianOperationsMs} ms, interactive ${result.warm.medianInteractiveMs} ms, network idle ${result.warm.medianNetworkIdleMs} ms; load average ${result.machine.loadAverage.join(' ')}`,
  );
  console.log(`wrote ${RESULTS}`);
  if (result.warm.medianInteractiveMs >= GOAL_MS) {
    console.error(`/docs goal not met: interactive after ${result.warm.medianInteractiveMs} ms (goal < ${GOAL_MS} ms)`);
    process.exitCode = 1;
  }
}

await main();
