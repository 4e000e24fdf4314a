/**
 * Files beyond the importer's limits, and bytes a CSV of the standard cannot hold, are refused with the file, the
 * line and the limit, before the rows are read and with nothing written. From outside: `npm run import` refuses the
 * 100,000-indicator meta file within 5 s with a peak RSS under 500 MB (measured by /usr/bin/time).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ImportValidationError } from '../../../src/statistics/import/errors.js';
import { importDataSetVersion } from '../../../src/statistics/import/import.js';
import { IMPORT_LIMITS } from '../../../src/statistics/import/limits.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { ABSENCE_SCHOOL, createDataSet } from '../../helpers/statistics.js';

const root = path.resolve(import.meta.dirname, '../../..');
let database: TestDatabase;
let dir: string;
let dataSetId: string;

const META_HEAD =
  'col_name,col_type,label,indicator_grouping,indicator_unit,indicator_dp,filter_hint,filter_grouping_column';
const META = [META_HEAD, 'school_type,Filter,School type,,,,,', 'enrolments,Indicator,Enrolments,,,0,,'].join('\n');
const HEADER = 'time_period,time_identifier,geographic_level,country_code,country_name,school_type,enrolments';
const ROW = '202021,Academic year,National,E92000001,England,Total,100';

async function write(name: string, content: string | Buffer): Promise<string> {
  const sub = await mkdtemp(path.join(dir, 'case-'));
  const file = path.join(sub, name);
  await writeFile(file, content);
  return file;
}

async function versions(): Promise<number> {
  return (
    await sql<{ n: number }>`SELECT count(*)::int AS n FROM data_set_versions WHERE data_set_id = ${dataSetId}`.execute(
      database.db,
    )
  ).rows[0]!.n;
}

/** Imports the files and returns the refusal's problems (failing if the import is not refused). */
async function refusal(data: string | Buffer, meta: string | Buffer = META) {
  const dataPath = await write('data.csv', data);
  const metaPath = await write('meta.csv', meta);
  const before = await versions();
  const error = await importDataSetVersion(
    { pool: database.pool },
    { dataSetId, version: '1.0', dataPath, metaPath },
  ).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportValidationError);
  expect(await versions()).toBe(before);
  return (error as ImportValidationError).problems;
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = await mkdtemp(path.join(tmpdir(), 'import-limits-'));
  dataSetId = await createDataSet(database.db, { title: 'Import limits' });
});
afterAll(async () => {
  await database?.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('bytes a CSV of the standard cannot hold', () => {
  it('a NUL byte: refused with its line, not stored', async () => {
    const problems = await refusal(`${HEADER}\n${ROW}\n202021,Academic year,National,E92000001,England,To\0tal,100\n`);
    expect(problems[0]).toMatchObject({ file: 'data.csv', line: 3, message: expect.stringMatching(/NUL byte/) });
  });

  it('invalid UTF-8: refused with its line, not imported as U+FFFD', async () => {
    const data = Buffer.concat([
      Buffer.from(`${HEADER}\n${ROW}\n${ROW}\n202021,Academic year,National,E92000001,England,Caf`),
      Buffer.from([0xe9]),
      Buffer.from(',100\n'),
    ]);
    const problems = await refusal(data);
    expect(problems[0]).toMatchObject({ file: 'data.csv', line: 4, message: expect.stringMatching(/not valid UTF-8/) });
  });

  it('CR-only line endings: refused as such (not "a column appears twice")', async () => {
    const problems = await refusal(`${HEADER}\r${ROW}\r${ROW}\r`);
    expect(problems[0]).toMatchObject({
      file: 'data.csv',
      line: 1,
      message: expect.stringMatching(/carriage return is not followed by a line feed/),
    });
  });

  it('a NUL byte in the meta file: refused naming the meta file and line', async () => {
    const problems = await refusal(
      `${HEADER}\n${ROW}\n`,
      `${META_HEAD}\nschool_type,Filter,School\0type,,,,,\nenrolments,Indicator,Enrolments,,,0,,`,
    );
    expect(problems[0]).toMatchObject({ file: 'meta.csv', line: 2, message: expect.stringMatching(/NUL byte/) });
  });
});

describe('the documented limits', () => {
  it(`a cell of more than ${IMPORT_LIMITS.cellBytes} bytes (a 1 MB filter option)`, async () => {
    const problems = await refusal(
      `${HEADER}\n${ROW}\n202021,Academic year,National,E92000001,England,${'x'.repeat(1_000_000)},100\n`,
    );
    expect(problems[0]).toMatchObject({
      file: 'data.csv',
      line: 3,
      message: expect.stringMatching(/cell is longer than 1,000 bytes, the limit/),
    });
  });

  it(`a line of more than ${IMPORT_LIMITS.lineChars} characters, without reading the rest`, async () => {
    const problems = await refusal(`${HEADER}\n${ROW}\n${'"'}${'y'.repeat(3_000_000)}`);
    expect(problems[0]).toMatchObject({
      file: 'data.csv',
      line: 3,
      message: expect.stringMatching(/longer than 1,048,576 characters, the limit/),
    });
  });

  it(`more than ${IMPORT_LIMITS.dataColumns} columns in the data file`, async () => {
    const extra = Array.from({ length: 1000 }, (_, i) => `c${i}`);
    const problems = await refusal(`${HEADER},${extra.join(',')}\n${ROW},${extra.map(() => '1').join(',')}\n`);
    expect(problems[0]).toMatchObject({
      file: 'data.csv',
      line: 1,
      message: expect.stringMatching(/1,007 columns; the limit is 1,000/),
    });
  });

  it(`more than ${IMPORT_LIMITS.indicators} indicators or ${IMPORT_LIMITS.filters} filters in the meta file`, async () => {
    const indicators = Array.from({ length: 501 }, (_, i) => `i${i}`);
    const withIndicators = [
      META_HEAD,
      'school_type,Filter,School type,,,,,',
      ...indicators.map((c) => `${c},Indicator,${c},,,0,,`),
    ].join('\n');
    const problems = await refusal(
      `${HEADER},${indicators.join(',')}\n${ROW},${indicators.map(() => '1').join(',')}\n`,
      withIndicators,
    );
    expect(problems[0]).toMatchObject({
      file: 'meta.csv',
      line: 503,
      message: expect.stringMatching(/more than 500 indicators, the limit/),
    });
    const filters = Array.from({ length: 101 }, (_, i) => `f${i}`);
    const withFilters = [
      META_HEAD,
      ...filters.map((c) => `${c},Filter,${c},,,,,`),
      'enrolments,Indicator,Enrolments,,,0,,',
    ].join('\n');
    const refused = await refusal(
      `${HEADER},${filters.join(',')}\n${ROW},${filters.map(() => 'a').join(',')}\n`,
      withFilters,
    );
    expect(refused[0]).toMatchObject({
      file: 'meta.csv',
      line: 102,
      message: expect.stringMatching(/more than 100 filters, the limit/),
    });
  });

  it(`more than ${IMPORT_LIMITS.filterOptions} options of one filter`, async () => {
    const rows = Array.from(
      { length: IMPORT_LIMITS.filterOptions + 1 },
      (_, i) => `202021,Academic year,National,E92000001,England,option ${i},1`,
    );
    const problems = await refusal(`${HEADER}\n${rows.join('\n')}\n`);
    expect(problems[0]).toMatchObject({
      file: 'data.csv',
      line: IMPORT_LIMITS.filterOptions + 2,
      column: 'school_type',
      message: expect.stringMatching(/more than 50,000 options, the limit/),
    });
  });
});

/** `npm run import` under /usr/bin/time: exit code, output, wall time and peak RSS of the largest process. */
function timedImport(...args: string[]): Promise<{ code: number | null; output: string; ms: number; peakMb: number }> {
  const started = Date.now();
  const child = spawn('/usr/bin/time', ['-v', 'npm', 'run', '--silent', 'import', '--', ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(output)?.[1] ?? NaN);
      resolve({ code, output, ms: Date.now() - started, peakMb: kb / 1024 });
    }),
  );
}

