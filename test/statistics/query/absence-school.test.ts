import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RowIndexStore } from '../../../src/statistics/query/engine/index.js';
import { loadQueryVersionMeta } from '../../../src/statistics/query/engine/version-meta-cache.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { ABSENCE_SCHOOL } from '../../helpers/statistics.js';

/**
 * The reference's behaviour cases over the AbsenceSchool fixture, with the reference's exact counts and values,
 * through GET and POST, on every engine: SQL only, the stored columns (the cold path), and the in-memory row index
 * (with its values, or with a page's values from the stored columns).
 */
const URL = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;

let t: TestApp;
const rowIndexes = new RowIndexStore();
beforeAll(async () => {
  t = await buildTestApp({ QUERY_VERSION_CACHE_MS: '0' }, { rowIndexes });
});
afterAll(async () => {
  await t?.close();
});

type Query = Record<string, string | string[]>;

function toQueryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, v);
  return params.toString();
}

async function get(query: Query, headers: Record<string, string> = {}) {
  const qs = toQueryString(query);
  return t.app.inject({ method: 'GET', url: qs ? `${URL}?${qs}` : URL, headers });
}

async function post(body: unknown, headers: Record<string, string> = {}, url = URL) {
  return t.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body === undefined ? undefined : JSON.stringify(body),
  });
}

interface Row {
  timePeriod: { code: string; period: string };
  geographicLevel: string;
  locations: Record<string, string>;
  filters: Record<string, string>;
  values: Record<string, string>;
}

const rowsOf = (response: { json(): unknown }) => (response.json() as { results: Row[] }).results;

const SHEFFIELD = { level: 'LA', code: 'E08000019' };
const BARNSLEY = { level: 'LA', id: 'dP0Zw' };

