import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import fc from 'fast-check';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { readParquet } from 'parquet-wasm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type ParquetColumnData,
  type ParquetColumnSpec,
  ParquetWriter,
} from '../../../src/statistics/storage/parquet-writer.js';

/**
 * The hand-written Parquet writer (docs/decisions/0002-parquet-writer.md) read by three independent readers: hyparquet
 * (JavaScript), DuckDB (C++) and parquet-wasm (arrow-rs), which must each see exactly the values written — every run
 * length and bit width of the RLE / bit-packed hybrid, delta blocks of any span, nulls, -0, dictionaries of one entry
 * and of more than 65,536 — with the statistics readers use to skip row groups. A committed file pins the encoding.
 */

/** A column as values (null: none) for the readers' side, and its data for the writer, row group by row group. */
interface TestColumn {
  spec: ParquetColumnSpec;
  values: Array<number | string | null>;
  dataOf: (start: number, end: number) => ParquetColumnData;
}

function int32Column(name: string, values: number[]): TestColumn {
  return {
    spec: { name, kind: 'int32' },
    values,
    dataOf: (start, end) => ({ kind: 'int32', values: Int32Array.from(values.slice(start, end)) }),
  };
}

/** A text column of codes into `labels` (a negative code or a null label: null). */
function stringColumn(name: string, labels: Array<string | null>, codes: number[]): TestColumn {
  const all = Int32Array.from(codes);
  return {
    spec: { name, kind: 'string' },
    values: codes.map((code) => (code < 0 ? null : labels[code]!)),
    dataOf: (start) => ({ kind: 'string', codes: all, offset: start, labels }),
  };
}

function doubleColumn(name: string, values: Array<number | null>): TestColumn {
  return {
    spec: { name, kind: 'double' },
    values,
    dataOf: (start, end) => {
      const part = values.slice(start, end);
      const valid = new Uint8Array((part.length + 7) >>> 3);
      part.forEach((v, r) => {
        if (v !== null) valid[r >>> 3]! |= 1 << (r & 7);
      });
      return {
        kind: 'double',
        values: Float64Array.from(part, (v) => v ?? 0),
        valid: part.includes(null) ? valid : undefined,
      };
    },
  };
}

async function writeFileOf(columns: TestColumn[], groupSizes: number[], metadata: Record<string, string> = {}) {
  const writer = new ParquetWriter({
    columns: columns.map((c) => c.spec),
    createdBy: 'parquet-writer test',
    keyValueMetadata: metadata,
  });
  let start = 0;
  for (const size of groupSizes) {
    await writer.writeRowGroup(
      size,
      columns.map((c) => c.dataOf(start, start + size)),
    );
    start += size;
  }
  return writer.finish();
}

/** The rows as hyparquet reads them, column by column. */
async function hyparquetColumns(bytes: Buffer, columns: TestColumn[]): Promise<Array<Array<unknown>>> {
  const file = new Uint8Array(bytes).buffer;
  const rows = await parquetReadObjects({ file, compressors });
  return columns.map((c) => rows.map((row) => row[c.spec.name]));
}

/** The rows as parquet-wasm (arrow-rs) reads them, column by column. */
function arrowColumns(bytes: Buffer, columns: TestColumn[]): Array<Array<unknown>> {
  const table = tableFromIPC(readParquet(new Uint8Array(bytes)).intoIPCStream());
  return columns.map((c) => [...table.getChild(c.spec.name)!].map((v) => v as unknown));
}

/** -0 and 0 told apart, as the file must keep them. */
const exact = (values: Array<unknown>) => values.map((v) => (Object.is(v, -0) ? '-0' : v));

const LABELS = ['a', 'b', 'ünïcödé', 'Zebra', '', 'a longer label, with, commas and "quotes"', null];