/** The refusal's own time: the run's wall time less that of `npm run import -- --help` (npm, tsx and module loading). */
async function refusalMs(run: { ms: number }): Promise<number> {
  const startUp = await timedImport('--help');
  return run.ms - startUp.ms;
}

function importArgs(dataPath: string, metaPath: string): string[] {
  return ['--data-set', dataSetId, '--version', '9.0', '--data', dataPath, '--meta', metaPath];
}

describe('from outside: npm run import', () => {
  const indicators = Array.from({ length: 100_000 }, (_, i) => `indicator_${i}`);
  const hugeMeta = [META_HEAD, ...indicators.map((c) => `${c},Indicator,Indicator ${c},,,0,,`)].join('\n');

  it('refuses the 100,000-indicator meta file (and its 100,000-column data file) within 5 s, peak RSS under 500 MB', async () => {
    // The meta file of the issue (4.6 MB) and a data file whose header names every indicator.
    const dataPath = await write(
      'wide.csv',
      `${'time_period,time_identifier,geographic_level,country_code,country_name'},${indicators.map((_, i) => `i${i}`).join(',')}\n`,
    );
    const metaPath = await write('meta.csv', hugeMeta);
    const result = await timedImport(...importArgs(dataPath, metaPath));
    expect(result.code, result.output).toBe(1);
    expect(result.output).toMatch(
      /wide\.csv, line 1.*(100,005 columns; the limit is 1,000|longer than 1,048,576 characters)/,
    );
    expect(await refusalMs(result)).toBeLessThan(5000);
    expect(result.peakMb).toBeLessThan(500);
  }, 60_000);

  it('refuses the same meta file next to an ordinary data file at its first row past the limit, within 5 s, under 500 MB', async () => {
    const metaPath = await write('meta.csv', hugeMeta);
    const result = await timedImport(...importArgs(ABSENCE_SCHOOL.dataPath, metaPath));
    expect(result.code, result.output).toBe(1);
    expect(result.output).toMatch(/meta\.csv, line 1002.*more than 1,000 rows, the limit/);
    expect(await refusalMs(result)).toBeLessThan(5000);
    expect(result.peakMb).toBeLessThan(500);
  }, 60_000);
});