/** [name, GET query, POST criteria, expected total]. */
const COUNTS: Array<[string, Query, unknown, number]> = [
  ['filters.eq', { 'filters.eq': 'IzBzg' }, { filters: { eq: 'IzBzg' } }, 54],
  ['filters.notEq', { 'filters.notEq': 'IzBzg' }, { filters: { notEq: 'IzBzg' } }, 162],
  ['filters.in', { 'filters.in': 'IzBzg,LxWjE' }, { filters: { in: ['IzBzg', 'LxWjE'] } }, 108],
  ['filters.notIn', { 'filters.notIn': ['IzBzg', 'LxWjE'] }, { filters: { notIn: ['IzBzg', 'LxWjE'] } }, 108],
  [
    'filters.in across filters',
    { 'filters.in': 'HTzLj,0kT5D,O7CLF,7zXob' },
    { filters: { in: ['HTzLj', '0kT5D', 'O7CLF', '7zXob'] } },
    150,
  ],
  [
    'filters.notIn across filters',
    { 'filters.notIn': 'HTzLj,0kT5D,O7CLF,7zXob' },
    { filters: { notIn: ['HTzLj', '0kT5D', 'O7CLF', '7zXob'] } },
    66,
  ],
  ['geographicLevels.eq', { 'geographicLevels.eq': 'LA' }, { geographicLevels: { eq: 'LA' } }, 132],
  ['geographicLevels.notEq', { 'geographicLevels.notEq': 'LA' }, { geographicLevels: { notEq: 'LA' } }, 84],
  ['geographicLevels.in', { 'geographicLevels.in': 'REG,LA' }, { geographicLevels: { in: ['REG', 'LA'] } }, 180],
  [
    'geographicLevels.notIn',
    { 'geographicLevels.notIn': 'REG,LA' },
    { geographicLevels: { notIn: ['REG', 'LA'] } },
    36,
  ],
  ['locations.eq', { 'locations.eq': 'LA|code|E08000019' }, { locations: { eq: SHEFFIELD } }, 36],
  ['locations.notEq', { 'locations.notEq': 'LA|code|E08000019' }, { locations: { notEq: SHEFFIELD } }, 180],
  ['locations.in one', { 'locations.in': 'LA|code|E08000019' }, { locations: { in: [SHEFFIELD] } }, 36],
  ['locations.notIn one', { 'locations.notIn': 'LA|code|E08000019' }, { locations: { notIn: [SHEFFIELD] } }, 180],
  [
    'locations.in same level',
    { 'locations.in': ['LA|code|E08000019', 'LA|id|dP0Zw'] },
    { locations: { in: [SHEFFIELD, BARNSLEY] } },
    72,
  ],
  [
    'locations.notIn same level',
    { 'locations.notIn': 'LA|code|E08000019,LA|id|dP0Zw' },
    { locations: { notIn: [SHEFFIELD, BARNSLEY] } },
    144,
  ],
  [
    'locations.in levels',
    { 'locations.in': ['LA|code|E08000019', 'LA|id|dP0Zw', 'SCH|laEstab|3144001', 'SCH|urn|102579'] },
    { locations: { in: [SHEFFIELD, BARNSLEY, { level: 'SCH', laEstab: '3144001' }, { level: 'SCH', urn: '102579' }] } },
    84,
  ],
  [
    'locations.notIn levels',
    { 'locations.notIn': ['LA|code|E08000019', 'LA|id|dP0Zw', 'SCH|laEstab|3144001', 'SCH|urn|102579'] },
    {
      locations: {
        notIn: [SHEFFIELD, BARNSLEY, { level: 'SCH', laEstab: '3144001' }, { level: 'SCH', urn: '102579' }],
      },
    },
    132,
  ],
  [
    'timePeriods.eq',
    { 'timePeriods.eq': '2021/2022|AY' },
    { timePeriods: { eq: { period: '2021/2022', code: 'AY' } } },
    72,
  ],
  [
    'timePeriods.notEq',
    { 'timePeriods.notEq': '2021/2022|AY' },
    { timePeriods: { notEq: { period: '2021/2022', code: 'AY' } } },
    144,
  ],
  [
    'timePeriods.gt',
    { 'timePeriods.gt': '2021/2022|AY' },
    { timePeriods: { gt: { period: '2021/2022', code: 'AY' } } },
    72,
  ],
  [
    'timePeriods.gte',
    { 'timePeriods.gte': '2021/2022|AY' },
    { timePeriods: { gte: { period: '2021/2022', code: 'AY' } } },
    144,
  ],
  [
    'timePeriods.lt',
    { 'timePeriods.lt': '2021/2022|AY' },
    { timePeriods: { lt: { period: '2021/2022', code: 'AY' } } },
    72,
  ],
  ['timePeriods.lte', { 'timePeriods.lte': '2021|AY' }, { timePeriods: { lte: { period: '2021', code: 'AY' } } }, 144],
  [
    'timePeriods.in',
    { 'timePeriods.in': '2021|AY,2022/2023|AY' },
    {
      timePeriods: {
        in: [
          { period: '2021', code: 'AY' },
          { period: '2022/2023', code: 'AY' },
        ],
      },
    },
    144,
  ],
  [
    'timePeriods.notIn',
    { 'timePeriods.notIn': '2021|AY,2022/2023|AY' },
    {
      timePeriods: {
        notIn: [
          { period: '2021', code: 'AY' },
          { period: '2022/2023', code: 'AY' },
        ],
      },
    },
    72,
  ],
  [
    'Total + NAT + 2020/21',
    { 'filters.eq': 'HTzLj', 'geographicLevels.eq': 'NAT', 'timePeriods.eq': '2020/2021|AY' },
    {
      filters: { eq: 'HTzLj' },
      geographicLevels: { eq: 'NAT' },
      timePeriods: { eq: { period: '2020/2021', code: 'AY' } },
    },
    4,
  ],
  [
    'primary + NAT',
    { 'filters.eq': '6jrfe', 'geographicLevels.eq': 'NAT' },
    { filters: { eq: '6jrfe' }, geographicLevels: { eq: 'NAT' } },
    6,
  ],
  [
    'Year 4 + England + 2020',
    { 'filters.eq': 'IzBzg', 'locations.eq': 'NAT|id|IzBzg', 'timePeriods.eq': '2020|AY' },
    {
      filters: { eq: 'IzBzg' },
      locations: { eq: { level: 'NAT', id: 'IzBzg' } },
      timePeriods: { eq: { period: '2020', code: 'AY' } },
    },
    18,
  ],
  [
    'Year 4 + LA + 2020',
    { 'filters.eq': 'IzBzg', 'geographicLevels.eq': 'LA', 'timePeriods.eq': '2020|AY' },
    { filters: { eq: 'IzBzg' }, geographicLevels: { eq: 'LA' }, timePeriods: { eq: { period: '2020', code: 'AY' } } },
    11,
  ],
  [
    'LA + Total',
    { 'geographicLevels.eq': 'LA', 'filters.eq': 'HTzLj' },
    { geographicLevels: { eq: 'LA' }, filters: { eq: 'HTzLj' } },
    48,
  ],
];

