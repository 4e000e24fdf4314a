import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

/**
 * A naive, row-by-row model of the statistics query over the AbsenceSchool fixture, written straight from the
 * the reference's matching rules, independent of the service's parser, resolver and engines.
 * It reads the fixture CSV itself and knows the reference's public ids.
 */

export interface CsvRow {
  time_period: string;
  geographic_level: string;
  country_code: string;
  region_code: string;
  old_la_code: string;
  new_la_code: string;
  school_urn: string;
  school_laestab: string;
  school_type: string;
  academy_type: string;
  ncyear: string;
  [indicator: string]: string;
}

export const FILTERS = { academy_type: 'dP0Zw', ncyear: 'O7CLF', school_type: '7zXob' } as const;
type FilterColumn = keyof typeof FILTERS;

/** Filter option public id → its filter column and CSV label. */
export const FILTER_OPTIONS: Record<string, { column: FilterColumn; label: string }> = {
  dP0Zw: { column: 'academy_type', label: 'Primary sponsor led academy' },
  O7CLF: { column: 'academy_type', label: 'Secondary free school' },
  '7zXob': { column: 'academy_type', label: 'Secondary sponsor led academy' },
  pTSoj: { column: 'ncyear', label: 'Year 10' },
  IzBzg: { column: 'ncyear', label: 'Year 4' },
  it6Xr: { column: 'ncyear', label: 'Year 6' },
  LxWjE: { column: 'ncyear', label: 'Year 8' },
  '6jrfe': { column: 'school_type', label: 'State-funded primary' },
  '0kT5D': { column: 'school_type', label: 'State-funded secondary' },
  HTzLj: { column: 'school_type', label: 'Total' },
};

export const INDICATORS: Record<string, string> = {
  dP0Zw: 'enrolments',
  O7CLF: 'sess_authorised',
  '7zXob': 'sess_possible',
  pTSoj: 'sess_unauthorised',
  IzBzg: 'sess_unauthorised_percent',
};

export const LEVEL_LABELS: Record<string, string> = {
  NAT: 'National',
  REG: 'Regional',
  LA: 'Local authority',
  SCH: 'School',
};

interface LocationOption {
  level: 'NAT' | 'REG' | 'LA' | 'SCH';
  id: string;
  code?: string;
  oldCode?: string;
  urn?: string;
  laEstab?: string;
}

export const LOCATIONS: LocationOption[] = [
  { level: 'NAT', id: 'IzBzg', code: 'E92000001' },
  { level: 'REG', id: 'LxWjE', code: 'E13000002' },
  { level: 'REG', id: 'it6Xr', code: 'E12000003' },
  { level: 'LA', id: '7zXob', code: 'E09000003', oldCode: '302' },
  { level: 'LA', id: 'dP0Zw', code: 'E08000016', oldCode: '370' },
  { level: 'LA', id: 'pTSoj', code: 'E09000021 / E09000027', oldCode: '314' },
  { level: 'LA', id: 'O7CLF', code: 'E08000019', oldCode: '373' },
  { level: 'SCH', id: '6jrfe', urn: '101269', laEstab: '3022014' },
  { level: 'SCH', id: 'BT7J3', urn: '145374', laEstab: '3732341' },
  { level: 'SCH', id: 'arLPb', urn: '141973', laEstab: '3702039' },
  { level: 'SCH', id: '0kT5D', urn: '102579', laEstab: '3142032' },
  { level: 'SCH', id: 'YPHKM', urn: '140821', laEstab: '3734008' },
  { level: 'SCH', id: 'HTzLj', urn: '106653', laEstab: '3704027' },
  { level: 'SCH', id: 'qFjG7', urn: '141862', laEstab: '3144001' },
  { level: 'SCH', id: 'CpId1', urn: '135507', laEstab: '3026906' },
];

/** The fixture's time periods in chronological order (their ids are 1..3, as the reference's). */
export const TIME_PERIODS = ['2020/2021', '2021/2022', '2022/2023'];

