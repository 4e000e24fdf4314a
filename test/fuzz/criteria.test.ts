import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loadQueryVersionMeta,
  RowIndexStore,
  StandardEngineChooser,
  type EngineContext,
  type EnginePurpose,
  type QueryEngineChooser,
  type ResolvedQuery,
} from '../../src/statistics/query/engine/index.js';
import { saveEngineForm } from '../../src/statistics/storage/engine-form.js';
import { buildRowIndex, rebuildStorage } from '../../src/statistics/storage/rebuild.js';
import { loadAllRows, NaiveEngine } from '../statistics/query/engine/naive-engine.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import {
  criteriaTest,
  expectedResult,
  FILTER_OPTIONS,
  FILTERS,
  INDICATORS,
  LEVEL_LABELS,
  loadModelRows,
  LOCATIONS,
  resultKey,
  type Comparators,
  type CriteriaInput,
  type FacetsInput,
  type LocationInput,
  type ModelRow,
  type TimePeriodComparators,
  type TimePeriodInput,
} from './absence-school-model.js';
import { databaseFingerprint, fuzzRuns, fuzzPropertyTimeoutMs } from './helpers.js';

/**
 * Property tests of the statistics query over the AbsenceSchool fixture: random criteria trees (POST, and the
 * facets-only ones also as GET query strings) give the same rows as a naive row-by-row evaluation of the tree
 * (absence-school-model.ts), on every engine (SQL, the row index, the stored columns); random and malformed bodies
 * never give a 5xx.
 * Fixed seeds and bounded runs, so a failure reproduces.
 */
const URL = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;
const SEED = 20261123;

let t: TestApp;
let rows: ModelRow[];
const rowIndexes = new RowIndexStore();

/** The app's chooser, or — for the `naive` runs — the test's own fourth engine, registered through the same interface. */
class SwitchableChooser implements QueryEngineChooser {
  naive: NaiveEngine | undefined;
  private readonly standard = new StandardEngineChooser(rowIndexes);
  choose(context: EngineContext, query: ResolvedQuery, purpose: EnginePurpose) {
    return this.naive ? Promise.resolve(this.naive) : this.standard.choose(context, query, purpose);
  }
}
const engines = new SwitchableChooser();
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '1000000' }, { rowIndexes, queryEngines: engines });
  rows = loadModelRows();
  expect(rows).toHaveLength(216);
});
afterAll(async () => {
  await t?.close();
});

// ---- arbitraries of valid criteria (values known and unknown to the data set) ----

const filterIdArb = fc.constantFrom(...Object.keys(FILTER_OPTIONS), 'zzzzz', 'A1');
const levelArb = fc.constantFrom('NAT', 'REG', 'LA', 'SCH', 'WARD', 'PROV');
const locationArb: fc.Arbitrary<LocationInput> = fc.oneof(
  fc.record({
    level: fc.constantFrom('NAT', 'REG', 'LA', 'SCH', 'WARD'),
    id: fc.constantFrom(...LOCATIONS.map((l) => l.id), 'nope1'),
  }),
  fc.record({
    level: fc.constant('LA'),
    code: fc.constantFrom(...LOCATIONS.filter((l) => l.level === 'LA').map((l) => l.code!), 'E09999999'),
  }),
  fc.record({ level: fc.constant('LA'), oldCode: fc.constantFrom('302', '370', '314', '373', '999') }),
  fc.record({
    level: fc.constant('SCH'),
    urn: fc.constantFrom(...LOCATIONS.filter((l) => l.level === 'SCH').map((l) => l.urn!), '100000'),
  }),
  fc.record({
    level: fc.constant('SCH'),
    laEstab: fc.constantFrom(...LOCATIONS.filter((l) => l.level === 'SCH').map((l) => l.laEstab!)),
  }),
  fc.record({
    level: fc.constantFrom('NAT', 'REG'),
    code: fc.constantFrom('E92000001', 'E13000002', 'E12000003', 'E00000000'),
  }),
);
const timePeriodArb: fc.Arbitrary<TimePeriodInput> = fc.oneof(
  fc.record({
    code: fc.constant('AY'),
    period: fc.constantFrom('2019', '2020', '2021', '2022', '2023', '2019/2020', '2020/2021', '2021/2022', '2022/2023'),
  }),
  fc.record({ code: fc.constantFrom('CY', 'T1', 'M3', 'FY'), period: fc.constantFrom('2020', '2021', '2022') }),
);