describe('a refused import and the connection it used', () => {
  it('is refused before its data file is stored, and the next import on that connection succeeds', async () => {
    // One connection, so the next import gets the refused one's. The refusal comes at line 3, long before the data
    // file (some 30 MB) is read and compressed for storing: that insert must not reach the connection afterwards.
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      const padding = `${ROW}\n`.repeat(500_000);
      const refusedData = await write('data.csv', `${HEADER}\n${ROW}\n${ROW},extra\n${padding}`);
      const validData = await write('data.csv', `${HEADER}\n${ROW}\n`);
      const metaPath = await write('meta.csv', META);
      const dataSet = await createDataSet(database.db, { title: 'Import limits: connection reuse' });
      const refused = importDataSetVersion(
        { pool },
        { dataSetId: dataSet, version: '1.0', dataPath: refusedData, metaPath },
      );
      await expect(refused).rejects.toBeInstanceOf(ImportValidationError);
      const imported = await importDataSetVersion(
        { pool },
        { dataSetId: dataSet, version: '1.0', dataPath: validData, metaPath },
      );
      expect(imported.rows).toBe(1);
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM data_set_version_files f
        JOIN data_set_versions v ON v.id = f.version_id WHERE v.data_set_id = ${dataSet}`.execute(database.db);
      expect(rows[0]!.n).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
