import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parquetMetadata } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { RowIndexBuilder } from '../../../src/statistics/query/engine/index/row-index-builder.js';
import type { RowIndex } from '../../../src/statistics/query/engine/index/row-index.js';
import { buildRowIndex } from '../../../src/statistics/storage/rebuild.js';
import {
  loadQueryVersionMeta,
  timePeriodKey,
  type FilterMeta,
  type LocationMeta,
  type VersionMeta,
} from '../../../src/statistics/query/engine/version-meta-cache.js';
import { importDataSetVersion } from '../../../src/statistics/import/import.js';
import { backfillParquetCopies, backfillParquetCopy } from '../../../src/statistics/storage/parquet-backfill.js';
import {
  PARQUET_ROW_GROUP_ROWS,
  readParquetCopy,
  writeParquetCopy,
} from '../../../src/statistics/storage/parquet-copy.js';
import { readParquetCopyBytes } from '../../../src/statistics/storage/parquet-repository.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { ABSENCE_SCHOOL, createDataSet, fixtureVersion } from '../../helpers/statistics.js';
import { rowArb } from '../query/engine/random-rows.js';

/**
 * The Parquet copy of a version holds its rows so that the row index read back from it is the index it was written
 * from, array for array: on random rows (ids, periods, locations, options, every kind of indicator text) and on the
 * imported fixture; and the backfill from a version's kept data file makes the copy the import made, to the byte.
 */

/** A version whose ids are those `rowArb` draws: LA locations 1-40, options 1-3 (f1) and 4-6 (f2), periods 1-4. */
function randomRowsMeta(): VersionMeta {
  const filters: FilterMeta[] = [
    { publicId: 'F1', columnName: 'school_type', label: 'School type', column: 'f1' },
    { publicId: 'F2', columnName: 'ncyear', label: 'Year', column: 'f2' },
  ];
  const options = [1, 2, 3, 4, 5, 6].map((id) => ({
    id,
    publicId: `O${id}`,
    label: id === 2 ? 'Total' : `Option ${id}`,
    filter: filters[id <= 3 ? 0 : 1]!,
  }));
  const locations: LocationMeta[] = Array.from({ length: 40 }, (_, k) => ({
    id: k + 1,
    level: 'LA',
    // Two authorities of one name: the public id tells them apart.
    label: k === 7 ? 'Authority 1' : `Authority ${k}`,
    publicId: `L${k + 1}`,
    code: k % 5 === 0 ? null : `E0${k}`,
    oldCode: String(300 + k),
    urn: null,
    laEstab: null,
    ukprn: null,
  }));
  const timePeriods = [
    { id: 1, period: '2019/2020', code: 'AY' },
    { id: 2, period: '2020', code: 'CY' },
    { id: 3, period: '2021/2022', code: 'AY' },
    { id: 4, period: '2022', code: 'W12' },
  ];
  const indicators = [
    { publicId: 'I1', columnName: 'enrolments', label: 'Enrolments', column: 'i1' },
    { publicId: 'I2', columnName: 'rate', label: 'Rate', column: 'i2' },
  ];
  return {
    versionId: 1,
    rowsTable: 'v1',
    filters,
    filtersByPublicId: new Map(filters.map((f) => [f.publicId, f])),
    optionsByPublicId: new Map(options.map((o) => [o.publicId, o])),
    optionsById: new Map(options.map((o) => [o.id, o])),
    indicators,
    indicatorsByPublicId: new Map(indicators.map((i) => [i.publicId, i])),
    levels: new Set(['LA', 'NAT', 'REG', 'SCH']),
    locationLevels: ['LA'],
    locationsById: new Map(locations.map((l) => [l.id, l])),
    locationsByLevel: new Map([['LA', locations]]),
    timePeriods,
    timePeriodsById: new Map(timePeriods.map((t) => [t.id, t])),
    timePeriodIdByKey: new Map(timePeriods.map((t) => [timePeriodKey(t.period, t.code), t.id])),
    levelsByLabel: ['LA', 'NAT', 'REG', 'SCH'],
    rowCount: 0,
    hasRowTable: false,
  };
}

const textArb = fc.oneof(
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).map(String),
  fc.integer({ min: -99999, max: 99999 }).map((n) => (n / 100).toFixed(2)),
  fc.constantFrom(
    'x',
    'c',
    'z',
    'low',
    '',
    '1.50',
    '-0',
    '007',
    '1e+21',
    '1e-7',
    '12345678901',
    '0.000001',
    '3.0',
    ' 4',
    '-',
    '+5',
    '999999999999999',
    '9007199254740993',
    'ünïcödé',
  ),
);

async function roundTrip(index: RowIndex, meta: VersionMeta): Promise<RowIndex> {
  return readParquetCopy(await writeParquetCopy(index, meta), meta);
}