function comparatorsArb<T>(value: fc.Arbitrary<T>): fc.Arbitrary<Comparators<T>> {
  const list = fc.array(value, { minLength: 1, maxLength: 3 });
  return fc
    .record({ eq: value, notEq: value, in: list, notIn: list }, { requiredKeys: [] })
    .filter((set) => Object.keys(set).length > 0);
}

const timePeriodComparatorsArb: fc.Arbitrary<TimePeriodComparators> = fc
  .record(
    {
      eq: timePeriodArb,
      notEq: timePeriodArb,
      in: fc.array(timePeriodArb, { minLength: 1, maxLength: 3 }),
      notIn: fc.array(timePeriodArb, { minLength: 1, maxLength: 3 }),
      gt: timePeriodArb,
      gte: timePeriodArb,
      lt: timePeriodArb,
      lte: timePeriodArb,
    },
    { requiredKeys: [] },
  )
  .filter((set) => Object.keys(set).length > 0 && Object.keys(set).length <= 3);

const facetsArb: fc.Arbitrary<FacetsInput> = fc.record(
  {
    filters: comparatorsArb(filterIdArb),
    geographicLevels: comparatorsArb(levelArb),
    locations: comparatorsArb(locationArb),
    timePeriods: timePeriodComparatorsArb,
  },
  { requiredKeys: [] },
);

const criteriaArb: fc.Arbitrary<CriteriaInput> = fc.letrec<{ node: CriteriaInput }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    facetsArb,
    fc.record({ and: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ or: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ not: tie('node') }),
  ),
})).node;

const pagingArb = fc.oneof(
  fc.constant({ page: 1, pageSize: 1000 }),
  fc.record({ page: fc.integer({ min: 1, max: 4 }), pageSize: fc.integer({ min: 1, max: 120 }) }),
);

const indicatorsArb = fc.option(fc.subarray(Object.keys(INDICATORS)), { nil: undefined });

type SortInput = { field: string; direction: 'Asc' | 'Desc' };
const sortsArb: fc.Arbitrary<SortInput[]> = fc.array(
  fc.record({
    field: fc.constantFrom(
      'timePeriod',
      'geographicLevel',
      'location|NAT',
      'location|REG',
      'location|LA',
      'location|SCH',
      ...Object.entries(FILTERS).map(([, id]) => `filter|${id}`),
      ...Object.keys(INDICATORS).map((id) => `indicator|${id}`),
    ),
    direction: fc.constantFrom('Asc' as const, 'Desc' as const),
  }),
  { minLength: 1, maxLength: 2 },
);

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
let locationLabels: Map<string, string> | undefined;
/** Location id → label (the fixture's name columns), for `location|{level}` sorts. */
function locationLabel(id: string): string {
  if (!locationLabels) {
    locationLabels = new Map();
    const names: Record<string, string> = {
      NAT: 'country_name',
      REG: 'region_name',
      LA: 'la_name',
      SCH: 'school_name',
    };
    for (const row of rows)
      for (const [level, locationId] of Object.entries(row.locations))
        locationLabels.set(locationId!, row.csv[names[level]!]!);
  }
  return locationLabels.get(id)!;
}

/**
 * The reference's sort orders: time periods chronologically, levels and locations and filter options by label (code-point order),
 * indicators numerically here (a documented deviation). A row without a location of the level sorts last ascending
 * (NULLs last); a blank filter cell sorts first ascending (its id is 0). Ties are left to the row id (not checked).
 */
