import { describe, expect, it } from 'vitest';
import { parseGetQuery } from '../../../../src/statistics/query/http/parse-get.js';
import { parsePostBody } from '../../../../src/statistics/query/http/parse-post.js';
import { resolveQuery } from '../../../../src/statistics/query/engine/resolve.js';
import { resultColumns } from '../../../../src/statistics/query/engine/results.js';
import {
  countSql,
  leadWithTimePeriod,
  pageMatchesFirst,
  pageSql,
} from '../../../../src/statistics/query/engine/sql/repository.js';
import { absenceLikeMeta, compiler } from './fake-meta.js';

const meta = absenceLikeMeta();

function compiled(body: unknown) {
  const query = resolveQuery(meta, parsePostBody(body));
  const count = countSql(meta.rowsTable, query.predicate).compile(compiler);
  const page = pageSql(
    meta.rowsTable,
    query.predicate,
    query.sorts,
    resultColumns(meta, query),
    query.pageSize,
    (query.page - 1) * query.pageSize,
  ).compile(compiler);
  return {
    count: { sql: count.sql, parameters: count.parameters },
    page: { sql: page.sql, parameters: page.parameters },
    warnings: query.warnings,
  };
}

describe('criteria → SQL (snapshots; values are always bound parameters)', () => {
  it('a page found matches first: every matching row (with its sort columns) before the sort, then the page', () => {
    const query = resolveQuery(
      meta,
      parsePostBody({
        criteria: { locations: { eq: { level: 'LA', id: '7zXob' } } },
        sorts: [{ field: 'timePeriod', direction: 'Desc' }],
      }),
    );
    const page = pageSql(meta.rowsTable, query.predicate, query.sorts, ['id', 'i1'], 100, 200, true).compile(compiler);
    expect({ sql: page.sql, parameters: page.parameters }).toMatchInlineSnapshot(`
      {
        "parameters": [
          1,
          100,
          200,
        ],
        "sql": "WITH matched AS MATERIALIZED (
        SELECT "data"."id", "data"."time_period_id" FROM "stats_data"."v1" AS data WHERE "data"."l_la" = $1
      ), page_ids AS (
        SELECT data.id FROM matched AS data ORDER BY "data"."time_period_id" DESC, data.id ASC LIMIT $2 OFFSET $3
      )
      SELECT "data"."id", "data"."i1" FROM "stats_data"."v1" AS data JOIN page_ids ON page_ids.id = data.id ORDER BY "data"."time_period_id" DESC, data.id ASC",
      }
    `);
  });

  it('lets a time period of few rows lead an AND: its filter and level terms are written so that no index matches them', () => {
    const body = {
      criteria: {
        and: [
          { filters: { eq: 'dP0Zw' } },
          { geographicLevels: { eq: 'LA' } },
          { locations: { eq: { level: 'LA', id: '7zXob' } } },
          { timePeriods: { eq: { period: '2021/2022', code: 'AY' } } },
          { not: { filters: { in: ['pTSoj', 'IzBzg'] } } },
        ],
      },
    };
    const { predicate } = resolveQuery(meta, parsePostBody(body));
    const led = countSql(meta.rowsTable, leadWithTimePeriod(predicate, 50000)).compile(compiler);
    expect(led.sql).toMatchInlineSnapshot(
      `"SELECT count(*)::integer AS total FROM "stats_data"."v1" AS data WHERE (("data"."f1" + 0) = $1 AND ("data"."geographic_level" || '') = $2 AND "data"."l_la" = $3 AND "data"."time_period_id" = $4 AND ("data"."f2" + 0) <> ALL($5::integer[]))"`,
    );
    // Periods of many rows (or two periods of 150,000): the plan is PostgreSQL's own.
    expect(countSql(meta.rowsTable, leadWithTimePeriod(predicate, 250000)).compile(compiler).sql).toBe(
      countSql(meta.rowsTable, predicate).compile(compiler).sql,
    );
    expect(leadWithTimePeriod(predicate, 250000)).toEqual(predicate);
  });

  it('finds a page matches first when few rows match (at most 20,000, or the square root of rows × the page end)', () => {
    expect(pageMatchesFirst(20000, 5000000, 0, 10)).toBe(true);
    expect(pageMatchesFirst(20001, 5000000, 0, 10)).toBe(false);
    expect(pageMatchesFirst(70000, 5000000, 0, 1000)).toBe(true);
    expect(pageMatchesFirst(71000, 5000000, 0, 1000)).toBe(false);
    expect(pageMatchesFirst(220000, 5000000, 9000, 1000)).toBe(true);
  });

  it('no criteria: everything, default order time period DESC then id', () => {
    expect(compiled(null)).toMatchInlineSnapshot(`
      {
        "count": {
          "parameters": [],
          "sql": "SELECT count(*)::integer AS total FROM "stats_data"."v1" AS data WHERE TRUE",
        },
        "page": {
          "parameters": [
            1000,
            0,
          ],
          "sql": "WITH page_ids AS (
        SELECT data.id FROM "stats_data"."v1" AS data WHERE TRUE ORDER BY "data"."time_period_id" DESC, data.id ASC LIMIT $1 OFFSET $2
      )
      SELECT "data"."id", "data"."time_period_id", "data"."geographic_level", "data"."l_la", "data"."l_nat", "data"."l_reg", "data"."l_sch", "data"."f1", "data"."f2", "data"."f3", "data"."i1", "data"."i2" FROM "stats_data"."v1" AS data JOIN page_ids ON page_ids.id = data.id ORDER BY "data"."time_period_id" DESC, data.id ASC",
        },
        "warnings": [],
      }
    `);
  });

  it('case 66 mixture: facets AND-joined; an in list across filters is an OR; notIn across levels an AND', () => {
    const { count } = compiled({
      criteria: {
        filters: { notEq: 'LxWjE', in: ['O7CLF', '7zXob'] },
        geographicLevels: { notEq: 'NAT' },
        locations: {
          eq: { level: 'NAT', id: 'IzBzg' },
          notIn: [
            { level: 'REG', code: 'E13000002' },
            { level: 'LA', oldCode: '370' },
          ],
        },
        timePeriods: { gt: { period: '2020/2021', code: 'AY' }, lt: { period: '2022/2023', code: 'AY' } },
      },
    });
    expect(count).toMatchInlineSnapshot(`
      {
        "parameters": [
          7,
          [
            2,
            3,
          ],
          "NAT",
          5,
          6,
          2,
          1,
          3,
        ],
        "sql": "SELECT count(*)::integer AS total FROM "stats_data"."v1" AS data WHERE ("data"."f2" <> $1 AND "data"."f1" = ANY($2::integer[]) AND "data"."geographic_level" <> $3 AND "data"."l_nat" = $4 AND "data"."l_reg" <> $5 AND "data"."l_la" <> $6 AND "data"."time_period_id" > $7 AND "data"."time_period_id" < $8)",
      }
    `);
  });

  it('in across two filters becomes an OR of per-column lists', () => {
    const { count } = compiled({ criteria: { filters: { in: ['HTzLj', '0kT5D', 'O7CLF', '7zXob'] } } });
    expect(count.sql).toBe(
      'SELECT count(*)::integer AS total FROM "stats_data"."v1" AS data WHERE ("data"."f3" = ANY($1::integer[]) OR "data"."f1" = ANY($2::integer[]))',
    );
    expect(count.parameters).toEqual([
      [10, 9],
      [2, 3],
    ]);
    const notIn = compiled({ criteria: { filters: { notIn: ['HTzLj', '0kT5D', 'O7CLF', '7zXob'] } } });
    expect(notIn.count.sql).toContain('("data"."f3" <> ALL($1::integer[]) AND "data"."f1" <> ALL($2::integer[]))');
  });

  it('not over a facets object ORs its facet types (the reference quirk); nested and/or keep their joins', () => {
    const { count } = compiled({
      criteria: {
        not: {
          filters: { in: ['6jrfe', 'LxWjE'] },
          geographicLevels: { in: ['NAT', 'REG', 'LA'] },
          timePeriods: { in: [{ period: '2020/2021', code: 'AY' }] },
        },
      },
    });
    expect(count.sql).toBe(
      'SELECT count(*)::integer AS total FROM "stats_data"."v1" AS data WHERE NOT ("data"."f3" = $1 OR "data"."f2" = $2 OR "data"."geographic_level" = ANY($3::text[]) OR "data"."time_period_id" = $4)',
    );
    const nested = compiled({
      criteria: {
        and: [
          { or: [{ filters: { eq: 'IzBzg' } }, { filters: { eq: 'it6Xr' } }] },
          { not: { and: [{ geographicLevels: { eq: 'NAT' } }] } },
        ],
      },
    });
    expect(nested.count.sql).toBe(
      'SELECT count(*)::integer AS total FROM "stats_data"."v1" AS data WHERE (("data"."f2" = $1 OR "data"."f2" = $2) AND "data"."geographic_level" <> $3)',
    );
  });

  it('unknown values: eq/in/gt become FALSE, notEq/notIn TRUE, each with a warning at its path', () => {
    const result = compiled({
      criteria: {
        and: [
          { filters: { notEq: 'nope', notIn: ['nope2'] } },
          {
            or: [
              { filters: { eq: 'nope' } },
              { timePeriods: { gte: { period: '2030', code: 'CY' } } },
              {
                locations: {
                  in: [
                    { level: 'LA', code: 'E08000019' },
                    { level: 'LA', code: 'X' },
                  ],
                },
              },
            ],
          },
        ],
      },
    });
    expect(result.count.sql).toBe(
      'SELECT count(*)::integer AS total FROM "stats_data"."v1" AS data WHERE "data"."l_la" = $1',
    );
    expect(result.warnings).toEqual([
      {
        code: 'FiltersNotFound',
        message: 'One or more filters could not be found.',
        path: 'criteria.and[0].filters.notEq',
        detail: { items: ['nope'] },
      },
      {
        code: 'FiltersNotFound',
        message: 'One or more filters could not be found.',
        path: 'criteria.and[0].filters.notIn',
        detail: { items: ['nope2'] },
      },
      {
        code: 'FiltersNotFound',
        message: 'One or more filters could not be found.',
        path: 'criteria.and[1].or[0].filters.eq',
        detail: { items: ['nope'] },
      },
      {
        code: 'TimePeriodsNotFound',
        message: 'One or more time periods could not be found.',
        path: 'criteria.and[1].or[1].timePeriods.gte',
        detail: { items: [{ period: '2030', code: 'CY' }] },
      },
      {
        code: 'LocationsNotFound',
        message: 'One or more locations could not be found.',
        path: 'criteria.and[1].or[2].locations.in',
        detail: { items: [{ level: 'LA', code: 'X' }] },
      },
    ]);
  });

  it('a location code shared by several locations of the level matches all of them', () => {
    const shared = absenceLikeMeta();
    const twin = { ...shared.locationsById.get(4)!, id: 40, publicId: 'twin1', label: 'Sheffield (old boundary)' };
    shared.locationsById.set(40, twin);
    shared.locationsByLevel.get('LA')!.push(twin);
    const query = resolveQuery(
      shared,
      parseGetQuery({ 'locations.eq': 'LA|code|E08000019', 'locations.notIn': 'LA|id|twin1' }).request,
    );
    const count = countSql(shared.rowsTable, query.predicate).compile(compiler);
    expect(count.sql).toBe(
      'SELECT count(*)::integer AS total FROM "stats_data"."v1" AS data WHERE ("data"."l_la" = ANY($1::integer[]) AND "data"."l_la" <> $2)',
    );
    expect(count.parameters).toEqual([[4, 40], 40]);
  });

  it('GET warnings quote the strings as sent', () => {
    const query = resolveQuery(
      meta,
      parseGetQuery({ 'timePeriods.in': ['2020/2021|AY', '2021|CY', '2030|CY', '2021|CY'] }).request,
    );
    expect(query.warnings).toEqual([
      {
        code: 'TimePeriodsNotFound',
        message: 'One or more time periods could not be found.',
        path: 'timePeriods.in',
        detail: { items: ['2021|CY', '2030|CY'] },
      },
    ]);
  });

  it('sorts: ranks for labels, numeric-then-text indicators, id tie-breaker', () => {
    const { page } = compiled({
      indicators: ['dP0Zw'],
      sorts: [
        { field: 'geographicLevel', direction: 'Asc' },
        { field: 'location|LA', direction: 'Desc' },
        { field: 'filter|O7CLF', direction: 'Asc' },
        { field: 'indicator|dP0Zw', direction: 'Desc' },
      ],
      page: 3,
      pageSize: 10,
    });
    expect(page.sql).toContain(
      'ORDER BY array_position($1::text[], "data"."geographic_level") ASC, array_position($2::integer[], "data"."l_la") DESC, "data"."f2" ASC, (CASE WHEN "data"."i1" ~ $3 THEN "data"."i1"::numeric END) DESC, "data"."i1" COLLATE "C" DESC, data.id ASC LIMIT $4 OFFSET $5',
    );
    expect(page.parameters.slice(1, 2)).toEqual([[1, 2, 3, 4]]);
    expect(page.parameters.slice(3, 5)).toEqual([10, 20]);
  });

  it('unknown indicators and sort fields are one 400 listing both', () => {
    expect(() =>
      resolveQuery(
        meta,
        parsePostBody({
          indicators: ['x1', 'x2', 'x1'],
          sorts: [
            { field: 'timePeriod', direction: 'Asc' },
            { field: 'filter', direction: 'Asc' },
            { field: 'filter|invalid', direction: 'Asc' },
            { field: 'location|WARD', direction: 'Asc' },
            { field: 'indicator|O7CLF', direction: 'Asc' },
          ],
        }),
      ),
    ).toThrowError(
      expect.objectContaining({
        errors: [
          {
            path: 'indicators',
            code: 'IndicatorsNotFound',
            message: 'One or more indicators could not be found.',
            detail: { items: ['x1', 'x2'] },
          },
          {
            path: 'sorts',
            code: 'SortFieldsNotFound',
            message: 'One or more sort fields could not be found.',
            detail: {
              items: [
                { field: 'filter', direction: 'Asc' },
                { field: 'filter|invalid', direction: 'Asc' },
                { field: 'location|WARD', direction: 'Asc' },
                { field: 'indicator|O7CLF', direction: 'Asc' },
              ],
            },
          },
        ],
      }),
    );
  });
});