/** A POST location object, as a client sends it. */
export type LocationInput = { level: string } & Partial<Record<'id' | 'code' | 'oldCode' | 'urn' | 'laEstab', string>>;
export interface TimePeriodInput {
  period: string;
  code: string;
}
export interface Comparators<T> {
  eq?: T;
  notEq?: T;
  in?: T[];
  notIn?: T[];
}
export interface TimePeriodComparators extends Comparators<TimePeriodInput> {
  gt?: TimePeriodInput;
  gte?: TimePeriodInput;
  lt?: TimePeriodInput;
  lte?: TimePeriodInput;
}
export interface FacetsInput {
  filters?: Comparators<string>;
  geographicLevels?: Comparators<string>;
  locations?: Comparators<LocationInput>;
  timePeriods?: TimePeriodComparators;
}
export type CriteriaInput = { and: CriteriaInput[] } | { or: CriteriaInput[] } | { not: CriteriaInput } | FacetsInput;

/** One fixture row as the model sees it: its CSV cells plus the ids of its locations and time period. */
export interface ModelRow {
  csv: CsvRow;
  timePeriodId: number;
  level: string;
  /** Level code → location public id, for each level whose columns are filled in this row. */
  locations: Partial<Record<string, string>>;
}

export function loadModelRows(): ModelRow[] {
  const file = path.resolve(import.meta.dirname, '../../seed/absence-school/data.csv');
  const csv = parse<CsvRow>(readFileSync(file, 'utf8'), { columns: true, bom: true });
  const byCode = (level: string, key: keyof LocationOption, value: string) =>
    value ? LOCATIONS.find((l) => l.level === level && l[key] === value)?.id : undefined;
  return csv.map((row) => {
    const timePeriodId = TIME_PERIODS.indexOf(`${row.time_period.slice(0, 4)}/20${row.time_period.slice(4)}`) + 1;
    if (timePeriodId === 0) throw new Error(`unexpected time period ${row.time_period}`);
    const level = Object.keys(LEVEL_LABELS).find((code) => LEVEL_LABELS[code] === row.geographic_level);
    if (!level) throw new Error(`unexpected level ${row.geographic_level}`);
    const locations: Partial<Record<string, string>> = {
      NAT: byCode('NAT', 'code', row.country_code),
      REG: byCode('REG', 'code', row.region_code),
      LA: byCode('LA', 'code', row.new_la_code),
      SCH: byCode('SCH', 'urn', row.school_urn),
    };
    for (const key of Object.keys(locations)) if (!locations[key]) delete locations[key];
    return { csv: row, timePeriodId, level, locations };
  });
}

/** The engine form of a time period: academic codes take a single year as the year starting then. */
function timePeriodId(input: TimePeriodInput): number | undefined {
  if (input.code !== 'AY') return undefined; // every fixture row is an academic year
  const period = /^\d{4}$/.test(input.period) ? `${input.period}/${Number(input.period) + 1}` : input.period;
  const index = TIME_PERIODS.indexOf(period);
  return index < 0 ? undefined : index + 1;
}

function locationOptions(input: LocationInput): LocationOption[] {
  const property = (['id', 'oldCode', 'urn', 'laEstab', 'code'] as const).find((p) => input[p] !== undefined)!;
  return LOCATIONS.filter((l) => l.level === input.level && l[property] === input[property]);
}

type Test = (row: ModelRow) => boolean;
const TRUE: Test = () => true;
const FALSE: Test = () => false;

/**
 * eq/notEq/in/notIn of one facet: `eq` of something unknown matches nothing, `notEq` of it excludes
 * nothing; a list uses its known members (none known: `in` matches nothing, `notIn` excludes nothing).
 * `matches(row, value)` says whether one known value matches the row.
 */
function comparatorTest<T>(
  set: Comparators<T>,
  known: (value: T) => boolean,
  matches: (row: ModelRow, value: T) => boolean,
): Test[] {
  const tests: Test[] = [];
  if (set.eq !== undefined) {
    const v = set.eq;
    tests.push(known(v) ? (row) => matches(row, v) : FALSE);
  }
  if (set.notEq !== undefined) {
    const v = set.notEq;
    tests.push(known(v) ? (row) => !matches(row, v) : TRUE);
  }
  if (set.in !== undefined) {
    const values = set.in.filter(known);
    tests.push(values.length ? (row) => values.some((v) => matches(row, v)) : FALSE);
  }
  if (set.notIn !== undefined) {
    const values = set.notIn.filter(known);
    tests.push(values.length ? (row) => values.every((v) => !matches(row, v)) : TRUE);
  }
  return tests;
}