function compareBySorts(a: ResultRow, b: ResultRow, sorts: SortInput[]): number {
  for (const { field, direction } of sorts) {
    const sign = direction === 'Asc' ? 1 : -1;
    let order: number;
    if (field === 'timePeriod') order = byCodePoint(a.timePeriod.period, b.timePeriod.period);
    else if (field === 'geographicLevel')
      order = byCodePoint(LEVEL_LABELS[a.geographicLevel]!, LEVEL_LABELS[b.geographicLevel]!);
    else if (field.startsWith('location|')) {
      const level = field.slice('location|'.length);
      const [x, y] = [a.locations[level], b.locations[level]];
      order =
        x === y ? 0 : x === undefined ? 1 : y === undefined ? -1 : byCodePoint(locationLabel(x), locationLabel(y));
    } else if (field.startsWith('filter|')) {
      const filterId = field.slice('filter|'.length);
      const label = (row: ResultRow) => (row.filters[filterId] ? FILTER_OPTIONS[row.filters[filterId]]!.label : '');
      order = byCodePoint(label(a), label(b));
    } else {
      const id = field.slice('indicator|'.length);
      order = Number(a.values[id]) - Number(b.values[id]);
    }
    if (order !== 0) return sign * Math.sign(order);
  }
  return 0;
}

// ---- helpers ----

interface ResultRow {
  timePeriod: { code: string; period: string };
  geographicLevel: string;
  locations: Record<string, string>;
  filters: Record<string, string>;
  values: Record<string, string>;
}
interface QueryBody {
  paging: { page: number; pageSize: number; totalResults: number; totalPages: number };
  results: ResultRow[];
  warnings: Array<{ code: string }>;
}

function expectedKeys(criteria: CriteriaInput | undefined, indicators: string[] | undefined): string[] {
  const test = criteria ? criteriaTest(criteria) : () => true;
  const selected = indicators ?? Object.keys(INDICATORS);
  return rows
    .filter(test)
    .map((row) => resultKey(expectedResult(row, selected)))
    .sort();
}

/** Checks one response page against the model's rows: total, page size, membership, order, full set on a full page. */
function checkAgainstModel(
  body: QueryBody,
  expected: string[],
  page: number,
  pageSize: number,
  defaultOrder = true,
): void {
  expect(body.paging.totalResults).toBe(expected.length);
  const onPage = Math.max(0, Math.min(pageSize, expected.length - (page - 1) * pageSize));
  expect(body.results).toHaveLength(onPage);
  const keys = body.results.map(resultKey);
  const pool = new Map<string, number>();
  for (const key of expected) pool.set(key, (pool.get(key) ?? 0) + 1);
  for (const key of keys) {
    expect(pool.get(key) ?? 0, `unexpected row ${key}`).toBeGreaterThan(0);
    pool.set(key, pool.get(key)! - 1);
  }
  if (page === 1 && pageSize >= expected.length) expect([...keys].sort()).toEqual(expected);
  // Default order: time period descending.
  const periods = body.results.map((r) => r.timePeriod.period);
  if (defaultOrder) expect(periods).toEqual([...periods].sort().reverse());
  const noResults = body.warnings.some((w) => w.code === 'NoResults');
  expect(noResults).toBe(expected.length === 0);
}

/** The GET form of a facets object, or undefined when a value cannot be written as a string. */
function toGetParams(facets: FacetsInput): URLSearchParams {
  const params = new URLSearchParams();
  const location = (l: LocationInput) => {
    const property = (['id', 'oldCode', 'urn', 'laEstab', 'code'] as const).find((p) => l[p] !== undefined)!;
    return `${l.level}|${property}|${l[property]}`;
  };
  const period = (tp: TimePeriodInput) => `${tp.period}|${tp.code}`;
  const add = <T>(name: string, set: Record<string, T | T[] | undefined> | undefined, format: (v: T) => string) => {
    if (!set) return;
    for (const [op, value] of Object.entries(set)) {
      if (value === undefined) continue;
      // Repeated keys for lists (values such as `E09000021 / E09000027` have no commas, but keep it explicit).
      for (const v of Array.isArray(value) ? value : [value]) params.append(`${name}.${op}`, format(v));
    }
  };
  add('filters', facets.filters as Record<string, string | string[]>, (v: string) => v);
  add('geographicLevels', facets.geographicLevels as Record<string, string | string[]>, (v: string) => v);
  add('locations', facets.locations as Record<string, LocationInput | LocationInput[]>, location);
  add('timePeriods', facets.timePeriods as Record<string, TimePeriodInput | TimePeriodInput[]>, period);
  return params;
}

