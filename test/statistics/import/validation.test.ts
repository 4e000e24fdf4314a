import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../../src/errors.js';
import { ImportValidationError } from '../../../src/statistics/import/errors.js';
import { importDataSetVersion } from '../../../src/statistics/import/import.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { ABSENCE_SCHOOL, createDataSet } from '../../helpers/statistics.js';

let database: TestDatabase;
let dir: string;
let dataSetId: string;

const META = [
  'col_name,col_type,label,indicator_grouping,indicator_unit,indicator_dp,filter_hint,filter_grouping_column',
  'school_type,Filter,School type,,,,,',
  'enrolments,Indicator,Enrolments,,,0,,',
  'percent,Indicator,Percent,,%,1,,',
].join('\n');
const HEADER =
  'time_period,time_identifier,geographic_level,country_code,country_name,la_name,new_la_code,old_la_code,school_type,enrolments,percent';
const GOOD_ROWS = [
  '202021,Academic year,National,E92000001,England,,,,Total,100,1.5',
  '202021,Academic year,Local authority,E92000001,England,Barnsley,E08000016,370,Total,10,c',
];

async function files(data: string, meta = META, name = 'data.csv'): Promise<{ dataPath: string; metaPath: string }> {
  const sub = await mkdtemp(path.join(dir, 'case-'));
  const dataPath = path.join(sub, name);
  await writeFile(dataPath, name.endsWith('.gz') ? gzipSync(data) : data);
  const metaPath = path.join(sub, 'meta.csv');
  await writeFile(metaPath, meta);
  return { dataPath, metaPath };
}

/** Everything an import could have written, to prove a failed import wrote nothing. */
async function snapshot() {
  const count = async (table: string) =>
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(database.db)).rows[0]!.n;
  const { rows } = await sql<{
    n: number;
  }>`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'stats_data'`.execute(database.db);
  return {
    versions: await count('data_set_versions'),
    filters: await count('version_filters'),
    options: await count('version_filter_options'),
    indicators: await count('version_indicators'),
    locations: await count('locations'),
    timePeriods: await count('version_time_periods'),
    files: await count('data_set_version_files'),
    changes: await count('version_changes'),
    rowTables: rows[0]!.n,
    dataSetStatus: (
      await database.db.selectFrom('data_sets').select('status').where('id', '=', dataSetId).executeTakeFirstOrThrow()
    ).status,
  };
}

