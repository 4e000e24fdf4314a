import { describe, expect, it } from 'vitest';
import { TRUE, type ResolvedQuery } from '../../../../src/statistics/query/engine/resolve.js';
import { writeResponseJson } from '../../../../src/statistics/query/engine/json-output.js';
import { databasePageRows } from '../../../../src/statistics/query/engine/page-rows.js';
import { indexedPageRows } from '../../../../src/statistics/query/engine/index/engine.js';
import { RowIndexBuilder } from '../../../../src/statistics/query/engine/index/row-index-builder.js';
import { debugLocation } from '../../../../src/statistics/query/engine/results.js';
import { locationColumn } from '../../../../src/statistics/standard/geographic-levels.js';
import type { VersionMeta } from '../../../../src/statistics/query/engine/version-meta-cache.js';
import { absenceLikeMeta } from './fake-meta.js';

/** The response as objects, built the obvious way (what the API documents), for JSON.stringify to compare with. */
function expectedResponse(
  meta: VersionMeta,
  query: ResolvedQuery,
  rows: Array<Record<string, unknown>>,
  total: number,
) {
  const results = rows.map((row) => {
    const timePeriod = meta.timePeriodsById.get(Number(row.time_period_id));
    const locations: Record<string, string> = {};
    for (const level of meta.locationLevels) {
      const location = meta.locationsById.get(Number(row[locationColumn(level)]));
      if (location) locations[level] = query.debug ? debugLocation(location) : location.publicId;
    }
    const filters: Record<string, string> = {};
    for (const filter of meta.filters) {
      const option = meta.optionsById.get(Number(row[filter.column]));
      if (!option) continue;
      if (query.debug) filters[`${filter.publicId} :: ${filter.columnName}`] = `${option.publicId} :: ${option.label}`;
      else filters[filter.publicId] = option.publicId;
    }
    const values: Record<string, string> = {};
    for (const indicator of query.indicators) {
      const value = row[indicator.column];

      values[query.debug ? `${indicator.publicId} :: ${indicator.columnName}` : indicator.publicId] =
        value === null || value === undefined ? '' : String(value);
    }
    return {
      timePeriod: { code: timePeriod?.code ?? '', period: timePeriod?.period ?? '' },
      geographicLevel: String(row.geographic_level),
      locations,
      filters,
      values,
    };
  });
  const warnings = [
    ...query.warnings,
    ...(query.debug ? [{ code: 'DebugEnabled' }] : []),
    ...(total === 0 ? [{ code: 'NoResults' }] : []),
  ];
  return {
    paging: {
      page: query.page,
      pageSize: query.pageSize,
      totalResults: total,
      totalPages: Math.trunc((total - 1) / query.pageSize) + 1,
    },
    results,
    warnings,
  };
}

describe('the query response JSON', () => {
  const meta = absenceLikeMeta();
  const query = (debug: boolean): ResolvedQuery => ({
    predicate: TRUE,
    warnings: [],
    indicators: [...meta.indicators].reverse(),
    sorts: [],
    page: 2,
    pageSize: 3,
    debug,
  });
  // As PostgreSQL gives them: ids as numbers (NULL where a row has no location of a level or no option), values as text.
  const rows: Array<Record<string, unknown>> = [
    {
      id: 1,
      time_period_id: 2,
      geographic_level: 'LA',
      l_la: 1,
      l_nat: 5,
      l_reg: 6,
      l_sch: null,
      f1: 1,
      f2: 4,
      f3: 8,
      i1: '12',
      i2: 'c',
    },
    {
      id: 2,
      time_period_id: 1,
      geographic_level: 'NAT',
      l_la: null,
      l_nat: 5,
      l_reg: null,
      l_sch: null,
      f1: 3,
      f2: null,
      f3: 10,
      i1: '0.5',
      i2: null,
    },
    {
      id: 3,
      time_period_id: 3,
      geographic_level: 'SCH',
      l_la: 3,
      l_nat: 5,
      l_reg: 7,
      l_sch: 12,
      f1: 2,
      f2: 7,
      f3: 9,
      i1: 'say "x" \\ y',
      i2: '',
    },
  ];

  it.each([false, true])(
    'is what JSON.stringify gives for the response objects (debug: %s), key order included',
    (debug) => {
      expect(Object.keys(rows[0]!)).toEqual(expect.arrayContaining(meta.locationLevels.map(locationColumn)));
      const written = writeResponseJson(meta, query(debug), databasePageRows(rows), 7).toString();
      const expected = expectedResponse(meta, query(debug), rows, 7);
      // Warnings carry their messages: compared by code, the rest of the text exactly.
      const parsed = JSON.parse(written) as { warnings: Array<{ code: string }> };
      expect(parsed.warnings.map((w) => w.code)).toEqual(expected.warnings.map((w) => w.code));
      expect(written).toBe(JSON.stringify({ ...expected, warnings: parsed.warnings }));
    },
  );

  it.each([false, true])(
    'is the same bytes from the row index as from the same rows read from PostgreSQL (debug: %s)',
    (debug) => {
      // Many rows, a time period and a level at a time, as the index holds them; ids without an option (NULL) left out.
      const many: Array<Record<string, unknown> & { id: number }> = Array.from({ length: 600 }, (_, i) => ({
        ...rows[Math.floor(i / 200)]!,
        id: i + 1,
      }));
      const facets = ['l_la', 'l_nat', 'l_reg', 'l_sch', 'f1', 'f2', 'f3'];
      const ordered = [...many].sort((a, b) => Number(b.time_period_id) - Number(a.time_period_id) || a.id - b.id);
      const builder = new RowIndexBuilder(ordered.length, facets, ['i1', 'i2']);
      for (const row of ordered)
        builder.add(
          row.id,
          Number(row.time_period_id),
          String(row.geographic_level),
          facets.map((f) => Number(row[f] ?? 0)),
          [String(row.i1 ?? ''), String(row.i2 ?? '')],
        );
      const index = builder.finish();
      const positions = Int32Array.from(ordered.keys());
      const fromIndex = writeResponseJson(meta, query(debug), indexedPageRows(index, positions), 600);
      const fromDatabase = writeResponseJson(meta, query(debug), databasePageRows(ordered), 600);
      expect(fromIndex.toString()).toBe(fromDatabase.toString());
      expect(JSON.parse(fromIndex.toString()).results).toHaveLength(600);
    },
  );

  it('writes an empty page with the NoResults warning', () => {
    const written = JSON.parse(writeResponseJson(meta, query(false), databasePageRows([]), 0).toString()) as {
      results: unknown[];
      paging: unknown;
      warnings: Array<{ code: string }>;
    };
    expect(written.results).toEqual([]);
    expect(written.paging).toEqual({ page: 2, pageSize: 3, totalResults: 0, totalPages: 1 });
    expect(written.warnings.map((w) => w.code)).toEqual(['NoResults']);
  });

  it('writes a page longer than one piece of its output (64 KB) whole, with non-ASCII text intact', () => {
    // 3,000 rows of about 240 bytes: the text is turned into bytes ten times along the way.
    const many = Array.from({ length: 3000 }, (_, i) => ({
      ...rows[i % 3]!,
      id: i + 1,
      i2: `é ${'€'.repeat(i % 7)} "${i}"`,
    }));
    const written = writeResponseJson(meta, query(false), databasePageRows(many), 3000);
    const expected = expectedResponse(meta, query(false), many, 3000);
    expect(written.length).toBeGreaterThan(10 * 64 * 1024);
    expect(written.toString()).toBe(JSON.stringify({ ...expected, warnings: [] }));
  });
});