describe('Parquet copy of a row index (in memory)', () => {
  it('reads back the index it was written from, array for array, for random rows', async () => {
    const meta = randomRowsMeta();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(rowArb, textArb, textArb), { minLength: 1, maxLength: 120 }),
        fc.boolean(),
        async (drawn, periodByPeriod) => {
          const rows = drawn.map(([row, a, b], i) => ({
            ...row,
            id: periodByPeriod ? i + 1 : ((i * 7919) % 1009) + 1,
            texts: [a, b],
          }));
          rows.sort((a, b) => b.time_period_id - a.time_period_id || a.id - b.id);
          const builder = new RowIndexBuilder(rows.length, ['l_la', 'f1', 'f2'], ['i1', 'i2']);
          for (const r of rows) builder.add(r.id, r.time_period_id, r.geographic_level, [r.l_la, r.f1, r.f2], r.texts);
          const index = builder.finish();
          expect((await roundTrip(index, meta)).stored).toEqual(index.stored);
        },
      ),
      { numRuns: 60 },
    );
  }, 120_000);

  it('spans several row groups: ids one per position, a Float64 column, codes of two bytes', async () => {
    const meta = randomRowsMeta();
    const options = [...meta.optionsById.values()];
    // 300 options in f2: its codes need two bytes.
    for (let id = 7; id < 307; id++)
      options.push({ id, publicId: `O${id}`, label: `Option ${id}`, filter: meta.filters[1]! });
    meta.optionsById = new Map(options.map((o) => [o.id, o]));
    const rows = 2 * PARQUET_ROW_GROUP_ROWS + 1234;
    const builder = new RowIndexBuilder(rows, ['l_la', 'f1', 'f2'], ['i1', 'i2']);
    for (let p = 0; p < rows; p++) {
      const period = 4 - Math.floor((4 * p) / rows);
      builder.add(
        rows - p,
        period,
        p % 7 === 0 ? 'NAT' : 'LA',
        [p % 7 === 0 ? 0 : 1 + (p % 40), 1 + (p % 3), 4 + (p % 303)],
        [p % 1000 === 0 ? 'c' : String(p), p % 3 === 0 ? '1e-7' : String(p / 8)],
      );
    }
    const index = builder.finish();
    expect(index.ids.perPeriod).toBe(false);
    expect(index.stored.indicators.get('i2')!.values).toBeInstanceOf(Float64Array);
    const bytes = await writeParquetCopy(index, meta);
    const footer = parquetMetadata(new Uint8Array(bytes).buffer);
    expect(footer.row_groups.map((g) => Number(g.num_rows))).toEqual([
      PARQUET_ROW_GROUP_ROWS,
      PARQUET_ROW_GROUP_ROWS,
      1234,
    ]);
    // Typed, compressed and with statistics, as analytics tools expect.
    const rowId = footer.row_groups[0]!.columns[0]!.meta_data!;
    expect([rowId.type, rowId.codec, rowId.statistics?.min_value, rowId.statistics?.max_value]).toEqual([
      'INT32',
      'SNAPPY',
      rows - PARQUET_ROW_GROUP_ROWS + 1,
      rows,
    ]);
    expect((await readParquetCopy(bytes, meta)).stored).toEqual(index.stored);
  }, 120_000);

  it('refuses a Parquet file that is not a copy of this layout, and a copy whose values the metadata does not know', async () => {
    const foreign = parquetWriteBuffer({ columnData: [{ name: 'row_id', data: [1, 2], type: 'INT32' }] });
    await expect(readParquetCopy(new Uint8Array(foreign), randomRowsMeta())).rejects.toThrow(
      /no ees.parquet_copy metadata/,
    );
    const builder = new RowIndexBuilder(1, ['l_la', 'f1', 'f2'], ['i1', 'i2']);
    builder.add(1, 1, 'LA', [3, 1, 4], ['1', '2']);
    const bytes = await writeParquetCopy(builder.finish(), randomRowsMeta());
    const other = randomRowsMeta();
    other.locationsByLevel.set(
      'LA',
      other.locationsByLevel.get('LA')!.filter((l) => l.id !== 3),
    );
    await expect(readParquetCopy(bytes, other)).rejects.toThrow(/la_id holds "L3"/);
  });
});

describe('Parquet copy of an imported version', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it("is stored by the import and reads back as the index built from the version's rows", async () => {
    const version = await fixtureVersion(database.db);
    const meta = await loadQueryVersionMeta(database.db, version.id, version.rows_table);
    const bytes = await readParquetCopyBytes(database.db, version.id);
    expect(bytes).toBeDefined();
    const fromRows = await buildRowIndex(database.db, meta, { indicators: true });
    expect((await readParquetCopy(bytes!, meta)).stored).toEqual(fromRows.stored);
  });

  it('is made again from the kept data file by the backfill, to the byte, and only for versions without one', async () => {
    // The fixture was imported with the reference's row ids; a second version in file order.
    const dataSetId = await createDataSet(database.db);
    const fileOrder = await importDataSetVersion(database, {
      dataSetId,
      version: '1.0',
      dataPath: ABSENCE_SCHOOL.dataPath,
      metaPath: ABSENCE_SCHOOL.metaPath,
    });
    const fixture = await fixtureVersion(database.db);
    const imported = new Map<number, Buffer>();
    for (const id of [fixture.id, fileOrder.versionId])
      imported.set(id, (await readParquetCopyBytes(database.db, id))!);
    expect(imported.get(fixture.id)!.equals(imported.get(fileOrder.versionId)!)).toBe(false);

    await database.db.deleteFrom('data_set_version_parquet').execute();
    const fixtureResult = await backfillParquetCopy(database.db, fixture.id, { rowOrder: 'reference-fixture' });
    expect(fixtureResult).toMatchObject({ rows: ABSENCE_SCHOOL.rows, stored: true });
    const rest = await backfillParquetCopies(database.db, 'all');
    expect(rest.map((r) => [r.versionId, r.stored])).toEqual([[fileOrder.versionId, true]]);
    for (const [id, bytes] of imported) expect((await readParquetCopyBytes(database.db, id))!.equals(bytes)).toBe(true);
    // Run again: nothing left to do.
    expect(await backfillParquetCopies(database.db, 'all')).toEqual([]);
  }, 120_000);
});
