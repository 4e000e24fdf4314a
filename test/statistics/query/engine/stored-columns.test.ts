import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Predicate, SortKey } from '../../../../src/statistics/query/engine/resolve.js';
import type { RowIndex } from '../../../../src/statistics/query/engine/index/row-index.js';
import { RowIndexBuilder } from '../../../../src/statistics/query/engine/index/row-index-builder.js';
import {
  encodeRowIndex,
  loadRowIndexFacets,
  loadRowIndexValues,
  saveEngineForm,
} from '../../../../src/statistics/storage/engine-form.js';
import { StoredColumnsCache } from '../../../../src/statistics/query/engine/stored/stored-columns.js';
import { createTestDatabase, type TestDatabase } from '../../../helpers/database.js';
import { fixtureVersion } from '../../../helpers/statistics.js';
import { naiveSelect, predicateArb, rowArb, sortArb, type Row } from './random-rows.js';

/**
 * The cold path (stored-columns.ts) reads a version's stored row index slice by slice: for random rows stored in
 * slices of a few rows (so a query reads some slices and skips others), every predicate, sort and page gives the
 * total and the rows of a row-by-row evaluation, each row's columns and indicator texts as the in-memory index has
 * them; and the index loaded whole from the same slices is the one stored, byte for byte.
 */
const ROWS_TABLE = 'stored_columns_test';
let database: TestDatabase;
let versionId: number;

beforeAll(async () => {
  database = await createTestDatabase();
  versionId = (await fixtureVersion(database.db)).id;
});
afterAll(async () => {
  await database?.drop();
});

const textArb = fc.oneof(
  fc.integer({ min: -100000, max: 100000 }).map(String),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).map(String),
  fc.constantFrom('x', 'z', '', '1.50', '007', '-0'),
);

type IndicatorRow = Row & { i1: string; i2: string };

function buildIndexWithValues(rows: IndicatorRow[]): RowIndex {
  const ordered = [...rows].sort((a, b) => b.time_period_id - a.time_period_id || a.id - b.id);
  const builder = new RowIndexBuilder(ordered.length, ['l_la', 'f1', 'f2'], ['i1', 'i2']);
  for (const r of ordered) builder.add(r.id, r.time_period_id, r.geographic_level, [r.l_la, r.f1, r.f2], [r.i1, r.i2]);
  return builder.finish();
}

describe('stored columns (the cold path)', () => {
  it('answer every query as row-by-row evaluation does, with the rows as the index holds them, reading slices', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(rowArb, textArb, textArb), { minLength: 1, maxLength: 120 }),
        predicateArb,
        fc
          .tuple(
            sortArb as fc.Arbitrary<SortKey[]>,
            fc.option(
              fc.constantFrom<SortKey>(
                { column: 'i1', direction: 'Asc', kind: 'indicator' },
                { column: 'i2', direction: 'Desc', kind: 'indicator' },
              ),
            ),
          )
          .map(([sorts, byValue]) => (byValue ? [byValue, ...sorts] : sorts)),
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 30 }),
        fc.constantFrom(1, 3, 8, 32),
        fc.boolean(),
        async (partial, predicate: Predicate, sorts, offset, limit, sliceRows, periodByPeriod) => {
          const rows: IndicatorRow[] = (
            periodByPeriod ? [...partial].sort((a, b) => a[0].time_period_id - b[0].time_period_id) : partial
          ).map(([r, i1, i2], i) => ({
            ...r,
            i1,
            i2,
            id: periodByPeriod ? i + 1 : ((i * 7919) % 1009) + 1,
          }));
          const index = buildIndexWithValues(rows);
          await saveEngineForm(database.db, ROWS_TABLE, versionId, index, sliceRows);
          const stored = await new StoredColumnsCache().open(database.db, ROWS_TABLE, 10000);
          expect(stored).toBeDefined();

          const { total, page } = await stored!.query(database.db, 10000, predicate, sorts, offset, limit, [
            'i1',
            'i2',
          ]);
          const expected = naiveSelect(rows, predicate, sorts, offset, limit);
          expect(total).toBe(expected.total);
          // The in-memory index answers the same (sorts by indicator values included).
          const { positions } = index.select(predicate, sorts, offset, limit);
          expect(positions.map((position) => index.ids.at(position))).toEqual(expected.ids);
          expect(page.count).toBe(positions.length);
          const i1 = page.textsOf('i1');
          const la = page.idsOf('l_la');
          for (let r = 0; r < page.count; r++) {
            const row = index.facetRow(positions[r]!);
            expect(row.id).toBe(expected.ids[r]);
            expect(page.timePeriodId(r)).toBe(row.time_period_id);
            expect(page.levelCode(r)).toBe(row.geographic_level);
            expect(la(r)).toBe(row.l_la);
            expect(i1(r)).toBe(rows.find((x) => x.id === row.id)!.i1);
          }
        },
      ),
      { numRuns: 150 },
    );
  }, 120000);

  it('load whole from their slices as the index that was stored', async () => {
    const rows: IndicatorRow[] = Array.from({ length: 1000 }, (_, i) => ({
      id: ((i * 7919) % 1009) + 1,
      time_period_id: 1 + (i % 4),
      geographic_level: ['LA', 'REG', 'NAT'][i % 3]!,
      l_la: i % 300,
      f1: i % 4,
      f2: 4 + (i % 3),
      i1: i % 17 === 0 ? 'x' : String(i * 3),
      i2: (i / 8).toString(),
    }));
    const index = buildIndexWithValues(rows);
    await saveEngineForm(database.db, ROWS_TABLE, versionId, index, 64);
    const loaded = await loadRowIndexFacets(database.db, ROWS_TABLE, 10000);
    loaded!.addIndicators((await loadRowIndexValues(database.db, ROWS_TABLE, loaded!.size, 10000))!);
    expect(encodeRowIndex(loaded!, ROWS_TABLE, 64)).toEqual(encodeRowIndex(index, ROWS_TABLE, 64));

    // 300 locations: two-byte codes, and a slice's presence bits shared by codes 256 apart (a superset, never a miss).
    const stored = await new StoredColumnsCache().open(database.db, ROWS_TABLE, 10000);
    for (const values of [[299], [43], [43, 299], [0, 256]]) {
      const predicate: Predicate = { kind: 'in', column: 'l_la', values, negated: false };
      const sorts: SortKey[] = [{ column: 'time_period_id', direction: 'Desc', kind: 'integer' }];
      const { total } = await stored!.query(database.db, 10000, predicate, sorts, 0, 10, []);
      expect(total).toBe(naiveSelect(rows, predicate, sorts, 0, 10).total);
    }
  });
});
