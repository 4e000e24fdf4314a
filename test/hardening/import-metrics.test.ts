import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importDataSetVersion } from '../../src/statistics/import/import.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL, createDataSet } from '../helpers/statistics.js';

/**
 * `/metrics` reports the statistics imports running against the database, whichever process runs them (the import
 * CLI is a process of its own), so the documented "import stuck" alert can fire: a real import, watched from the
 * app's own scrapes while it reads its file and until its transaction ends.
 */
let t: TestApp;
let dir: string;

beforeAll(async () => {
  t = await buildTestApp();
  dir = await mkdtemp(path.join(tmpdir(), 'import-metrics-'));
});
afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
});

async function gauges(): Promise<{ running: number; rows: number }> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  const value = (name: string) => Number(res.body.match(new RegExp(`^${name} (\\d+)$`, 'm'))?.[1] ?? Number.NaN);
  return { running: value('statistics_import_running'), rows: value('statistics_import_rows_loaded') };
}

describe('import progress metrics', () => {
  it('show a running import and the rows it has read, and 0 once it has finished', async () => {
    expect(await gauges()).toEqual({ running: 0, rows: 0 });

    // A file long enough to be seen while it is read (the fixture's rows 400 times: 86,400 rows); the import is held
    // after reading them, where it stores the data file, by a lock on that table taken here.
    const [header, ...lines] = readFileSync(ABSENCE_SCHOOL.dataPath, 'utf8').trimEnd().split('\n');
    const dataPath = path.join(dir, 'data.csv');
    await writeFile(dataPath, `${[header, ...Array.from({ length: 400 }, () => lines).flat()].join('\n')}\n`);
    const dataSetId = await createDataSet(t.database.db, { title: 'Watched import' });
    const holder = await t.database.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE data_set_version_files IN SHARE MODE');
      const importing = importDataSetVersion(t.database, {
        dataSetId,
        version: '1.0',
        dataPath,
        metaPath: ABSENCE_SCHOOL.metaPath,
      });
      importing.catch(() => undefined);
      const seen: Array<{ running: number; rows: number }> = [];
      for (let attempt = 0; attempt < 600 && seen.at(-1)?.rows !== 86400; attempt++) {
        seen.push(await gauges());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await holder.query('COMMIT');
      expect((await importing).rows).toBe(86400);
      // Running from the start; the rows read never go back, and reach the file's rows before the transaction ends.
      const running = seen.filter((g) => g.running === 1);
      expect(running.length).toBeGreaterThan(1);
      expect(seen.filter((g) => g.running !== 1 && g.rows !== 0)).toEqual([]);
      expect(running.map((g) => g.rows)).toEqual([...running.map((g) => g.rows)].sort((a, b) => a - b));
      expect(running.at(-1)!.rows).toBe(86400);
    } finally {
      holder.release();
    }
    expect(await gauges()).toEqual({ running: 0, rows: 0 });
  });
});
