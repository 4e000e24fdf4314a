import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Predicate, SortKey } from '../../../../src/statistics/query/engine/resolve.js';
import { RowIds, type RowIndex } from '../../../../src/statistics/query/engine/index/row-index.js';
import { canonicalDecimal, RowIndexBuilder } from '../../../../src/statistics/query/engine/index/row-index-builder.js';
import { RowIndexCollector } from '../../../../src/statistics/import/row-collector.js';
import {
  decodeRowIndex,
  decodeRowIndexFacets,
  encodeRowIndex,
  joinWithoutCopy,
} from '../../../../src/statistics/storage/engine-form.js';
import { byteSink, written } from '../../../../src/statistics/query/engine/json-bytes.js';
import { buildIndex, LEVELS, naiveSelect, predicateArb, rowArb, sortArb, type Row } from './random-rows.js';

/**
 * The in-memory bitmap index must select exactly what the SQL translation selects. Here it is checked against a
 * plain row-by-row evaluation of the same predicate and sort (the SQL semantics), over random rows and trees.
 */
function select(index: RowIndex, p: Predicate, sorts: SortKey[], offset: number, limit: number) {
  const { total, ids, positions } = index.select(p, sorts, offset, limit);
  // Each position's facet row is the row with that id.
  expect(positions.map((position) => index.facetRow(position).id)).toEqual(ids);
  return { total, ids };
}