/** Case 66: all facets mixed → exactly one row, Newfield Secondary 2021/22. */
const MIXTURE_GET: Query = {
  'filters.notEq': 'LxWjE',
  'filters.in': 'O7CLF,7zXob',
  'geographicLevels.notEq': 'NAT',
  'locations.eq': 'NAT|id|IzBzg',
  'locations.notIn': ['REG|code|E13000002', 'LA|oldCode|370'],
  'timePeriods.gt': '2020/2021|AY',
  'timePeriods.lt': '2022/2023|AY',
};
const MIXTURE = {
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
};

function expectNewfield(rows: Row[]) {
  expect(rows).toHaveLength(1);
  expect(rows[0]).toEqual({
    timePeriod: { code: 'AY', period: '2021/2022' },
    geographicLevel: 'SCH',
    locations: { LA: 'O7CLF', NAT: 'IzBzg', REG: 'it6Xr', SCH: 'YPHKM' },
    filters: { dP0Zw: '7zXob', O7CLF: 'pTSoj', '7zXob': '0kT5D' },
    values: expect.objectContaining({ dP0Zw: '752009', O7CLF: '262396' }),
  });
}

describe.each(['sql', 'stored columns', 'row index', 'row index without indicator values'] as const)(
  'query engine: %s',
  (engine) => {
    beforeAll(async () => {
      rowIndexes.forget();
      const inMemory = engine.startsWith('row index');
      rowIndexes.configure({
        enabled: inMemory,
        storedColumns: engine !== 'sql',
        indicatorValues: engine === 'row index',
      });
      if (inMemory) {
        const version = await t.database.db
          .selectFrom('data_set_versions')
          .select(['id', 'rows_table'])
          .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
          .executeTakeFirstOrThrow();
        const index = await rowIndexes.ensure(
          t.database.db,
          await loadQueryVersionMeta(t.database.db, version.id, version.rows_table!),
        );
        expect(index?.size).toBe(216);
      }
    });

    it('case 1/70: no criteria → all 216 rows, GET, POST null and POST without a body', async () => {
      for (const response of [await get({}), await post(null), await post(undefined), await post({})]) {
        expect(response.statusCode).toBe(200);
        const body = response.json();
        expect(body.paging).toEqual({ page: 1, pageSize: 1000, totalResults: 216, totalPages: 1 });
        expect(body.results).toHaveLength(216);
        expect(body.warnings).toEqual([]);
      }
      const row = rowsOf(await post(null)).find((r) => r.values.dP0Zw === '296352');
      expect(row).toEqual({
        timePeriod: { code: 'AY', period: '2020/2021' },
        geographicLevel: 'LA',
        locations: { LA: 'dP0Zw', NAT: 'IzBzg', REG: 'it6Xr', SCH: 'arLPb' },
        filters: { dP0Zw: 'dP0Zw', O7CLF: 'IzBzg', '7zXob': '6jrfe' },
        values: { dP0Zw: '296352', O7CLF: '1002108', '7zXob': '7368540', pTSoj: '285622', IzBzg: '3.9876' },
      });
    });

    it.each(COUNTS)('%s: GET and POST give the reference count', async (_name, query, criteria, total) => {
      const viaGet = await get({ ...query, indicators: 'O7CLF' });
      const viaPost = await post({ criteria, indicators: ['O7CLF'] });
      for (const response of [viaGet, viaPost]) {
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json().paging.totalResults).toBe(total);
        expect(response.json().results).toHaveLength(total);
        expect(response.json().warnings).toEqual([]);
      }
      expect(viaGet.json().results).toEqual(viaPost.json().results);
    });

    it('case 20: paging', async () => {
      for (const [page, pageSize, results, totalPages] of [
        [1, 50, 50, 5],
        [3, 50, 50, 5],
        [1, 150, 150, 2],
        [2, 150, 66, 2],
        [1, 216, 216, 1],
        [3, 150, 0, 2],
      ] as const) {
        const viaGet = await get({ page: String(page), pageSize: String(pageSize) });
        const viaPost = await post({ page, pageSize });
        for (const response of [viaGet, viaPost]) {
          expect(response.json().paging).toEqual({ page, pageSize, totalResults: 216, totalPages });
          expect(response.json().results).toHaveLength(results);
        }
      }
      // Pages partition the default order.
      const all = rowsOf(await get({ pageSize: '216' }));
      const pages = [
        ...rowsOf(await get({ pageSize: '100' })),
        ...rowsOf(await get({ page: '2', pageSize: '100' })),
        ...rowsOf(await get({ page: '3', pageSize: '100' })),
      ];
      expect(pages).toEqual(all);
    });

    it('case 62: no results → 200 with the NoResults warning', async () => {
      const response = await get({ 'locations.eq': 'LA|id|dP0Zw', 'geographicLevels.eq': 'NAT' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({
        paging: { page: 1, pageSize: 1000, totalResults: 0, totalPages: 1 },
        results: [],
        warnings: [
          {
            code: 'NoResults',
            message: 'The query did not match any results. You may need to refine your criteria.',
            path: 'results',
            detail: { total: 0 },
          },
        ],
      });
    });

    it('case 64: first row under the default sort, one indicator', async () => {
      const [first] = rowsOf(await get({ indicators: 'O7CLF' }));
      expect(first).toEqual({
        timePeriod: { code: 'AY', period: '2022/2023' },
        geographicLevel: 'LA',
        locations: { LA: 'dP0Zw', NAT: 'IzBzg', REG: 'it6Xr' },
        filters: { O7CLF: 'IzBzg', '7zXob': 'HTzLj' },
        values: { O7CLF: '577798' },
      });
    });

    it('case 63/65: debug labels and the DebugEnabled warning', async () => {
      for (const response of [await get({ debug: 'true' }), await post({ debug: true })]) {
        const body = response.json();
        expect(body.warnings).toEqual([
          {
            code: 'DebugEnabled',
            message: 'Debug mode is enabled. Do not enable debug mode in a production environment.',
          },
        ]);
        const rows = body.results as Row[];
        const keys = new Set(rows.flatMap((r) => Object.keys(r.filters)));
        expect([...keys].sort()).toEqual(['7zXob :: school_type', 'O7CLF :: ncyear', 'dP0Zw :: academy_type']);
        const values = new Set(rows.flatMap((r) => Object.values(r.filters)));
        expect(values).toContain('IzBzg :: Year 4');
        const locations = new Set(rows.flatMap((r) => Object.values(r.locations)));
        expect(locations).toContain('O7CLF :: Sheffield (code = E08000019, oldCode = 373)');
        expect(locations).toContain('CpId1 :: Wren Academy Finchley (urn = 135507, laEstab = 3026906)');
        expect(locations).toContain('it6Xr :: Yorkshire and The Humber (code = E12000003)');
        expect(Object.keys(rows[0]!.values)).toContain('dP0Zw :: enrolments');
      }
    });

    it('case 66/67/68/69: and, or, not — every equivalent form of the criteria', async () => {
      expectNewfield(rowsOf(await get(MIXTURE_GET)));
      expectNewfield(rowsOf(await post({ criteria: MIXTURE })));
      const split = {
        and: [
          { filters: MIXTURE.filters },
          { and: [{ geographicLevels: MIXTURE.geographicLevels }, { locations: MIXTURE.locations }] },
          { timePeriods: MIXTURE.timePeriods },
        ],
      };
      expectNewfield(rowsOf(await post({ criteria: split })));
      const withOrAndNot = {
        and: [
          { or: [{ filters: { eq: 'O7CLF' } }, { filters: { eq: '7zXob' } }] },
          { filters: { notEq: 'LxWjE' } },
          { not: { geographicLevels: { eq: 'NAT' } } },
          { locations: MIXTURE.locations },
          { timePeriods: MIXTURE.timePeriods },
        ],
      };
      expectNewfield(rowsOf(await post({ criteria: withOrAndNot })));

      // Case 68: two time periods as one facet, an or of facets, nested ors, and an or of an and and an or.
      const base = { ...MIXTURE, timePeriods: undefined };
      const tp2122 = { period: '2021/2022', code: 'AY' };
      const tp2223 = { period: '2022/2023', code: 'AY' };
      const forms = [
        { ...base, timePeriods: { in: [tp2122, tp2223] } },
        { and: [base, { or: [{ timePeriods: { eq: tp2122 } }, { timePeriods: { eq: tp2223 } }] }] },
        { and: [base, { or: [{ or: [{ timePeriods: { eq: tp2122 } }] }, { or: [{ timePeriods: { eq: tp2223 } }] }] }] },
        {
          and: [base, { or: [{ and: [{ timePeriods: { eq: tp2122 } }] }, { or: [{ timePeriods: { eq: tp2223 } }] }] }],
        },
      ];
      for (const criteria of forms) {
        const rows = rowsOf(await post({ criteria }));
        expect(rows.map((r) => [r.timePeriod.period, r.values.dP0Zw, r.values.O7CLF])).toEqual([
          ['2022/2023', '751028', '175843'],
          ['2021/2022', '752009', '262396'],
        ]);
      }

      // Case 69: not over a facets object excludes rows matching any of its facets.
      const notFacets = {
        filters: { in: ['6jrfe', 'LxWjE'] },
        geographicLevels: { in: ['NAT', 'REG', 'LA'] },
        locations: {
          in: [
            { level: 'LA', code: 'E09000003' },
            { level: 'LA', code: 'E08000016' },
            { level: 'LA', code: 'E09000021 / E09000027' },
          ],
        },
        timePeriods: { in: [{ period: '2020/2021', code: 'AY' }, tp2223] },
      };
      for (const criteria of [
        { not: notFacets },
        { not: { not: { not: notFacets } } },
        { not: { or: Object.entries(notFacets).map(([k, v]) => ({ [k]: v })) } },
        { not: { not: { and: [MIXTURE] } } },
      ]) {
        expectNewfield(rowsOf(await post({ criteria })));
      }
    });

    it('case 32/33/36/41/50: unknown options, levels, locations and periods are warnings', async () => {
      const filters = await get({ 'filters.in': 'IzBzg,invalid,9999999', indicators: 'O7CLF' });
      expect(filters.statusCode).toBe(200);
      expect(filters.json().paging.totalResults).toBe(54);
      expect(filters.json().warnings).toEqual([
        {
          code: 'FiltersNotFound',
          message: 'One or more filters could not be found.',
          path: 'filters.in',
          detail: { items: ['invalid', '9999999'] },
        },
      ]);

      const post33 = await post({
        criteria: {
          filters: {
            eq: 'invalid',
            notEq: '9999999',
            in: ['IzBzg', 'invalid', '9999999'],
            notIn: ['IzBzg', 'invalid', '9999999'],
          },
        },
      });
      expect(
        post33.json().warnings.map((w: { code: string; path: string; detail: unknown }) => [w.code, w.path, w.detail]),
      ).toEqual([
        ['FiltersNotFound', 'criteria.filters.eq', { items: ['invalid'] }],
        ['FiltersNotFound', 'criteria.filters.notEq', { items: ['9999999'] }],
        ['FiltersNotFound', 'criteria.filters.in', { items: ['invalid', '9999999'] }],
        ['FiltersNotFound', 'criteria.filters.notIn', { items: ['invalid', '9999999'] }],
        ['NoResults', 'results', { total: 0 }],
      ]);

      const levels = await get({ 'geographicLevels.in': 'LA,WARD,OA,PA' });
      expect(levels.json().paging.totalResults).toBe(132);
      expect(levels.json().warnings).toEqual([
        {
          code: 'GeographicLevelsNotFound',
          message: 'One or more geographic levels could not be found.',
          path: 'geographicLevels.in',
          detail: { items: ['WARD', 'OA', 'PA'] },
        },
      ]);

      const unknownLocations = [
        'NAT|id|11111111',
        'NAT|code|11111111',
        'REG|id|22222222',
        'LA|id|33333333',
        'LA|code|4444444',
        'LA|oldCode|999',
        'SCH|id|55555555',
        'SCH|urn|666666',
        'SCH|laEstab|7777777',
      ];
      const locations = await get({ 'locations.in': ['LA|code|E08000016', ...unknownLocations] });
      expect(locations.json().warnings).toEqual([
        {
          code: 'LocationsNotFound',
          message: 'One or more locations could not be found.',
          path: 'locations.in',
          detail: { items: unknownLocations },
        },
      ]);
      const postLocations = await post({
        criteria: {
          locations: {
            in: [
              { level: 'LA', code: 'E08000016' },
              { level: 'PROV', ukprn: '88888888' },
            ],
          },
        },
      });
      expect(postLocations.json().warnings[0].detail).toEqual({ items: [{ level: 'PROV', ukprn: '88888888' }] });

      const periods = await get({
        'timePeriods.in': ['2020/2021|AY', '2021|CY', '2022|CY', '2030|CY', '2023/2024|AY', '2018/2019|AY'],
      });
      expect(periods.json().paging.totalResults).toBe(72);
      expect(periods.json().warnings).toEqual([
        {
          code: 'TimePeriodsNotFound',
          message: 'One or more time periods could not be found.',
          path: 'timePeriods.in',
          detail: { items: ['2021|CY', '2022|CY', '2030|CY', '2023/2024|AY', '2018/2019|AY'] },
        },
      ]);
    });

    it('case 55/56: default order is time period descending, then row id', async () => {
      const rows = rowsOf(
        await get({
          'filters.eq': 'HTzLj',
          'geographicLevels.eq': 'NAT',
          'timePeriods.eq': '2020/2021|AY',
          indicators: 'dP0Zw',
        }),
      );
      expect(rows.map((r) => r.values.dP0Zw)).toEqual(['930365', '390233', '966035', '687704']);
      const desc = rowsOf(await get({ 'filters.eq': '6jrfe', 'geographicLevels.eq': 'NAT', indicators: 'dP0Zw' }));
      expect(desc.map((r) => r.values.dP0Zw)).toEqual(['654884', '235647', '611553', '752711', '233870', '510682']);
      const asc = rowsOf(
        await get({
          'filters.eq': '6jrfe',
          'geographicLevels.eq': 'NAT',
          indicators: 'dP0Zw',
          sorts: 'timePeriod|Asc',
        }),
      );
      expect(asc.map((r) => r.values.dP0Zw)).toEqual(['233870', '510682', '611553', '752711', '654884', '235647']);
    });

    it('case 57/58/59/60/61: sorts by level, location, filter, indicator and several fields', async () => {
      const levels = async (direction: string) =>
        rowsOf(
          await get({
            'filters.eq': 'IzBzg',
            'locations.eq': 'NAT|id|IzBzg',
            'timePeriods.eq': '2020|AY',
            sorts: `geographicLevel|${direction}`,
          }),
        ).map((r) => r.geographicLevel);
      const asc = await levels('Asc');
      expect(asc).toHaveLength(18);
      expect([...new Set(asc)]).toEqual(['LA', 'NAT', 'REG', 'SCH']);
      expect([...new Set(await levels('Desc'))]).toEqual(['SCH', 'REG', 'NAT', 'LA']);

      const las = rowsOf(
        await post({
          criteria: {
            geographicLevels: { eq: 'LA' },
            filters: { eq: 'IzBzg' },
            timePeriods: { eq: { period: '2020', code: 'AY' } },
          },
          sorts: [{ field: 'location|LA', direction: 'Asc' }],
        }),
      );
      expect(las).toHaveLength(11);
      expect([...new Set(las.map((r) => r.locations.LA))]).toEqual(['7zXob', 'dP0Zw', 'pTSoj', 'O7CLF']);

      const years = async (direction: string) =>
        rowsOf(
          await get({ 'geographicLevels.eq': 'NAT', 'timePeriods.eq': '2020|AY', sorts: `filter|O7CLF|${direction}` }),
        ).map((r) => r.filters.O7CLF);
      expect([...new Set(await years('Asc'))]).toEqual(['pTSoj', 'IzBzg', 'it6Xr', 'LxWjE']);
      expect([...new Set(await years('Desc'))]).toEqual(['LxWjE', 'it6Xr', 'IzBzg', 'pTSoj']);

      const enrolments = async (direction: string) =>
        rowsOf(
          await get({
            'filters.eq': 'IzBzg',
            'geographicLevels.eq': 'REG',
            'timePeriods.eq': '2020|AY',
            indicators: 'dP0Zw',
            sorts: `indicator|dP0Zw|${direction}`,
          }),
        ).map((r) => r.values.dP0Zw);
      expect(await enrolments('Asc')).toEqual(['636969', '748965', '794394', '960185']);
      expect(await enrolments('Desc')).toEqual(['960185', '794394', '748965', '636969']);

      const multi = rowsOf(
        await get({
          'geographicLevels.eq': 'LA',
          'filters.eq': 'HTzLj',
          sorts: ['timePeriod|Asc', 'location|LA|Desc', 'filter|O7CLF|Asc'],
        }),
      );
      expect(multi).toHaveLength(48);
      const expected: string[] = [];
      for (const period of ['2020/2021', '2021/2022', '2022/2023']) {
        for (const la of ['O7CLF', 'pTSoj', 'dP0Zw', '7zXob'])
          for (const year of ['pTSoj', 'IzBzg', 'it6Xr', 'LxWjE']) expected.push(`${period} ${la} ${year}`);
      }
      expect(multi.map((r) => `${r.timePeriod.period} ${r.locations.LA} ${r.filters.O7CLF}`)).toEqual(expected);
    });

    it('indicator sorts are numeric when values are numbers (sess_unauthorised_percent)', async () => {
      const values = rowsOf(await get({ indicators: 'IzBzg', sorts: 'indicator|IzBzg|Asc' })).map((r) =>
        Number(r.values.IzBzg),
      );
      expect(values).toEqual([...values].sort((a, b) => a - b));
      expect(values[0]).toBe(0.2416);
      expect(values.at(-1)).toBe(14.8837);
    });

    it('case 28/54: unknown indicators and sort fields are a 400 (GET strings, POST objects)', async () => {
      const indicators = await get({ indicators: 'invalid1,invalid2,invalid3' });
      expect(indicators.statusCode).toBe(400);
      expect(indicators.json().errors).toEqual([
        {
          path: 'indicators',
          code: 'IndicatorsNotFound',
          message: 'One or more indicators could not be found.',
          detail: { items: ['invalid1', 'invalid2', 'invalid3'] },
        },
      ]);
      const sorts = [
        'timePeriod|Asc',
        'invalid1|Asc',
        'invalid2|Desc',
        'filter|Asc',
        'filter|invalid|Asc',
        'location|Asc',
        'location|invalid|Asc',
        'indicator|Asc',
        'indicator|invalid|Asc',
      ];
      const viaGet = await get({ sorts });
      expect(viaGet.statusCode).toBe(400);
      expect(viaGet.json().errors).toEqual([
        {
          path: 'sorts',
          code: 'SortFieldsNotFound',
          message: 'One or more sort fields could not be found.',
          detail: { items: sorts.slice(1) },
        },
      ]);
      const objects = sorts.map((s) => ({
        field: s.slice(0, s.lastIndexOf('|')),
        direction: s.slice(s.lastIndexOf('|') + 1),
      }));
      const viaPost = await post({ sorts: objects });
      expect(viaPost.json().errors[0].detail.items).toEqual(objects.slice(1));
    });
  },
);

describe('HTTP contract', () => {
  it('validation errors are the ValidationProblem body', async () => {
    const response = await get({ 'filters.eq': 'NonExistent', foo: 'x' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      title: 'One or more validation errors occurred.',
      status: 400,
      errors: [
        {
          path: 'foo',
          code: 'UnknownField',
          message: 'The field was not expected in the request and should be removed.',
        },
      ],
    });
    const rules = await get({ 'filters.eq': 'NonExistent' });
    expect(rules.json().errors).toEqual([
      {
        path: 'filters.eq',
        code: 'MaximumLength',
        message: 'Must be 10 characters or fewer (was 11).',
        detail: { maxLength: 10, totalLength: 11, value: 'NonExistent' },
      },
    ]);
    const postQuery = await post(null, {}, `${URL}?page=2`);
    expect(postQuery.json().errors).toEqual([
      {
        path: 'page',
        code: 'UnknownField',
        message: 'The field was not expected in the request and should be removed.',
      },
    ]);
  });

  it('404 for an unknown data set or version; validation first', async () => {
    expect(
      (await t.app.inject({ method: 'GET', url: '/v1/data-sets/00000000-0000-4000-8000-000000000000/query' }))
        .statusCode,
    ).toBe(404);
    expect((await get({ dataSetVersion: '2.0' })).statusCode).toBe(404);
    expect((await post(null, {}, `${URL}?dataSetVersion=9.*`)).statusCode).toBe(404);
    expect((await get({ dataSetVersion: '1.0' })).statusCode).toBe(200);
    expect(
      (
        await t.app.inject({
          method: 'GET',
          url: '/v1/data-sets/00000000-0000-4000-8000-000000000000/query?pageSize=0',
        })
      ).statusCode,
    ).toBe(400);
  });

  it('403 for a withdrawn version (it cannot be queried)', async () => {
    await t.database.db
      .updateTable('data_set_versions')
      .set({ status: 'Withdrawn' })
      .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
      .execute();
    try {
      expect((await get({ dataSetVersion: '1.0' })).statusCode).toBe(403);
      expect((await post(null, {}, `${URL}?dataSetVersion=1.0`)).statusCode).toBe(403);
    } finally {
      await t.database.db
        .updateTable('data_set_versions')
        .set({ status: 'Published' })
        .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
        .execute();
    }
  });

  it('a resolved version is reused for at most QUERY_VERSION_CACHE_MS: a withdrawal shows after that', async () => {
    const cached = await buildApp(
      loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: t.database.url, QUERY_VERSION_CACHE_MS: '300' }),
      { db: t.database.db, logger: false },
    );
    try {
      expect((await cached.inject({ method: 'GET', url: URL })).statusCode).toBe(200);
      await t.database.db
        .updateTable('data_set_versions')
        .set({ status: 'Withdrawn' })
        .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
        .execute();
      await new Promise((resolve) => setTimeout(resolve, 350));
      expect((await cached.inject({ method: 'GET', url: URL })).statusCode).toBe(403);
    } finally {
      await t.database.db
        .updateTable('data_set_versions')
        .set({ status: 'Published' })
        .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
        .execute();
      await cached.close();
    }
  });

  it('a body over 1 MB, a criteria tree deeper than 32 or over 1,000 conditions is a 400', async () => {
    const big = await post({ criteria: { filters: { in: Array.from({ length: 120000 }, (_, i) => `x${i}`) } } });
    expect(big.statusCode).toBe(400);
    expect(big.json().errors[0]).toMatchObject({ code: 'MaximumLength' });
    let deep: unknown = { filters: { eq: 'IzBzg' } };
    for (let i = 0; i < 33; i++) deep = { not: deep };
    const tooDeep = await post({ criteria: deep });
    expect(tooDeep.statusCode).toBe(400);
    expect(tooDeep.json().errors[0]).toMatchObject({ code: 'CriteriaMaxDepth' });
    const tooMany = await post({
      criteria: { or: Array.from({ length: 1001 }, () => ({ filters: { eq: 'IzBzg' } })) },
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().errors[0]).toMatchObject({ path: 'criteria', code: 'CriteriaMaxConditions' });
  });

  it('Accept: text/csv streams every matching row with labels', async () => {
    const response = await get(
      { 'geographicLevels.eq': 'NAT', 'filters.eq': 'HTzLj', indicators: 'dP0Zw', pageSize: '1' },
      { accept: 'text/csv' },
    );
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/csv/);
    const lines = response.body.trim().split('\n');
    expect(lines[0]).toBe(
      'time_period,time_identifier,geographic_level,Local authority,National,Regional,School,Academy type,National Curriculum year,School type,Enrolments',
    );
    expect(lines).toHaveLength(1 + 12);
    expect(lines[1]).toMatch(/^2022\/23,Academic year,National,,England,,,,Year \d+,Total,\d+$/);
    const viaPost = await post(
      { criteria: { geographicLevels: { eq: 'NAT' }, filters: { eq: 'HTzLj' } }, indicators: ['dP0Zw'] },
      { accept: 'text/csv' },
    );
    expect(viaPost.body).toBe(response.body);
  });
});