/** One test per facet type present (each type's comparators AND-joined). */
function facetTests(facets: FacetsInput): Test[] {
  const tests: Test[] = [];
  const all =
    (parts: Test[]): Test =>
    (row) =>
      parts.every((t) => t(row));
  if (facets.filters) {
    tests.push(
      all(
        comparatorTest(
          facets.filters,
          (id) => id in FILTER_OPTIONS,
          (row, id) => row.csv[FILTER_OPTIONS[id]!.column] === FILTER_OPTIONS[id]!.label,
        ),
      ),
    );
  }
  if (facets.geographicLevels) {
    tests.push(
      all(
        comparatorTest(
          facets.geographicLevels,
          (code) => code in LEVEL_LABELS,
          (row, code) => row.level === code,
        ),
      ),
    );
  }
  if (facets.locations) {
    tests.push(
      all(
        comparatorTest(
          facets.locations,
          (loc) => locationOptions(loc).length > 0,
          // A location filter on level X matches any row whose X column is that location, whatever the row's level.
          (row, loc) => locationOptions(loc).some((option) => row.locations[option.level] === option.id),
        ),
      ),
    );
  }
  if (facets.timePeriods) {
    const set = facets.timePeriods;
    const parts = comparatorTest(
      set,
      (tp) => timePeriodId(tp) !== undefined,
      (row, tp) => row.timePeriodId === timePeriodId(tp),
    );
    const ops = {
      gt: (a: number, b: number) => a > b,
      gte: (a: number, b: number) => a >= b,
      lt: (a: number, b: number) => a < b,
      lte: (a: number, b: number) => a <= b,
    };
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
      const tp = set[op];
      if (tp === undefined) continue;
      const id = timePeriodId(tp);
      parts.push(id === undefined ? FALSE : (row) => ops[op](row.timePeriodId, id));
    }
    tests.push(all(parts));
  }
  return tests;
}

/** The row test of a criteria tree, including the quirk: directly under `not`, facet types are OR-joined. */
export function criteriaTest(criteria: CriteriaInput): Test {
  if ('and' in criteria) {
    const items = criteria.and.map(criteriaTest);
    return (row) => items.every((t) => t(row));
  }
  if ('or' in criteria) {
    const items = criteria.or.map(criteriaTest);
    return (row) => items.some((t) => t(row));
  }
  if ('not' in criteria) {
    const child = criteria.not;
    if ('and' in child || 'or' in child || 'not' in child) {
      const inner = criteriaTest(child);
      return (row) => !inner(row);
    }
    const types = facetTests(child);
    // `{}` matches everything, so `{ "not": {} }` matches nothing (documented deviation: the reference is undetermined).
    if (types.length === 0) return () => false;
    return (row) => !types.some((t) => t(row));
  }
  const types = facetTests(criteria);
  return (row) => types.every((t) => t(row));
}

/** The result row the API should return for a fixture row, with the selected indicators. */
export function expectedResult(row: ModelRow, indicatorIds: string[]) {
  const filters: Record<string, string> = {};
  for (const [column, filterId] of Object.entries(FILTERS)) {
    const label = row.csv[column];
    if (!label) continue; // a blank cell has no key
    const option = Object.entries(FILTER_OPTIONS).find(([, o]) => o.column === column && o.label === label);
    if (!option) throw new Error(`unknown ${column} option ${label}`);
    filters[filterId] = option[0];
  }
  const values: Record<string, string> = {};
  for (const id of indicatorIds) values[id] = row.csv[INDICATORS[id]!]!;
  return {
    timePeriod: { code: 'AY', period: TIME_PERIODS[row.timePeriodId - 1]! },
    geographicLevel: row.level,
    locations: row.locations as Record<string, string>,
    filters,
    values,
  };
}

/** An order-independent key of a result row, for comparing row multisets. */
export function resultKey(result: {
  timePeriod: { code: string; period: string };
  geographicLevel: string;
  locations: Record<string, string>;
  filters: Record<string, string>;
  values: Record<string, string>;
}): string {
  const sorted = (o: Record<string, string>) =>
    JSON.stringify(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return [
    result.timePeriod.period,
    result.timePeriod.code,
    result.geographicLevel,
    sorted(result.locations),
    sorted(result.filters),
    sorted(result.values),
  ].join(' ');
}