describe('RowIndex (in-memory bitmap engine)', () => {
  it('selects the same total and page of ids as row-by-row evaluation, for any predicate, sort and page, also from its engine form', () => {
    fc.assert(
      fc.property(
        fc.array(rowArb, { minLength: 0, maxLength: 150, size: 'large' }),
        predicateArb,
        sortArb as fc.Arbitrary<SortKey[]>,
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 1, max: 40 }),
        fc.boolean(),
        (partial, predicate, sorts, offset, limit, periodByPeriod) => {
          // Ids unique but not in time period order, as in some row tables; or numbered period by period, as a file
          // written that way gives them (the index then holds each period's first id only).
          const rows = periodByPeriod
            ? [...partial].sort((a, b) => a.time_period_id - b.time_period_id).map((r, i) => ({ ...r, id: i + 1 }))
            : partial.map((r, i) => ({ ...r, id: ((i * 7919) % 1009) + 1 }));
          const index = buildIndex(rows);
          if (periodByPeriod) expect(index.ids.perPeriod).toBe(true);
          const expected = naiveSelect(rows, predicate, sorts, offset, limit);
          expect(select(index, predicate, sorts, offset, limit)).toEqual(expected);
          // Cached value bitsets are shared between queries: evaluating must never change them.
          expect(select(index, { kind: 'not', item: predicate }, sorts, 0, 1000).total).toBe(
            rows.length - expected.total,
          );
          expect(select(index, predicate, sorts, offset, limit)).toEqual(expected);
          // The engine form (what the import writes and instances load) answers the same.
          expect(select(decodeRowIndex(encodeRowIndex(index, 'v1'), 'v1'), predicate, sorts, offset, limit)).toEqual(
            expected,
          );
          // So does an index whose memory budget leaves no room for postings or cached bitsets.
          const uncached = buildIndex(rows);
          uncached.limitCaching(() => false);
          expect(select(uncached, predicate, sorts, offset, limit)).toEqual(expected);
          expect(uncached.cachedBytes).toBe(0);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('selects and counts as row-by-row evaluation over bitsets of many words (time periods spanning words, pages inside them)', () => {
    // Up to 3,000 rows: a period spans tens of words, so the words an AND's time periods bound (and a count and a
    // page read only those) sit inside the bitset, not across all of it as in a few-word index.
    fc.assert(
      fc.property(
        fc.array(rowArb, { minLength: 300, maxLength: 3000 }),
        predicateArb,
        sortArb as fc.Arbitrary<SortKey[]>,
        fc.integer({ min: 0, max: 800 }),
        fc.integer({ min: 1, max: 60 }),
        (partial, predicate, sorts, offset, limit) => {
          const rows = partial.map((r, i) => ({ ...r, id: i + 1 }));
          const index = buildIndex(rows);
          const expected = naiveSelect(rows, predicate, sorts, offset, limit);
          expect(select(index, predicate, sorts, offset, limit)).toEqual(expected);
          expect(index.count(predicate)).toBe(expected.total);
          // Again, now that the first answer has cached value bitsets; and the complement.
          expect(select(index, predicate, sorts, offset, limit)).toEqual(expected);
          expect(index.count({ kind: 'not', item: predicate })).toBe(rows.length - expected.total);
          expect(index.count({ kind: 'and', items: [predicate, { kind: 'const', value: true }] })).toBe(expected.total);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('keeps a frequent value met under a time period whole, once, so later periods AND it; a rare one is not kept', () => {
    // 8 periods of 1,000 rows: level LA in half the rows (frequent), f1 = 7 in 1 row in 50 (rare), f2 of 3 values.
    const rows: Row[] = Array.from({ length: 8000 }, (_, i) => ({
      id: i + 1,
      time_period_id: 100 + Math.floor(i / 1000),
      geographic_level: i % 2 === 0 ? 'LA' : 'REG',
      l_la: i % 40,
      f1: i % 50 === 3 ? 7 : 1,
      f2: i % 3,
    }));
    const index = buildIndex(rows);
    const inPeriod = (period: number, ...items: Predicate[]): Predicate => ({
      kind: 'and',
      items: [{ kind: 'in', column: 'time_period_id', values: [period], negated: false }, ...items],
    });
    const level: Predicate = { kind: 'in', column: 'geographic_level', values: ['LA'], negated: false };
    const rare: Predicate = { kind: 'in', column: 'f1', values: [7], negated: false };
    const check = (p: Predicate) => expect(select(index, p, [], 0, 2000)).toEqual(naiveSelect(rows, p, [], 0, 2000));

    check(inPeriod(101, level));
    const kept = index.cachedBytes;
    // The level's bitset over all 8,000 rows (250 words), not its part under period 101.
    expect(kept).toBe(4 * Math.ceil(8000 / 32));
    for (const period of [100, 102, 107]) check(inPeriod(period, level));
    expect(index.cachedBytes).toBe(kept);
    // A rare value is worked out (whole once, then under each period's words) and not kept.
    for (const period of [101, 103, 106]) check(inPeriod(period, rare, level));
    expect(index.cachedBytes).toBe(kept);
    // Nor is anything when the budget has no room: each query works under its period alone.
    const uncached = buildIndex(rows);
    uncached.limitCaching(() => false);
    const p = inPeriod(104, level, { kind: 'in', column: 'f2', values: [2], negated: false });
    expect(select(uncached, p, [], 0, 2000)).toEqual(naiveSelect(rows, p, [], 0, 2000));
    expect(uncached.cachedBytes).toBe(0);
  });

  it('gives the matching positions page by page (what an export walks) as it gives them whole', () => {
    fc.assert(
      fc.property(
        fc.array(rowArb, { minLength: 0, maxLength: 150, size: 'large' }),
        predicateArb,
        sortArb as fc.Arbitrary<SortKey[]>,
        fc.integer({ min: 1, max: 40 }),
        (partial, predicate, sorts, pageRows) => {
          const index = buildIndex(partial.map((r, i) => ({ ...r, id: i + 1 })));
          const pages = [...index.matchingPositionPages(predicate, sorts, pageRows)];
          expect(pages.flatMap((page) => [...page])).toEqual([...index.matchingPositions(predicate, sorts)]);
          // Full pages, then one shorter and never empty.
          pages.forEach((page, i) => {
            if (i < pages.length - 1) expect(page.length).toBe(pageRows);
            else expect(page.length).toBeGreaterThan(0);
          });
        },
      ),
    );
  });

  it('gives back every indicator value exactly as its raw text, from memory and from its engine form', () => {
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
        '12345678901',
        '0.000001',
        '3.0',
        ' 4',
        '0',
        '00',
        '-',
        '+5',
        '4 ',
        '999999999999999',
        '-999999999999999',
        '1234567890123456',
        '9007199254740993',
        // The longest texts a double's String has (a fixed form and an exponent form).
        '-0.0000010000000687124962',
        '-1.2345678901234567e-300',
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(textArb, textArb), { minLength: 0, maxLength: 80 }), (values) => {
        const builder = new RowIndexBuilder(values.length, ['f1'], ['i1', 'i2']);
        values.forEach(([a, b], i) => builder.add(i + 1, 1, 'NAT', [1], [a, b]));
        const index = builder.finish();
        for (const candidate of [index, decodeRowIndex(encodeRowIndex(index, 'v1'), 'v1')]) {
          const literals = [candidate.indicatorJsonLiterals('i1'), candidate.indicatorJsonLiterals('i2')] as const;
          values.forEach(([a, b], p) => {
            expect(candidate.indicatorText('i1', p)).toBe(a);
            expect(candidate.indicatorText('i2', p)).toBe(b);
            // And as the JSON literal a page writes, in no more bytes than it reserves.
            for (const [literal, text] of [
              [literals[0], a],
              [literals[1], b],
            ] as const) {
              const sink = byteSink(0);
              literal.put(sink, p);
              expect(written(sink).toString()).toBe(JSON.stringify(text));
              expect(sink.length).toBeLessThanOrEqual(literal.maxBytes);
            }
          });
        }
      }),
      { numRuns: 300 },
    );
  });

  it("holds row ids as each time period's first when the period's ids are consecutive, else one per position", () => {
    const starts = Int32Array.from([0, 3, 5, 6]);
    const consecutive = RowIds.of(Int32Array.from([7, 8, 9, 1, 2, 40]), starts);
    expect(consecutive.perPeriod).toBe(true);
    expect(consecutive.byteLength).toBe(3 * 4);
    expect([0, 1, 2, 3, 4, 5].map((p) => consecutive.at(p))).toEqual([7, 8, 9, 1, 2, 40]);
    expect([...consecutive.toArray()]).toEqual([7, 8, 9, 1, 2, 40]);
    expect([...consecutive.slice(2, 5)]).toEqual([9, 1, 2]);
    expect([...consecutive.slice(0, 6)]).toEqual([7, 8, 9, 1, 2, 40]);
    // One gap (8 → 10) anywhere: every id is held.
    const gapped = RowIds.of(Int32Array.from([7, 8, 10, 1, 2, 40]), starts);
    expect(gapped.perPeriod).toBe(false);
    expect([0, 1, 2, 3, 4, 5].map((p) => gapped.at(p))).toEqual([7, 8, 10, 1, 2, 40]);
    expect([...gapped.slice(1, 4)]).toEqual([8, 10, 1]);
    expect(RowIds.of(new Int32Array(0), Int32Array.from([0])).length).toBe(0);
  });

  it('holds ids in the narrowest codes that fit their distinct values', () => {
    const wide = new RowIndexBuilder(70000, ['f1', 'f2', 'f3'], []);
    for (let i = 0; i < 70000; i++) wide.add(i + 1, 1, 'NAT', [i % 200, 1000 + (i % 300), i], []);
    const { facets } = wide.finish().stored;
    expect([...facets.values()].map((f) => f.codes.BYTES_PER_ELEMENT)).toEqual([1, 2, 4]);
  });

  it('refuses an engine form made from another table', () => {
    // Made from another table: refused.
    expect(() => decodeRowIndex(encodeRowIndex(buildIndex([]), 'v1'), 'v2')).toThrow(/v2/);
  });

  it("stores one piece per column, which the loaded index uses as it is, and ids consecutive per period as each period's first", () => {
    const rows: Row[] = Array.from({ length: 100 }, (_, i) => ({
      id: i + 1,
      time_period_id: (i % 3) + 1,
      geographic_level: LEVELS[i % 4]!,
      l_la: i % 4,
      f1: i % 2,
      f2: 4,
    }));
    const build = (byPeriod: boolean) => {
      const builder = new RowIndexBuilder(rows.length, ['l_la', 'f1', 'f2'], ['i1']);
      const ordered = [...rows].sort((a, b) => b.time_period_id - a.time_period_id || a.id - b.id);
      ordered.forEach((r, p) =>
        builder.add(
          byPeriod ? p + 1 : r.id,
          r.time_period_id,
          r.geographic_level,
          [r.l_la, r.f1, r.f2],
          [String(r.id * 1.5)],
        ),
      );
      return builder.finish();
    };
    // Ids 1..100 in position order: consecutive in each period, so no ids piece — levels and three columns.
    const byPeriod = encodeRowIndex(build(true), 'v1');
    expect(byPeriod.facets).toHaveLength(1 + 1 + 3);
    expect(byPeriod.values).toHaveLength(1 + 1);
    // Ids by row (1, 4, 7, … in the first period): one piece more, for the ids.
    const byRow = encodeRowIndex(build(false), 'v1');
    expect(byRow.facets).toHaveLength(1 + 1 + 1 + 3);
    for (const encoded of [byPeriod, byRow]) {
      const index = decodeRowIndex(encoded, 'v1');
      // Each column is a view of its own piece: nothing was copied.
      const viewOf = (array: ArrayBufferView, piece: Buffer) =>
        array.buffer === piece.buffer && array.byteOffset === piece.byteOffset;
      const columns = [...index.stored.facets.values()].map((f) => f.codes);
      expect(columns.map((codes, i) => viewOf(codes, encoded.facets.at(i - 3)!))).toEqual([true, true, true]);
      expect(viewOf(index.stored.levels, encoded.facets.at(-4)!)).toBe(true);
    }
    // A piece of another length than its header says is refused.
    expect(() => decodeRowIndexFacets([...byPeriod.facets.slice(0, -1), Buffer.alloc(3)], 'v1')).toThrow(
      /wrong length/,
    );
  });

  it('handles sizes around word boundaries', () => {
    for (const n of [31, 32, 33, 63, 64, 65, 1000]) {
      const rows: Row[] = Array.from({ length: n }, (_, i) => ({
        id: i + 1,
        time_period_id: (i % 3) + 1,
        geographic_level: LEVELS[i % 4]!,
        l_la: i % 4,
        f1: i % 2,
        f2: 4,
      }));
      const index = buildIndex(rows);
      const all: Predicate = { kind: 'const', value: true };
      const defaultSort: SortKey[] = [{ column: 'time_period_id', direction: 'Desc', kind: 'integer' }];
      expect(select(index, all, defaultSort, 0, n + 5)).toEqual(naiveSelect(rows, all, defaultSort, 0, n + 5));
      const not: Predicate = { kind: 'not', item: { kind: 'in', column: 'f1', values: [1], negated: false } };
      expect(select(index, not, defaultSort, 3, 7)).toEqual(naiveSelect(rows, not, defaultSort, 3, 7));
      const gte: Predicate = { kind: 'compare', column: 'time_period_id', op: '>=', value: 2 };
      expect(select(index, gte, defaultSort, 1, n)).toEqual(naiveSelect(rows, gte, defaultSort, 1, n));
    }
  });
});

describe('canonicalDecimal (a decimal text kept as its number)', () => {
  const printedAs = (text: string) => (String(Number(text)) === text ? Number(text) : undefined);

  it('takes the decimal texts of up to 15 significant digits that print back as they are, as the number they parse to', () => {
    const decimalText = fc
      .tuple(fc.boolean(), fc.stringMatching(/^[0-9]{1,17}$/), fc.stringMatching(/^[0-9]{0,22}$/))
      .map(([negative, whole, fraction]) => `${negative ? '-' : ''}${whole}.${fraction}`);
    const anyText = fc.oneof(decimalText, fc.string({ maxLength: 8 }), fc.stringMatching(/^-?[0-9.e+-]{1,10}$/));
    const significantDigits = (text: string) => text.replace(/[^0-9]/g, '').replace(/^0+/, '').length;
    fc.assert(
      fc.property(anyText, (text) => {
        const taken = canonicalDecimal(text);
        // Never a number the text does not print as; never a miss within its domain (others take the general path).
        if (taken !== undefined) expect(taken).toBe(printedAs(text));
        else if (text.includes('.') && significantDigits(text) <= 15) expect(printedAs(text)).toBeUndefined();
        if (!text.includes('.')) expect(taken).toBeUndefined();
      }),
      { seed: 23, numRuns: 20000 },
    );
    for (const text of ['0.5', '-0.5', '12.25', '0.000001', '0.0000015', '123456789012.345', '99.99'])
      expect(canonicalDecimal(text)).toBe(Number(text));
    for (const text of [
      '0.0000001',
      '1.50',
      '05.1',
      '.5',
      '1.',
      '-0.0',
      '0.0',
      '1.2345678901234567',
      '1e-7',
      'x',
      '',
    ]) {
      expect(canonicalDecimal(text)).toBeUndefined();
    }
  });
});

describe("RowIndexCollector (the import's rows, in file order with file-local ids)", () => {
  interface FileRow {
    tp: number;
    lvl: number;
    facets: number[];
    texts: string[];
  }
  const TEXTS = [
    '0',
    '7',
    '-3',
    '120',
    '12.5',
    '0.25',
    '-0.5',
    '1.50',
    'x',
    'c',
    'z',
    '1e-7',
    '3.14159',
    '2147483648',
    '',
  ];
  const COLUMNS = ['l_la', 'l_reg', 'f1'];

  /** The index the import's collector makes, and the one a build from the row table (rows in default order) makes. */
  function bothWays(
    rows: FileRow[],
    finals: { tp: number[]; facets: Array<Array<number | undefined>> },
    rowIds: Int32Array | undefined,
    facetOrder: readonly string[],
  ) {
    const levelCodes = ['NAT', 'LA', 'REG'];
    const collector = new RowIndexCollector(COLUMNS, ['i1', 'i2']);
    for (const row of rows) collector.add(row.tp, row.lvl, row.facets, row.texts);
    const meaning = {
      rowIds,
      timePeriodIds: finals.tp,
      levelCodes,
      facetIds: new Map(COLUMNS.map((column, c) => [column, finals.facets[c]!])),
      facetOrder,
      indicatorOrder: ['i2', 'i1'],
    };
    const inRowTable = rows
      .map((row, r) => ({
        id: rowIds ? rowIds[r]! : r + 1,
        tp: finals.tp[row.tp - 1]!,
        level: levelCodes[row.lvl - 1]!,
        facets: row.facets.map((local, c) => (local === 0 ? 0 : (finals.facets[c]![local - 1] ?? 0))),
        texts: row.texts,
      }))
      .sort((a, b) => b.tp - a.tp || a.id - b.id);
    const builder = new RowIndexBuilder(rows.length, facetOrder, ['i2', 'i1']);
    for (const row of inRowTable) {
      builder.add(
        row.id,
        row.tp,
        row.level,
        facetOrder.map((column) => row.facets[COLUMNS.indexOf(column)]!),
        [row.texts[1]!, row.texts[0]!],
      );
    }
    return { collected: collector.finish(meaning), fromRows: builder.finish() };
  }

  it('makes the index a build from the row table makes, to the byte once stored', async () => {
    const rowArbitrary = fc.record({
      tp: fc.integer({ min: 1, max: 5 }),
      lvl: fc.integer({ min: 1, max: 3 }),
      facets: fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 6 })),
      texts: fc.tuple(fc.constantFrom(...TEXTS), fc.constantFrom(...TEXTS)),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArbitrary, { minLength: 1, maxLength: 200 }),
        // Final ids by local id: periods in any order, some locals without a final id (0 in the row table).
        fc.shuffledSubarray([101, 102, 103, 104, 105, 106, 107], { minLength: 5, maxLength: 5 }),
        fc.array(
          fc.array(fc.option(fc.integer({ min: 1, max: 5000 }), { nil: undefined, freq: 8 }), {
            minLength: 30,
            maxLength: 30,
          }),
          { minLength: 3, maxLength: 3 },
        ),
        fc.boolean(),
        fc.constantFrom(['l_la', 'l_reg', 'f1'], ['f1', 'l_reg', 'l_la']),
        async (rows, tp, facets, shuffledIds, facetOrder) => {
          const rowIds = shuffledIds ? Int32Array.from(rows.map((_, r) => ((r * 7919) % rows.length) + 1)) : undefined;
          // Row ids a permutation of 1..n only when 7919 and n have no common factor; else file order.
          const ids = rowIds && new Set(rowIds).size === rows.length ? rowIds : undefined;
          const { collected, fromRows } = bothWays(rows, { tp, facets }, ids, facetOrder);
          expect(encodeRowIndex(await collected, 'v1')).toEqual(encodeRowIndex(fromRows, 'v1'));
        },
      ),
      { seed: 29, numRuns: 150 },
    );
  });

  it('holds more rows than a chunk and local ids beyond two bytes', async () => {
    const n = 140000;
    const rows: FileRow[] = Array.from({ length: n }, (_, r) => ({
      tp: 1 + (r % 3),
      lvl: 1 + (r % 2),
      facets: [r < 70000 ? 1 + (r % 10) : 1 + r, 1 + (r % 4), r % 5],
      texts: [String(r % 1000), r % 97 === 0 ? 'x' : `${r % 50}.5`],
    }));
    const facetFinals = [Array.from({ length: n + 1 }, (_, l) => 10 + l), [1, 2, 3, 4], [7, 8, 9, 10]];
    const { collected, fromRows } = bothWays(rows, { tp: [3, 1, 2], facets: facetFinals }, undefined, COLUMNS);
    const stored = (encoded: { facets: Buffer[]; values: Buffer[] }) =>
      Buffer.concat([...encoded.facets, ...encoded.values]);
    const expected = stored(encodeRowIndex(fromRows, 'v1'));
    expect(expected.length).toBeGreaterThan(n * 5);
    expect(stored(encodeRowIndex(await collected, 'v1')).equals(expected)).toBe(true);
  });
});

describe('joinWithoutCopy (a stored piece inflated as zlib slices of one buffer)', () => {
  it('gives consecutive views of one memory back as one view of it, anything else as a copy, byte for byte', () => {
    const memory = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
    const joined = joinWithoutCopy([memory.subarray(10, 30), memory.subarray(30, 31), memory.subarray(31, 90)]);
    const gap = joinWithoutCopy([memory.subarray(0, 10), memory.subarray(11, 20)]);
    expect([...joined]).toEqual(Array.from({ length: 80 }, (_, i) => i + 10));
    expect([...gap]).toEqual([
      ...Array.from({ length: 10 }, (_, i) => i),
      ...Array.from({ length: 9 }, (_, i) => i + 11),
    ]);
    // A view sees a later change of the memory; a copy does not.
    memory[10] = 200;
    memory[0] = 201;
    expect(joined[0]).toBe(200);
    expect(gap[0]).toBe(0);
    const other = Buffer.from([7, 8]);
    expect([...joinWithoutCopy([memory.subarray(1, 3), other])]).toEqual([1, 2, 7, 8]);
    expect(joinWithoutCopy([other])).toBe(other);
    expect(joinWithoutCopy([]).length).toBe(0);
  });
});