async function expectRejected(
  data: string,
  meta: string | undefined,
  expected: Array<{ file: string; line?: number; column?: string; message: RegExp }>,
) {
  const before = await snapshot();
  const { dataPath, metaPath } = await files(data, meta);
  const error = await importDataSetVersion(database, { dataSetId, version: '1.0', dataPath, metaPath }).catch(
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ImportValidationError);
  const problems = (error as ImportValidationError).problems;
  expect(problems).toHaveLength(expected.length);
  expected.forEach((e, i) => {
    expect({ file: problems[i]!.file, line: problems[i]!.line, column: problems[i]!.column }).toEqual({
      file: e.file,
      line: e.line,
      column: e.column,
    });
    expect(problems[i]!.message).toMatch(e.message);
  });
  // The CLI prints these paths: file, line and column.
  const first = (error as ImportValidationError).errors[0]!;
  expect(first.path).toContain(expected[0]!.file);
  if (expected[0]!.line !== undefined) expect(first.path).toContain(`line ${expected[0]!.line}`);
  expect(await snapshot()).toEqual(before);
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = await mkdtemp(path.join(tmpdir(), 'import-validation-'));
  dataSetId = await createDataSet(database.db, { title: 'Validation cases' });
});
afterAll(async () => {
  await database.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('malformed files are rejected with file, line and column, and nothing is written', () => {
  it('a missing mandatory column', async () => {
    await expectRejected(
      [
        'time_period,geographic_level,country_code,country_name,school_type,enrolments,percent',
        '202021,National,E92000001,England,Total,1,2',
      ].join('\n'),
      META.replace('la_name', ''),
      [{ file: 'data.csv', line: 1, column: 'time_identifier', message: /no "time_identifier" column/ }],
    );
  });

  it('an unknown time_identifier label', async () => {
    await expectRejected(
      [HEADER, GOOD_ROWS[0], '202021,Acadmic year,National,E92000001,England,,,,Total,1,2'].join('\n'),
      undefined,
      [{ file: 'data.csv', line: 3, column: 'time_identifier', message: /Unknown time identifier "Acadmic year"/ }],
    );
  });

  it('a malformed time_period', async () => {
    await expectRejected(
      [HEADER, GOOD_ROWS[0], '2020/21,Academic year,National,E92000001,England,,,,Total,1,2'].join('\n'),
      undefined,
      [{ file: 'data.csv', line: 3, column: 'time_period', message: /"2020\/21" is not a time period/ }],
    );
  });

  it('an unknown geographic_level label', async () => {
    await expectRejected(
      [HEADER, ...GOOD_ROWS, '202021,Academic year,Nation,E92000001,England,,,,Total,1,2'].join('\r\n'),
      undefined,
      [{ file: 'data.csv', line: 4, column: 'geographic_level', message: /Unknown geographic level "Nation"/ }],
    );
  });

  it('a row with the wrong number of cells (reported per row, several at once)', async () => {
    await expectRejected(
      [
        HEADER,
        GOOD_ROWS[0],
        '202021,Academic year,National,E92000001,England,,,,Total,1',
        GOOD_ROWS[1],
        '202021,Academic year,National,E92000001,England,,,,Total,1,2,3',
      ].join('\n'),
      undefined,
      [
        { file: 'data.csv', line: 3, column: 'percent', message: /10 cells but the header has 11/ },
        { file: 'data.csv', line: 5, message: /12 cells but the header has 11/ },
      ],
    );
  });

  it('a meta row naming a column the data lacks', async () => {
    await expectRejected([HEADER, ...GOOD_ROWS].join('\n'), `${META}\nmissing_column,Indicator,Missing,,,0,,`, [
      {
        file: 'meta.csv',
        line: 5,
        column: 'col_name',
        message: /"missing_column" that the data file data.csv does not have/,
      },
    ]);
  });

  it('a meta file without a required column', async () => {
    await expectRejected(
      [HEADER, ...GOOD_ROWS].join('\n'),
      META.replace(',indicator_dp', '').replace(/,0,,$/m, ',,').replace(',%,1,,', ',%,,'),
      [{ file: 'meta.csv', line: 1, column: 'indicator_dp', message: /no "indicator_dp" column/ }],
    );
  });

  it('an unknown indicator unit and a bad decimal places value', async () => {
    await expectRejected([HEADER, ...GOOD_ROWS].join('\n'), META.replace(',%,1,,', ',percent,one,,'), [
      { file: 'meta.csv', line: 4, column: 'indicator_unit', message: /Unknown indicator unit "percent"/ },
      { file: 'meta.csv', line: 4, column: 'indicator_dp', message: /"one" is not a whole number/ },
    ]);
  });

  it('an empty indicator cell', async () => {
    await expectRejected(
      [HEADER, GOOD_ROWS[0], '202021,Academic year,National,E92000001,England,,,,Total,,2'].join('\n'),
      undefined,
      [{ file: 'data.csv', line: 3, column: 'enrolments', message: /indicator cell is empty/ }],
    );
  });

  it('an unclosed quote', async () => {
    await expectRejected(
      [HEADER, GOOD_ROWS[0], '202021,Academic year,National,E92000001,"England,,,,Total,1,2'].join('\n'),
      undefined,
      [{ file: 'data.csv', line: 3, message: /not closed/ }],
    );
  });

  it('a missing file and a file that is not gzip', async () => {
    const before = await snapshot();
    const { metaPath } = await files([HEADER, ...GOOD_ROWS].join('\n'));
    const missing = await importDataSetVersion(database, {
      dataSetId,
      version: '1.0',
      dataPath: path.join(dir, 'nope.csv'),
      metaPath,
    }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ValidationError);
    expect((missing as ValidationError).errors).toEqual([
      { path: 'data', message: `${path.join(dir, 'nope.csv')} does not exist.` },
    ]);
    const fake = path.join(dir, 'fake.csv.gz');
    await writeFile(fake, [HEADER, ...GOOD_ROWS].join('\n'));
    const notGzip = await importDataSetVersion(database, { dataSetId, version: '1.0', dataPath: fake, metaPath }).catch(
      (e: unknown) => e,
    );
    expect(notGzip).toBeInstanceOf(ImportValidationError);
    expect((notGzip as ImportValidationError).problems[0]).toMatchObject({
      file: 'fake.csv.gz',
      message: expect.stringMatching(/cannot be decompressed/),
    });
    expect(await snapshot()).toEqual(before);
  });

  it('a duplicate version number (409) and an unknown data set (404)', async () => {
    const { dataPath, metaPath } = await files([HEADER, ...GOOD_ROWS].join('\n'));
    await importDataSetVersion(database, { dataSetId, version: '1.0', dataPath, metaPath });
    const before = await snapshot();
    const duplicate = await importDataSetVersion(database, { dataSetId, version: '1.0.0', dataPath, metaPath }).catch(
      (e: unknown) => e,
    );
    expect(duplicate).toBeInstanceOf(ConflictError);
    expect((duplicate as Error).message).toMatch(/already has a version 1\.0/);
    const unknown = await importDataSetVersion(database, {
      dataSetId: '00000000-0000-4000-8000-000000000000',
      version: '1.0',
      dataPath,
      metaPath,
    }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect(await snapshot()).toEqual(before);
    // Clean up for the other cases, which expect version 1.0 to be free.
    const version = await database.db
      .selectFrom('data_set_versions')
      .select(['id', 'rows_table'])
      .where('data_set_id', '=', dataSetId)
      .executeTakeFirstOrThrow();
    await sql`DROP TABLE IF EXISTS ${sql.table(`stats_data.${version.rows_table}`)}`.execute(database.db);
    await database.db.deleteFrom('data_set_versions').where('id', '=', version.id).execute();
    await database.db.updateTable('data_sets').set({ status: 'Draft' }).where('id', '=', dataSetId).execute();
  });
});

describe('what real files contain', () => {
  it('reads a BOM, CRLF line ends, quoted fields with commas and quotes, and suppression symbols; gzip input', async () => {
    const id = await createDataSet(database.db, { title: 'Real file quirks' });
    const data =
      '\uFEFF' +
      [
        HEADER,
        '202021,Academic year,Local authority,E92000001,England,"Bristol, City of",E06000023,801,"Total",5,x',
        '202021,Academic year,Local authority,E92000001,England,"The ""Quoted"" LA",E06000099,899,Total,low,z',
        '2020,Calendar year,National,E92000001,England,,,,Total,7,:',
        '',
      ].join('\r\n');
    const { dataPath, metaPath } = await files(data, `\uFEFF${META.replace(/\n/g, '\r\n')}`, 'data.csv.gz');
    // With its row table: read below as the SQL engine reads it.
    const result = await importDataSetVersion(database, {
      dataSetId: id,
      version: '1.0',
      dataPath,
      metaPath,
      notes: 'Quirks',
      rowTable: true,
    });
    expect(result).toMatchObject({ rows: 3, status: 'Published', version: '1.0' });
    const { rows } = await sql<{
      id: number;
      label: string | null;
      old_code: string | null;
      enrolments: string;
      percent: string;
      period: string;
      code: string;
    }>`
      SELECT r.id, la.label, la.old_code, r.i1 AS enrolments, r.i2 AS percent, tp.period, tp.code
      FROM ${sql.table(`stats_data.${result.rowsTable}`)} r
      JOIN version_time_periods tp ON tp.id = r.time_period_id
      LEFT JOIN locations la ON la.id = r.l_la ORDER BY r.id`.execute(database.db);
    expect(rows).toEqual([
      {
        id: 1,
        label: 'Bristol, City of',
        old_code: '801',
        enrolments: '5',
        percent: 'x',
        period: '2020/2021',
        code: 'AY',
      },
      {
        id: 2,
        label: 'The "Quoted" LA',
        old_code: '899',
        enrolments: 'low',
        percent: 'z',
        period: '2020/2021',
        code: 'AY',
      },
      { id: 3, label: null, old_code: null, enrolments: '7', percent: ':', period: '2020', code: 'CY' },
    ]);
    // Time period ids are chronological: "2020" sorts before "2020/2021".
    const periods = await database.db
      .selectFrom('version_time_periods')
      .select(['period'])
      .where('version_id', '=', result.versionId)
      .orderBy('id')
      .execute();
    expect(periods.map((p) => p.period)).toEqual(['2020', '2020/2021']);
    const stored = await database.db
      .selectFrom('data_set_version_files')
      .select('content_gzip')
      .where('version_id', '=', result.versionId)
      .executeTakeFirstOrThrow();
    expect(stored.content_gzip.equals(await readFile(dataPath))).toBe(true);
  });

  it('imports a draft that is not public and does not publish its data set', async () => {
    const id = await createDataSet(database.db, { title: 'Draft only' });
    const result = await importDataSetVersion(database, {
      dataSetId: id,
      version: '1.0',
      dataPath: ABSENCE_SCHOOL.dataPath,
      metaPath: ABSENCE_SCHOOL.metaPath,
      draft: true,
    });
    const version = await database.db
      .selectFrom('data_set_versions')
      .selectAll()
      .where('id', '=', result.versionId)
      .executeTakeFirstOrThrow();
    expect(version).toMatchObject({ status: 'Draft', published_at: null, total_results: 216 });
    const dataSet = await database.db
      .selectFrom('data_sets')
      .select('status')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(dataSet.status).toBe('Draft');
  });
});