async function post(body: unknown) {
  return t.app.inject({
    method: 'POST',
    url: URL,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  });
}

// ---- properties ----

// The row index answers the same whether rebuilt (its engine form missing) or loaded from its engine form (what the
// import writes), and so does the cold path reading that engine form slice by slice (stored here in slices of 16
// rows, so that the 216 rows are 14 slices and a query reads some of them); and so does a fourth engine a newcomer
// registers through the engine interface (test/statistics/query/engine/naive-engine.ts).
const ENGINES = [
  'sql',
  'row index rebuilt',
  'row index from its engine form',
  'stored columns',
  'naive engine',
] as const;
const headerOf = {
  sql: 'sql',
  'row index rebuilt': 'index',
  'row index from its engine form': 'index',
  'stored columns': 'stored',
  'naive engine': 'naive',
} as const;
describe.each(ENGINES)('random criteria trees agree with the naive evaluator (engine: %s)', (engine) => {
  beforeAll(async () => {
    rowIndexes.forget();
    engines.naive = undefined;
    rowIndexes.configure({ enabled: headerOf[engine] === 'index', storedColumns: engine === 'stored columns' });
    const version = await t.database.db
      .selectFrom('data_set_versions')
      .select(['id', 'rows_table'])
      .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
      .executeTakeFirstOrThrow();
    const meta = await loadQueryVersionMeta(t.database.db, version.id, version.rows_table!);
    await t.database.db.deleteFrom('version_row_index_chunks').execute();
    if (engine === 'stored columns') {
      await saveEngineForm(t.database.db, meta.rowsTable, meta.versionId, await buildRowIndex(t.database.db, meta), 16);
    } else if (engine === 'naive engine') {
      engines.naive = new NaiveEngine(await loadAllRows(t.database.db, meta));
    } else if (engine !== 'sql') {
      // As `npm run stats-admin -- rebuild-storage` stores them.
      if (engine === 'row index from its engine form') await rebuildStorage(t.database.db, {}, 60000, () => undefined);
      const before = rowIndexes.status().outcomes;
      await rowIndexes.ensure(t.database.db, meta);
      const after = rowIndexes.status().outcomes;
      if (engine === 'row index from its engine form') expect(after.engine_form).toBe(before.engine_form + 1);
      else expect(after.rows + after.parquet).toBe(before.rows + before.parquet + 1);
    }
  });

  it(
    'POST: same total, same rows, default order',
    async () => {
      await fc.assert(
        fc.asyncProperty(criteriaArb, indicatorsArb, pagingArb, async (criteria, indicators, paging) => {
          const response = await post({ criteria, ...(indicators ? { indicators } : {}), ...paging });
          expect(response.statusCode, response.body).toBe(200);
          expect(response.headers['x-query-engine']).toBe(headerOf[engine]);
          checkAgainstModel(response.json(), expectedKeys(criteria, indicators), paging.page, paging.pageSize);
        }),
        { seed: SEED, numRuns: fuzzRuns(120) },
      );
    },
    fuzzPropertyTimeoutMs(90000),
  );

  it('edge trees: empty facets, empty facets under not, double negation', async () => {
    const cases: Array<[CriteriaInput, number]> = [
      [{}, 216],
      [{ not: {} }, 0],
      [{ not: { not: {} } }, 216],
      [{ and: [{}, { not: {} }] }, 0],
      [{ or: [{ not: {} }, { geographicLevels: { eq: 'NAT' } }] }, 24],
    ];
    for (const [criteria, total] of cases) {
      const response = await post({ criteria, pageSize: 1 });
      expect(response.statusCode).toBe(200);
      expect(response.json().paging.totalResults, JSON.stringify(criteria)).toBe(total);
      expect(expectedKeys(criteria, undefined)).toHaveLength(total);
    }
  });

  it(
    'POST with random sorts: the rows of the model, in the requested order',
    async () => {
      await fc.assert(
        fc.asyncProperty(criteriaArb, sortsArb, async (criteria, sorts) => {
          const response = await post({ criteria, sorts, pageSize: 1000 });
          expect(response.statusCode, response.body).toBe(200);
          const body = response.json<QueryBody>();
          checkAgainstModel(body, expectedKeys(criteria, undefined), 1, 1000, false);
          for (let i = 1; i < body.results.length; i++) {
            const order = compareBySorts(body.results[i - 1]!, body.results[i]!, sorts);
            expect(order, `rows ${i - 1} and ${i} out of order for ${JSON.stringify(sorts)}`).toBeLessThanOrEqual(0);
          }
        }),
        { seed: SEED + 4, numRuns: fuzzRuns(60) },
      );
    },
    fuzzPropertyTimeoutMs(90000),
  );

  it(
    'GET: a facets object as a query string gives the same rows as the model',
    async () => {
      await fc.assert(
        fc.asyncProperty(facetsArb, async (facets) => {
          const qs = toGetParams(facets).toString();
          const response = await t.app.inject({ method: 'GET', url: qs ? `${URL}?${qs}` : URL });
          expect(response.statusCode, response.body).toBe(200);
          checkAgainstModel(response.json(), expectedKeys(facets, undefined), 1, 1000);
        }),
        { seed: SEED + 1, numRuns: fuzzRuns(60) },
      );
    },
    fuzzPropertyTimeoutMs(90000),
  );
});

