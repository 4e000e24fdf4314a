import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { from as copyFrom } from 'pg-copy-streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * `/metrics` reports the statistics imports running against the database, whichever process runs them (the import
 * CLI is a process of its own), so the documented "import stuck" alert can fire. An import in progress is the
 * importer's session COPYing a file into its `import_rows` table; the test holds one such COPY open.
 */
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function gauges(): Promise<{ running: number; rows: number }> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  const value = (name: string) => Number(res.body.match(new RegExp(`^${name} (\\d+)$`, 'm'))?.[1] ?? Number.NaN);
  return { running: value('statistics_import_running'), rows: value('statistics_import_rows_loaded') };
}

describe('import progress metrics', () => {
  it('show a running import and the rows it has loaded, and 0 once it has finished', async () => {
    expect(await gauges()).toEqual({ running: 0, rows: 0 });

    const client = await t.database.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('CREATE TEMPORARY TABLE import_rows (id int, cells text) ON COMMIT DROP');
      const copy = client.query(copyFrom('COPY import_rows FROM STDIN'));
      let sent = 0;
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      const source = Readable.from(
        (async function* () {
          for (; sent < 5000; sent++) yield `${sent}\trow ${sent}\n`;
          await held;
        })(),
      );
      const copying = pipeline(source, copy);
      let seen = { running: 0, rows: 0 };
      for (let attempt = 0; attempt < 50 && !(seen.running === 1 && seen.rows === 5000); attempt++) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await gauges();
      }
      expect(seen).toEqual({ running: 1, rows: 5000 });
      release();
      await copying;
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await gauges()).toEqual({ running: 0, rows: 0 });
  });
});
