import { launchChromium, settledPage } from '../test/explorer/browser.js';
import { freePort, startServer, stopServer } from './server-process.js';

/**
 * `npx tsx bench/explorer-trace.ts`: where the large cross-tab's first draw goes, for profiling (bench:explorer has
 * the figures that count). Starts the service as bench:explorer does (DATA_DIR or DATABASE_URL), opens the same
 * cross-tab RUNS times (default 3) in headless Chromium with a DevTools trace (devtools.timeline), and prints the
 * renderer main thread's events of over 20 ms from the first draw's pivot on, each with its wall time and its thread
 * (CPU) time: on a shared machine the difference is time spent waiting for a core.
 */
const RUNS = Number(process.env.RUNS ?? 3);
const ETHNICITY = '9eee125b-5538-49b8-aa49-4fda877b5e57';
const PHASES = new Set([
  'RunMicrotasks',
  'FunctionCall',
  'ParseHTML',
  'UpdateLayoutTree',
  'Layout',
  'PrePaint',
  'Paint',
  'Layerize',
  'TimerFire',
]);

interface TraceEvent {
  name: string;
  ph: string;
  ts: number;
  dur?: number;
  tdur?: number;
  tid: number;
  pid: number;
}

const port = await freePort();
const server = await startServer(
  {
    ...process.env,
    DATA_DIR: process.env.DATA_DIR ?? '.data/bench-explorer',
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SEED_ON_START: 'true',
  },
  600000,
);
const base = `http://127.0.0.1:${port}`;
try {
  const meta = (await (await fetch(`${base}/v1/data-sets/${ETHNICITY}/meta`)).json()) as {
    filters: Array<{ id: string; label: string; options: Array<{ id: string; label: string }> }>;
  };
  const language = meta.filters.find((f) => f.label === 'First language')!;
  const tableUrl = `/data-sets/${ETHNICITY}/query?timePeriods.in=2021/2022|AY&geographicLevels.in=LA&filters.${language.id}=${language.options.find((o) => o.label === 'Total')!.id}`;
  for (let i = 0; i < RUNS; i++) {
    const { context, close } = await launchChromium();
    try {
      const page = await settledPage(context);
      const cdp = await context.newCDPSession(page);
      const events: TraceEvent[] = [];
      cdp.on('Tracing.dataCollected', (e) => events.push(...(e.value as unknown as TraceEvent[])));
      const done = new Promise<void>((resolve) => cdp.once('Tracing.tracingComplete', () => resolve()));
      await cdp.send('Tracing.start', {
        categories: 'devtools.timeline,blink.user_timing',
        transferMode: 'ReportEvents',
      });
      await page.goto(base + tableUrl, { waitUntil: 'load' });
      const table = await page.waitForSelector('table[data-crosstab][data-complete]', { timeout: 60000 });
      const figures = await table.evaluate((t) => ({
        firstDrawMs: Number((t as HTMLElement).dataset.firstDrawMs),
        measures: performance
          .getEntriesByType('measure')
          .map((m) => `${m.name.replace('explorer:', '')} ${Math.round(m.duration)} ms`)
          .join(', '),
      }));
      await cdp.send('Tracing.end');
      await done;
      // The page's performance measures are in the trace too (blink.user_timing), on the trace's clock.
      const from = events.find((e) => e.name === 'explorer:crosstab-pivot')?.ts ?? 0;
      const main = events.filter(
        (e) => e.ph === 'X' && PHASES.has(e.name) && (e.dur ?? 0) > 20000 && e.ts + (e.dur ?? 0) >= from,
      );
      console.log(`run ${i + 1}: first 10,000 cells drawn after ${figures.firstDrawMs} ms (${figures.measures})`);
      for (const e of main)
        console.log(
          `  ${e.name.padEnd(17)} wall ${String(Math.round(e.dur! / 1000)).padStart(5)} ms, thread ${String(Math.round((e.tdur ?? 0) / 1000)).padStart(5)} ms`,
        );
    } finally {
      await close();
    }
  }
} finally {
  await stopServer(server);
}