// ---- the CSV form of a query: every matching row (not a page), same rows as the model ----

/** CSV header → how to read the cell from a fixture row (labels as the source CSV has them). */
const CSV_COLUMNS: Record<string, (row: ModelRow) => string> = {
  time_period: (row) => `${row.csv.time_period.slice(0, 4)}/${row.csv.time_period.slice(4)}`,
  time_identifier: (row) => row.csv.time_identifier!,
  geographic_level: (row) => row.csv.geographic_level,
  National: (row) => row.csv.country_name!,
  Regional: (row) => row.csv.region_name!,
  'Local authority': (row) => row.csv.la_name!,
  School: (row) => row.csv.school_name!,
  'School type': (row) => row.csv.school_type,
  'Academy type': (row) => row.csv.academy_type,
  'National Curriculum year': (row) => row.csv.ncyear,
  Enrolments: (row) => row.csv.enrolments!,
  'Number of possible sessions': (row) => row.csv.sess_possible!,
  'Number of authorised sessions': (row) => row.csv.sess_authorised!,
  'Number of unauthorised sessions': (row) => row.csv.sess_unauthorised!,
  'Percentage of unauthorised sessions': (row) => row.csv.sess_unauthorised_percent!,
};

describe('random criteria trees as CSV (Accept: text/csv)', () => {
  it(
    'stream exactly the rows the model selects, with the selected indicators',
    async () => {
      rowIndexes.configure({ enabled: true });
      await fc.assert(
        fc.asyncProperty(criteriaArb, indicatorsArb, async (criteria, indicators) => {
          const response = await t.app.inject({
            method: 'POST',
            url: URL,
            headers: { 'content-type': 'application/json', accept: 'text/csv' },
            payload: JSON.stringify({ criteria, ...(indicators ? { indicators } : {}) }),
          });
          expect(response.statusCode, response.body.slice(0, 300)).toBe(200);
          expect(response.headers['content-type']).toMatch(/^text\/csv/);
          const table: string[][] = parse(response.body, { bom: true });
          const [header, ...records] = table;
          for (const name of header!) expect(Object.keys(CSV_COLUMNS), `unexpected CSV column ${name}`).toContain(name);
          const test = criteriaTest(criteria);
          const expected = rows
            .filter(test)
            .map((row) => header!.map((name) => CSV_COLUMNS[name]!(row)).join('|'))
            .sort();
          expect(records.map((r) => r.join('|')).sort()).toEqual(expected);
        }),
        { seed: SEED + 3, numRuns: fuzzRuns(40) },
      );
    },
    fuzzPropertyTimeoutMs(90000),
  );
});

// ---- hostile and malformed bodies: never a 5xx, 400 bodies are ValidationProblems naming a path ----

