import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's `chromium` package (installed by .ci/run). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Whether the browser is here; in CI (CI=true) its absence is a failure, not a skip. */
export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export const MISSING_CHROMIUM_MESSAGE = `Chromium was not found at ${CHROMIUM_PATH}. Install it (Debian: apt-get install -y chromium, as .ci/run does) or set CHROMIUM_PATH.`;

/**
 * Headless Chromium on a fresh profile directory (playwright passes it as --user-data-dir), removed again by
 * `close()`. Downloads are accepted.
 */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!chromiumAvailable()) throw new Error(MISSING_CHROMIUM_MESSAGE);
  const profile = mkdtempSync(path.join(tmpdir(), 'explorer-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    acceptDownloads: true,
    viewport: { width: 1024, height: 800 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * For the benchmarks: a blank page of a browser just started, once the browser's own start-up is done. Its processes
 * and the fresh profile take the two cores for about a second after the launch, and a page opened at once was
 * measured against them (the explorer's large cross-tab first drawn after 370 ms median so, 199 ms after this wait;
 * 8 runs each, alternating). A user's browser is already running; the cache is still empty.
 */
export async function settledPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  await page.goto('about:blank');
  await new Promise((resolve) => setTimeout(resolve, BROWSER_SETTLE_MS));
  return page;
}
const BROWSER_SETTLE_MS = 1500;