const columnsArbitrary = fc.integer({ min: 0, max: 3000 }).chain((rows) =>
  fc.record({
    rows: fc.constant(rows),
    ids: fc.array(fc.integer({ min: -2147483648, max: 2147483647 }), { minLength: rows, maxLength: rows }),
    // Runs and scatter: a code repeated a random number of times, so RLE and bit-packed runs both occur.
    codes: fc.array(fc.tuple(fc.integer({ min: -1, max: LABELS.length - 1 }), fc.integer({ min: 1, max: 20 })), {
      minLength: 1,
      maxLength: rows + 1,
    }),
    numbers: fc.array(
      fc.oneof(
        fc.constant(null),
        fc.constant(-0),
        fc.integer({ min: -5, max: 5 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
      ),
      { minLength: rows, maxLength: rows },
    ),
    groups: fc.array(fc.integer({ min: 1, max: 700 }), { minLength: 1, maxLength: 8 }),
  }),
);

/** Row group sizes that add up to `rows`, from the sizes drawn (a file of no rows: one empty group). */
function groupSizesFor(rows: number, drawn: number[]): number[] {
  const sizes: number[] = [];
  let left = rows;
  for (let g = 0; left > 0; g++) {
    const size = Math.min(left, drawn[g % drawn.length]!);
    sizes.push(size);
    left -= size;
  }
  return sizes.length === 0 ? [0] : sizes;
}

describe('ParquetWriter', () => {
  it('writes what hyparquet reads back, value for value, for random columns and row groups', async () => {
    await fc.assert(
      fc.asyncProperty(columnsArbitrary, async ({ rows, ids, codes, numbers, groups }) => {
        const expanded = codes.flatMap(([code, times]) => Array.from({ length: times }, () => code)).slice(0, rows);
        while (expanded.length < rows) expanded.push(0);
        const columns = [
          int32Column('id', ids),
          stringColumn('label', LABELS, expanded),
          doubleColumn('number', numbers),
        ];
        const bytes = await writeFileOf(columns, groupSizesFor(rows, groups));
        const read = await hyparquetColumns(bytes, columns);
        for (const [c, column] of columns.entries()) expect(exact(read[c]!)).toEqual(exact(column.values));
        expect(Number(parquetMetadata(new Uint8Array(bytes).buffer).num_rows)).toBe(rows);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});

describe('ParquetWriter, given data that does not fit its columns', () => {
  it('refuses it with the column named, and writes nothing of that row group', async () => {
    const writer = new ParquetWriter({
      columns: [{ name: 'id', kind: 'int32' }],
      createdBy: 'parquet-writer test',
      keyValueMetadata: {},
    });
    await expect(writer.writeRowGroup(2, [])).rejects.toThrow('A row group of 0 columns; the file has 1');
    await expect(
      writer.writeRowGroup(2, [{ kind: 'double', values: new Float64Array(2), valid: undefined }]),
    ).rejects.toThrow('Column id is int32; its data is double');
    await expect(writer.writeRowGroup(3, [{ kind: 'int32', values: Int32Array.of(1, 2) }])).rejects.toThrow(
      'An int32 column of 2 values in a row group of 3',
    );
    await writer.writeRowGroup(2, [{ kind: 'int32', values: Int32Array.of(7, 8) }]);
    const rows = await parquetReadObjects({ file: new Uint8Array(await writer.finish()).buffer, compressors });
    expect(rows).toEqual([{ id: 7 }, { id: 8 }]);
  });
});

describe('ParquetWriter, read by DuckDB and arrow-rs', () => {
  let directory: string;
  let duck: Awaited<ReturnType<DuckDBInstance['connect']>>;

  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'parquet-writer-'));
    duck = await (await DuckDBInstance.create(':memory:')).connect();
  });
  afterAll(async () => {
    duck.closeSync();
    await rm(directory, { recursive: true, force: true });
  });

  async function duckColumns(bytes: Buffer, columns: TestColumn[]): Promise<Array<Array<unknown>>> {
    const file = path.join(directory, `f${Math.random().toString(36).slice(2)}.parquet`);
    await writeFile(file, bytes);
    const names = columns.map((c) => `"${c.spec.name}"`).join(', ');
    const rows = (await duck.runAndReadAll(`SELECT ${names} FROM read_parquet('${file}')`)).getRows();
    return columns.map((_, c) => rows.map((row) => row[c]));
  }

  async function duckStatistics(bytes: Buffer): Promise<Array<Array<unknown>>> {
    const file = path.join(directory, `s${Math.random().toString(36).slice(2)}.parquet`);
    await writeFile(file, bytes);
    return (
      await duck.runAndReadAll(
        `SELECT row_group_id, path_in_schema, stats_min_value, stats_max_value, stats_null_count, compression
         FROM parquet_metadata('${file}') ORDER BY row_group_id, column_id`,
      )
    ).getRows();
  }

  // 70,000 rows: a row group with more than 65,536 distinct labels (17-bit codes), ids with deltas of every span.
  const ROWS = 70_005;
  const wide = Array.from({ length: 70_000 }, (_, k) => `label ${k}`);
  const ids = Array.from({ length: ROWS }, (_, r) =>
    r % 1000 === 1 ? -2147483648 : r % 1000 === 2 ? 2147483647 : r % 3 === 0 ? r * 7 : r,
  );
  const columns = [
    int32Column('id', ids),
    stringColumn(
      'wide',
      wide,
      Array.from({ length: ROWS }, (_, r) => (r < 70_000 ? r : 139_999 - r)),
    ),
    stringColumn(
      'one',
      ['only'],
      Array.from({ length: ROWS }, () => 0),
    ),
    stringColumn(
      'none',
      ['unused', null],
      Array.from({ length: ROWS }, (_, r) => (r % 2 === 0 ? -1 : 1)),
    ),
    doubleColumn(
      'distinct',
      Array.from({ length: ROWS }, (_, r) => (r === 5 ? -0 : r / 3)),
    ),
    doubleColumn(
      'repeated',
      Array.from({ length: ROWS }, (_, r) => (r % 11 === 0 ? null : r % 4 === 0 ? -0 : (r % 5) * 1.5)),
    ),
    doubleColumn(
      'empty',
      Array.from({ length: ROWS }, () => null),
    ),
  ];
  const GROUPS = [70_000, 5];

  it('gives DuckDB and arrow-rs every value, and DuckDB the statistics of each row group', async () => {
    const bytes = await writeFileOf(columns, GROUPS, { note: 'kept' });
    // DuckDB reads -0 as -0 and a null as null; hyparquet and arrow-rs likewise.
    const expected = columns.map((c) => exact(c.values));
    expect((await duckColumns(bytes, columns)).map(exact)).toEqual(expected);
    expect(arrowColumns(bytes, columns).map(exact)).toEqual(expected);
    expect((await hyparquetColumns(bytes, columns)).map(exact)).toEqual(expected);

    const statistics = await duckStatistics(bytes);
    const of = (group: number, column: string) =>
      statistics.find((row) => Number(row[0]) === group && row[1] === column)!.slice(2);
    expect(of(0, 'id')).toEqual(['-2147483648', '2147483647', 0n, 'SNAPPY']);
    expect(of(0, 'wide')).toEqual(['label 0', 'label 9999', 0n, 'SNAPPY']);
    expect(of(1, 'wide')).toEqual(['label 69995', 'label 69999', 0n, 'SNAPPY']);
    expect(of(0, 'none')).toEqual([null, null, 70_000n, 'SNAPPY']);
    expect(of(0, 'repeated')).toEqual(['-0.0', '6.0', 6364n, 'SNAPPY']);
    expect(of(1, 'distinct')).toEqual(['23333.333333333332', '23334.666666666668', 0n, 'SNAPPY']);
    const footer = parquetMetadata(new Uint8Array(bytes).buffer);
    expect(footer.key_value_metadata).toContainEqual({ key: 'note', value: 'kept' });
    expect(footer.created_by).toBe('parquet-writer test');
    expect(footer.row_groups.map((g) => Number(g.num_rows))).toEqual(GROUPS);
  }, 60_000);

  it('writes a file of no rows that every reader opens, with its columns', async () => {
    const empty = columns.map((c) => ({ ...c, values: [] }));
    const bytes = await writeFileOf(empty, [0]);
    expect(await duckColumns(bytes, empty)).toEqual(empty.map(() => []));
    expect(arrowColumns(bytes, empty)).toEqual(empty.map(() => []));
    expect(await hyparquetColumns(bytes, empty)).toEqual(empty.map(() => []));
  });

  it('writes the committed file of format 1 byte for byte, which DuckDB reads', async () => {
    // The committed file pins the encoding: a change to it is a change of the files the service writes, to be made
    // on purpose (with a new fixture and a line in the decision record), never by accident.
    const fixture = path.join(import.meta.dirname, 'parquet-writer-v1.parquet');
    const small = [
      int32Column('id', [3, 1, 2, 10, 11, 12, 13, 14, 15, 16, 17, 40]),
      stringColumn('level', ['National', 'Regional', null], [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, -1]),
      doubleColumn('value', [1.5, null, -0, 2, 2, 2, 2, 2, 2, 2, 1e300, 0.1]),
    ];
    const bytes = await writeFileOf(small, [8, 4], { 'ees.test': 'format 1' });
    if (process.env.UPDATE_PARQUET_FIXTURE === '1') await writeFile(fixture, bytes);
    const committed = readFileSync(fixture);
    expect(bytes.equals(committed)).toBe(true);
    expect((await duckColumns(committed, small)).map(exact)).toEqual(small.map((c) => exact(c.values)));
  });
});