const junkString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '',
    ' ',
    ' LA',
    'la',
    '2020|AY',
    '20201',
    '2020/2022',
    'ÄÖÜ',
    'x'.repeat(41),
    "'; drop table x; --",
    '\u0000',
  ),
);
const junkLeaf = fc.oneof(
  junkString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  filterIdArb,
  levelArb,
  locationArb,
  timePeriodArb,
);
const junkComparators = fc.dictionary(
  fc.constantFrom('eq', 'notEq', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte', 'EQ', 'foo'),
  fc.oneof(junkLeaf, fc.array(junkLeaf, { maxLength: 3 }), fc.constant({})),
  { maxKeys: 3 },
);
const junkCriteria: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    fc.dictionary(
      fc.constantFrom('filters', 'geographicLevels', 'locations', 'timePeriods', 'Filters', 'x'),
      junkComparators,
      { maxKeys: 3 },
    ),
    fc.record({ and: fc.oneof(fc.array(tie('node'), { maxLength: 3 }), junkLeaf) }),
    fc.record({ or: fc.oneof(fc.array(tie('node'), { maxLength: 3 }), junkLeaf) }),
    fc.record({ not: fc.oneof(tie('node'), fc.array(tie('node'), { maxLength: 2 }), junkLeaf) }),
    fc.record({ and: fc.array(tie('node'), { minLength: 1, maxLength: 2 }), filters: junkComparators }),
    junkLeaf,
  ),
})).node;
const junkBody = fc.oneof(
  fc.record(
    {
      criteria: junkCriteria,
      indicators: fc.oneof(
        fc.array(fc.oneof(junkString, fc.constantFrom(...Object.keys(INDICATORS))), { maxLength: 3 }),
        junkLeaf,
      ),
      sorts: fc.oneof(
        fc.array(
          fc.record(
            {
              field: fc.oneof(
                junkString,
                fc.constantFrom('timePeriod', 'geographicLevel', 'location|LA', 'filter|O7CLF', 'indicator|dP0Zw'),
              ),
              direction: fc.oneof(fc.constantFrom('Asc', 'Desc', 'asc'), junkLeaf),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 3 },
        ),
        junkLeaf,
      ),
      debug: fc.oneof(fc.boolean(), junkLeaf),
      page: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constant(2 ** 40), junkLeaf),
      pageSize: fc.oneof(fc.integer({ min: -1, max: 12000 }), junkLeaf),
      unknownMember: junkLeaf,
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 4 }),
);

describe('hostile query bodies', () => {
  it(
    'any JSON body gives 200 or a 400 ValidationProblem, never a 5xx, and changes nothing',
    async () => {
      rowIndexes.configure({ enabled: true });
      const before = await databaseFingerprint(t.database.db);
      await fc.assert(
        fc.asyncProperty(junkBody, async (body) => {
          const response = await post(body);
          expect([200, 400], response.body).toContain(response.statusCode);
          if (response.statusCode === 400) {
            const problem = response.json();
            expect(problem).toMatchObject({ status: 400, title: expect.any(String) });
            expect(problem.errors.length).toBeGreaterThan(0);
            for (const error of problem.errors)
              expect(error).toMatchObject({ code: expect.any(String), message: expect.any(String) });
          }
        }),
        { seed: SEED + 2, numRuns: fuzzRuns(300) },
      );
      // Raw, non-JSON and deeply nested payloads.
      const raw = [
        '{',
        '{"criteria":',
        'null',
        '[]',
        '"x"',
        '{"criteria":{"and":[' + '{"and":['.repeat(40) + ']}'.repeat(40) + ']}}',
        '\u0000',
      ];
      for (const payload of raw) {
        const response = await t.app.inject({
          method: 'POST',
          url: URL,
          headers: { 'content-type': 'application/json' },
          payload,
        });
        expect(response.statusCode, `${payload.slice(0, 30)} → ${response.body}`).toBeLessThan(500);
      }
      expect(await databaseFingerprint(t.database.db)).toEqual(before);
    },
    fuzzPropertyTimeoutMs(90000),
  );
});
