import { expect } from 'vitest';
import type { Db } from '../../../src/db/database.js';
import type { DataSetStatus, VersionStatus } from '../../../src/statistics/tables.js';
import { ABSENCE_SCHOOL, importFixtureVersion, type TestDatabaseLike } from '../../helpers/statistics.js';
import { insertDataSet, insertPreviewToken, insertSmallMeta, insertVersion } from '../fixtures.js';

/**
 * What the replay of the reference's public API controller tests shares: the fixture's public ids under the names
 * the C# tests use (`AbsenceSchoolData`), the result gathering and sequence helpers of those tests, and the
 * assertions of their `ValidationProblemViewModelTestExtensions` (code, path and the detail members they check).
 */

/** `AbsenceSchoolData.cs`: the public ids of the AbsenceSchool fixture. */
/** An hour in milliseconds, for publication times relative to now. */
export const HOUR = 3600_000;
/** A well-formed id that no row has. */
export const MISSING = '0b8f1c2e-5f7a-4a3b-9c1d-2e3f4a5b6c7d';

export const AbsenceSchoolData = {
  IndicatorEnrolments: 'dP0Zw',
  IndicatorSessAuthorised: 'O7CLF',
  IndicatorSessPossible: '7zXob',
  IndicatorSessUnauthorised: 'pTSoj',
  IndicatorSessUnauthorisedPercent: 'IzBzg',
  FilterAcademyType: 'dP0Zw',
  FilterAcademyTypePrimarySponsorLed: 'dP0Zw',
  FilterAcademyTypeSecondaryFreeSchool: 'O7CLF',
  FilterAcademyTypeSecondarySponsorLed: '7zXob',
  FilterNcYear: 'O7CLF',
  FilterNcYear4: 'IzBzg',
  FilterNcYear6: 'it6Xr',
  FilterNcYear8: 'LxWjE',
  FilterNcYear10: 'pTSoj',
  FilterSchoolType: '7zXob',
  FilterSchoolTypePrimary: '6jrfe',
  FilterSchoolTypeSecondary: '0kT5D',
  FilterSchoolTypeTotal: 'HTzLj',
  LocationLaBarnet: '7zXob',
  LocationLaBarnsley: 'dP0Zw',
  LocationLaKingstonUponThames: 'pTSoj',
  LocationLaSheffield: 'O7CLF',
  LocationNatEngland: 'IzBzg',
  LocationRegionOuterLondon: 'LxWjE',
  LocationRegionYorkshire: 'it6Xr',
  LocationSchoolColindalePrimary: '6jrfe',
  LocationSchoolGreenhillPrimary: 'BT7J3',
  LocationSchoolHoylandPrimary: 'arLPb',
  LocationSchoolKingAthelstanPrimary: '0kT5D',
  LocationSchoolNewfieldSecondary: 'YPHKM',
  LocationSchoolPenistoneGrammar: 'HTzLj',
  LocationSchoolKingstonAcademy: 'qFjG7',
  LocationSchoolWrenAcademy: 'CpId1',
} as const;

export const ALL_INDICATORS = [
  AbsenceSchoolData.IndicatorEnrolments,
  AbsenceSchoolData.IndicatorSessAuthorised,
  AbsenceSchoolData.IndicatorSessPossible,
  AbsenceSchoolData.IndicatorSessUnauthorised,
  AbsenceSchoolData.IndicatorSessUnauthorisedPercent,
];

/** `GeographicLevelUtils.OrderedCodes`. */
export const ORDERED_LEVEL_CODES = [
  'EDA',
  'INST',
  'LA',
  'LAD',
  'LEP',
  'LSIP',
  'MAT',
  'MCA',
  'NAT',
  'OA',
  'PA',
  'PCON',
  'PFA',
  'PROV',
  'REG',
  'RSC',
  'SCH',
  'SPON',
  'WARD',
];

export interface ResultRow {
  timePeriod: { code: string; period: string };
  geographicLevel: string;
  locations: Record<string, string>;
  filters: Record<string, string>;
  values: Record<string, string>;
}

export interface QueryBody {
  paging: { page: number; pageSize: number; totalResults: number; totalPages: number };
  results: ResultRow[];
  warnings: Array<{ code: string; message: string; path?: string; detail?: Record<string, unknown> }>;
}

export interface ErrorBody {
  errors: Array<{ code: string; message: string; path: string; detail?: Record<string, unknown> }>;
}

/** The C# tests' `GatherQueryResultsMeta`: every distinct id per filter, level, location level, period, indicator. */
export function gatherQueryResultsMeta(results: ResultRow[]) {
  const filters: Record<string, Set<string>> = {};
  const locations: Record<string, Set<string>> = {};
  const geographicLevels = new Set<string>();
  const timePeriods = new Set<string>();
  const indicators = new Set<string>();
  for (const row of results) {
    for (const [filter, option] of Object.entries(row.filters)) (filters[filter] ??= new Set()).add(option);
    for (const [level, location] of Object.entries(row.locations)) (locations[level] ??= new Set()).add(location);
    geographicLevels.add(row.geographicLevel);
    timePeriods.add(`${row.timePeriod.period}|${row.timePeriod.code}`);
    for (const indicator of Object.keys(row.values)) indicators.add(indicator);
  }
  return { filters, locations, geographicLevels, timePeriods, indicators };
}

/** The C# tests' `GetSequence`: the values with consecutive repeats collapsed. */
export function sequence<T>(values: T[]): T[] {
  return values.filter((v, i) => i === 0 || values[i - 1] !== v);
}

/** `AssertValidationProblem`: a 400 with the ValidationProblem body. */
export function validationProblem(response: {
  statusCode: number;
  body: string;
  json(): unknown;
}): ErrorBody['errors'] {
  expect(response.statusCode, response.body).toBe(400);
  const body = response.json() as ErrorBody & { title: string; status: number };
  expect(body.status).toBe(400);
  return body.errors;
}

/** One error at `path` with `code`, whose detail has (at least) `detail`. */
export function expectError(errors: ErrorBody['errors'], path: string, code: string, detail?: Record<string, unknown>) {
  const matching = errors.filter((e) => e.path === path && e.code === code);
  expect(matching, `${code} at ${path} in ${JSON.stringify(errors)}`).toHaveLength(1);
  if (detail) expect(matching[0]!.detail).toMatchObject(detail);
}

export const hasNotEmptyError = (errors: ErrorBody['errors'], path: string) => expectError(errors, path, 'NotEmpty');
export const hasMaximumLengthError = (errors: ErrorBody['errors'], path: string, maxLength: number) =>
  expectError(errors, path, 'MaximumLength', { maxLength });
export const hasAllowedValueError = (errors: ErrorBody['errors'], path: string, value: unknown, allowed: unknown[]) =>
  expectError(errors, path, 'AllowedValue', { value, allowed });
export const hasLocationFormatError = (errors: ErrorBody['errors'], path: string, value: string) =>
  expectError(errors, path, 'LocationFormat', { value });
export const hasLocationAllowedLevelError = (errors: ErrorBody['errors'], path: string, level: string) =>
  expectError(errors, path, 'LocationAllowedLevel', { value: level });
export const hasLocationAllowedPropertyError = (
  errors: ErrorBody['errors'],
  path: string,
  property: string,
  allowedProperties: string[],
) => expectError(errors, path, 'LocationAllowedProperty', { value: property, allowedProperties });
export const hasLocationValueNotEmptyError = (errors: ErrorBody['errors'], path: string, property: string) =>
  expectError(errors, path, 'LocationValueNotEmpty', { property });
export const hasLocationValueMaxLengthError = (
  errors: ErrorBody['errors'],
  path: string,
  property: string,
  maxLength: number,
) => expectError(errors, path, 'LocationValueMaxLength', { property, maxLength });
export const hasTimePeriodFormatError = (errors: ErrorBody['errors'], path: string, value: string) =>
  expectError(errors, path, 'TimePeriodFormat', { value });
export const hasTimePeriodAllowedCodeError = (errors: ErrorBody['errors'], path: string, code: string) =>
  expectError(errors, path, 'TimePeriodAllowedCode', { value: code });
export const hasTimePeriodYearRangeError = (errors: ErrorBody['errors'], path: string, period: string) =>
  expectError(errors, path, 'TimePeriodInvalidYearRange', { value: period });
export const hasTimePeriodInvalidYearError = (errors: ErrorBody['errors'], path: string, period: string) =>
  expectError(errors, path, 'TimePeriodInvalidYear', { value: period });
export const hasSortFormatError = (errors: ErrorBody['errors'], path: string, value: string) =>
  expectError(errors, path, 'SortFormat', { value });
export const hasSortFieldNotEmptyError = (errors: ErrorBody['errors'], path: string) =>
  expectError(errors, path, 'SortFieldNotEmpty', { property: 'field' });
export const hasSortFieldMaxLengthError = (errors: ErrorBody['errors'], path: string, field: string) =>
  expectError(errors, path, 'SortFieldMaxLength', { property: 'field', value: field, maxLength: 40 });
export const hasSortDirectionError = (errors: ErrorBody['errors'], path: string, direction: string) =>
  expectError(errors, path, 'SortDirection', { value: direction });
export const hasGreaterThanOrEqualError = (errors: ErrorBody['errors'], path: string, comparisonValue: number) =>
  expectError(errors, path, 'GreaterThanOrEqual', { comparisonValue });
export const hasInclusiveBetweenError = (errors: ErrorBody['errors'], path: string, from: number, to: number) =>
  expectError(errors, path, 'InclusiveBetween', { from, to });

/** A single warning `code` at `path` listing `items`. */
export function expectNotFoundWarning(body: QueryBody, code: string, path: string, items: unknown[]) {
  expect(body.warnings).toHaveLength(1);
  expect(body.warnings[0]).toMatchObject({ code, path, detail: { items } });
}

/**
 * The C# tests build a data set per test with one version in the status a Theory row names; here the seeded
 * AbsenceSchool version (this file's own database) is put in that status for the case and put back after.
 */
export async function withFixtureStatus<T>(db: Db, status: VersionStatus, run: () => Promise<T>): Promise<T> {
  const set = (s: VersionStatus) =>
    db
      .updateTable('data_set_versions')
      .set({
        status: s,
        withdrawn_at: s === 'Withdrawn' ? new Date() : null,
        published_at: s === 'Draft' ? null : new Date('2024-03-21T09:30:00Z'),
      })
      .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
      .where('major', '=', 1)
      .where('minor', '=', 0)
      .execute();
  await set(status);
  try {
    return await run();
  } finally {
    await set('Published');
  }
}

/**
 * `DataSetVersionStatus` values this service does not model: a version here is imported whole (no Processing,
 * Mapping, Finalising, Failed or Cancelled import states).
 */
export const NOT_MODELLED_STATUSES = ['Processing', 'Failed', 'Mapping', 'Finalising', 'Cancelled'] as const;
export const NOT_MODELLED_REASON = 'the service imports a version in one transaction, so it has no processing states';

const D = AbsenceSchoolData;

export const TWO_INDICATORS = [D.IndicatorEnrolments, D.IndicatorSessAuthorised];

/** Every option of every filter, and every location of every level, of the fixture (`CorrectResultIds`). */
export const ALL_FILTER_OPTIONS: Record<string, string[]> = {
  [D.FilterAcademyType]: [
    D.FilterAcademyTypePrimarySponsorLed,
    D.FilterAcademyTypeSecondaryFreeSchool,
    D.FilterAcademyTypeSecondarySponsorLed,
  ],
  [D.FilterNcYear]: [D.FilterNcYear4, D.FilterNcYear6, D.FilterNcYear8, D.FilterNcYear10],
  [D.FilterSchoolType]: [D.FilterSchoolTypePrimary, D.FilterSchoolTypeSecondary, D.FilterSchoolTypeTotal],
};
export const ALL_LOCATIONS: Record<string, string[]> = {
  NAT: [D.LocationNatEngland],
  REG: [D.LocationRegionOuterLondon, D.LocationRegionYorkshire],
  LA: [D.LocationLaBarnet, D.LocationLaBarnsley, D.LocationLaKingstonUponThames, D.LocationLaSheffield],
  SCH: [
    D.LocationSchoolColindalePrimary,
    D.LocationSchoolGreenhillPrimary,
    D.LocationSchoolHoylandPrimary,
    D.LocationSchoolKingAthelstanPrimary,
    D.LocationSchoolNewfieldSecondary,
    D.LocationSchoolPenistoneGrammar,
    D.LocationSchoolKingstonAcademy,
    D.LocationSchoolWrenAcademy,
  ],
};
export const ALL_PERIODS = ['2020/2021|AY', '2021/2022|AY', '2022/2023|AY'];

const sorted = (s: Set<string> | undefined) => [...(s ?? [])].sort();

/** `AllIndicators_Returns200_CorrectResultIds`: every id of the fixture appears in the 216 results. */
export function expectAllResultIds(body: QueryBody) {
  expect(body.results).toHaveLength(216);
  const meta = gatherQueryResultsMeta(body.results);
  expect(Object.keys(meta.filters)).toHaveLength(3);
  for (const [filter, options] of Object.entries(ALL_FILTER_OPTIONS))
    expect(sorted(meta.filters[filter])).toEqual([...options].sort());
  expect(Object.keys(meta.locations)).toHaveLength(4);
  for (const [level, ids] of Object.entries(ALL_LOCATIONS))
    expect(sorted(meta.locations[level])).toEqual([...ids].sort());
  expect(sorted(meta.geographicLevels)).toEqual(['LA', 'NAT', 'REG', 'SCH']);
  expect(sorted(meta.timePeriods)).toEqual(ALL_PERIODS);
  expect(sorted(meta.indicators)).toEqual([...ALL_INDICATORS].sort());
}

/** `AllIndicators_Returns200_CorrectDebuggedResultLabels`: `id :: label` keys and values in debug mode. */
export function expectAllDebuggedLabels(body: QueryBody) {
  expect(body.results).toHaveLength(216);
  const meta = gatherQueryResultsMeta(body.results);
  expect(Object.keys(meta.filters)).toHaveLength(3);
  expect(sorted(meta.filters[`${D.FilterAcademyType} :: academy_type`])).toEqual(
    [
      `${D.FilterAcademyTypePrimarySponsorLed} :: Primary sponsor led academy`,
      `${D.FilterAcademyTypeSecondaryFreeSchool} :: Secondary free school`,
      `${D.FilterAcademyTypeSecondarySponsorLed} :: Secondary sponsor led academy`,
    ].sort(),
  );
  expect(sorted(meta.filters[`${D.FilterNcYear} :: ncyear`])).toEqual(
    [
      `${D.FilterNcYear4} :: Year 4`,
      `${D.FilterNcYear6} :: Year 6`,
      `${D.FilterNcYear8} :: Year 8`,
      `${D.FilterNcYear10} :: Year 10`,
    ].sort(),
  );
  expect(sorted(meta.filters[`${D.FilterSchoolType} :: school_type`])).toEqual(
    [
      `${D.FilterSchoolTypePrimary} :: State-funded primary`,
      `${D.FilterSchoolTypeSecondary} :: State-funded secondary`,
      `${D.FilterSchoolTypeTotal} :: Total`,
    ].sort(),
  );
  expect(Object.keys(meta.locations)).toHaveLength(4);
  expect(sorted(meta.locations.NAT)).toEqual([`${D.LocationNatEngland} :: England (code = E92000001)`]);
  expect(sorted(meta.locations.REG)).toEqual(
    [
      `${D.LocationRegionOuterLondon} :: Outer London (code = E13000002)`,
      `${D.LocationRegionYorkshire} :: Yorkshire and The Humber (code = E12000003)`,
    ].sort(),
  );
  expect(meta.locations.LA!.size).toBe(4);
  expect(sorted(meta.locations.LA)).toContain(`${D.LocationLaBarnet} :: Barnet (code = E09000003, oldCode = 302)`);
  expect(sorted(meta.locations.LA)).toContain(`${D.LocationLaBarnsley} :: Barnsley (code = E08000016, oldCode = 370)`);
  expect(meta.locations.SCH!.size).toBe(8);
  expect(sorted(meta.locations.SCH)).toContain(
    `${D.LocationSchoolWrenAcademy} :: Wren Academy Finchley (urn = 135507, laEstab = 3026906)`,
  );
  expect(meta.geographicLevels.size).toBe(4);
  expect(sorted(meta.timePeriods)).toEqual(ALL_PERIODS);
  expect(meta.indicators.size).toBe(5);
  expect(meta.indicators.has(`${D.IndicatorEnrolments} :: enrolments`)).toBe(true);
}

/** `SingleIndicator_Returns200_CorrectViewModel`: the first row under the default order. */
export function expectSingleIndicatorViewModel(body: QueryBody) {
  expect(body.paging).toMatchObject({ page: 1, totalPages: 1, totalResults: 216 });
  expect(body.warnings).toEqual([]);
  expect(body.results).toHaveLength(216);
  expect(body.results[0]).toEqual({
    filters: { [D.FilterNcYear]: D.FilterNcYear4, [D.FilterSchoolType]: D.FilterSchoolTypeTotal },
    geographicLevel: 'LA',
    locations: { LA: D.LocationLaBarnsley, NAT: D.LocationNatEngland, REG: D.LocationRegionYorkshire },
    timePeriod: { code: 'AY', period: '2022/2023' },
    values: { [D.IndicatorSessAuthorised]: '577798' },
  });
}

/** `AllIndicators_Returns200_ResultValuesInAllowedRanges`. */
export function expectValuesInAllowedRanges(body: QueryBody) {
  expect(body.results).toHaveLength(216);
  const range = (id: string) => {
    const values = body.results.map((r) => Number(r.values[id]));
    expect(values.every((v) => Number.isFinite(v))).toBe(true);
    return [Math.max(...values), Math.min(...values)];
  };
  expect(range(D.IndicatorEnrolments)).toEqual([999598, 1072]);
  expect(range(D.IndicatorSessAuthorised)).toEqual([4967515, 22441]);
  expect(range(D.IndicatorSessPossible)).toEqual([9934276, 18306]);
  expect(range(D.IndicatorSessUnauthorised)).toEqual([494993, 2883]);
  // The C# test compares as float.
  expect(range(D.IndicatorSessUnauthorisedPercent).map(Math.fround)).toEqual([
    Math.fround(14.8837004),
    Math.fround(0.241600007),
  ]);
}

/** The one row every form of the mixture criteria finds: Newfield Secondary School, 2021/22. */
export const NEWFIELD_2021 = {
  filters: {
    [D.FilterNcYear]: D.FilterNcYear10,
    [D.FilterSchoolType]: D.FilterSchoolTypeSecondary,
    [D.FilterAcademyType]: D.FilterAcademyTypeSecondarySponsorLed,
  },
  geographicLevel: 'SCH',
  locations: {
    NAT: D.LocationNatEngland,
    REG: D.LocationRegionYorkshire,
    LA: D.LocationLaSheffield,
    SCH: D.LocationSchoolNewfieldSecondary,
  },
  timePeriod: { code: 'AY', period: '2021/2022' },
  values: { [D.IndicatorEnrolments]: '752009', [D.IndicatorSessAuthorised]: '262396' },
};

/** `NoFields_MultipleTimePeriods`: primary schools, national, by the default order (newest period first). */
export const PRIMARY_NAT_NEWEST_FIRST = [
  [D.FilterNcYear4, '2022/2023', '654884'],
  [D.FilterNcYear6, '2022/2023', '235647'],
  [D.FilterNcYear4, '2021/2022', '611553'],
  [D.FilterNcYear6, '2021/2022', '752711'],
  [D.FilterNcYear4, '2020/2021', '233870'],
  [D.FilterNcYear6, '2020/2021', '510682'],
];
export const TOTAL_NAT_2020 = [
  [D.FilterNcYear4, '2020/2021', '930365'],
  [D.FilterNcYear6, '2020/2021', '390233'],
  [D.FilterNcYear8, '2020/2021', '966035'],
  [D.FilterNcYear10, '2020/2021', '687704'],
];
export const yearPeriodEnrolments = (body: QueryBody) =>
  body.results.map((r) => [r.filters[D.FilterNcYear], r.timePeriod.period, r.values[D.IndicatorEnrolments]]);

type Pick = (r: ResultRow) => string | undefined;
export interface SortSequenceCase {
  name: string;
  field: string;
  direction: 'Asc' | 'Desc';
  facets: 'year4England2020' | 'year4La2020' | 'nat2020' | 'year4Reg2020';
  count: number;
  pick: Pick;
  expected: string[];
}
/** The `SingleField_*_CorrectSequence` tests of both query controllers. */
export const SORT_SEQUENCE_CASES: SortSequenceCase[] = [
  {
    name: 'SingleField_GeographicLevelAsc_Returns200_CorrectSequence',
    field: 'geographicLevel',
    direction: 'Asc',
    facets: 'year4England2020',
    count: 18,
    pick: (r) => r.geographicLevel,
    expected: ['LA', 'NAT', 'REG', 'SCH'],
  },
  {
    name: 'SingleField_GeographicLevelDesc_Returns200_CorrectSequence',
    field: 'geographicLevel',
    direction: 'Desc',
    facets: 'year4England2020',
    count: 18,
    pick: (r) => r.geographicLevel,
    expected: ['SCH', 'REG', 'NAT', 'LA'],
  },
  {
    name: 'SingleField_LocationAsc_Returns200_CorrectSequence',
    field: 'location|LA',
    direction: 'Asc',
    facets: 'year4La2020',
    count: 11,
    pick: (r) => r.locations.LA,
    expected: [D.LocationLaBarnet, D.LocationLaBarnsley, D.LocationLaKingstonUponThames, D.LocationLaSheffield],
  },
  {
    name: 'SingleField_LocationDesc_Returns200_CorrectSequence',
    field: 'location|LA',
    direction: 'Desc',
    facets: 'year4La2020',
    count: 11,
    pick: (r) => r.locations.LA,
    expected: [D.LocationLaSheffield, D.LocationLaKingstonUponThames, D.LocationLaBarnsley, D.LocationLaBarnet],
  },
  {
    name: 'SingleField_FilterAsc_Returns200_CorrectSequence',
    field: `filter|${D.FilterNcYear}`,
    direction: 'Asc',
    facets: 'nat2020',
    count: 8,
    pick: (r) => r.filters[D.FilterNcYear],
    expected: [D.FilterNcYear10, D.FilterNcYear4, D.FilterNcYear6, D.FilterNcYear8],
  },
  {
    name: 'SingleField_FilterDesc_Returns200_CorrectSequence',
    field: `filter|${D.FilterNcYear}`,
    direction: 'Desc',
    facets: 'nat2020',
    count: 8,
    pick: (r) => r.filters[D.FilterNcYear],
    expected: [D.FilterNcYear8, D.FilterNcYear6, D.FilterNcYear4, D.FilterNcYear10],
  },
  {
    name: 'SingleField_IndicatorAsc_Returns200_CorrectSequence',
    field: `indicator|${D.IndicatorEnrolments}`,
    direction: 'Asc',
    facets: 'year4Reg2020',
    count: 4,
    pick: (r) => r.values[D.IndicatorEnrolments],
    expected: ['636969', '748965', '794394', '960185'],
  },
  {
    name: 'SingleField_IndicatorDesc_Returns200_CorrectSequence',
    field: `indicator|${D.IndicatorEnrolments}`,
    direction: 'Desc',
    facets: 'year4Reg2020',
    count: 4,
    pick: (r) => r.values[D.IndicatorEnrolments],
    expected: ['960185', '794394', '748965', '636969'],
  },
];

/** `MultipleFields_Returns200_CorrectSequence`: time period ascending, LA descending, NC year ascending. */
export function expectMultipleFieldsSequence(body: QueryBody) {
  expect(body.results).toHaveLength(48);
  const expected: string[] = [];
  for (const period of ['2020/2021', '2021/2022', '2022/2023']) {
    for (const la of [
      D.LocationLaSheffield,
      D.LocationLaKingstonUponThames,
      D.LocationLaBarnsley,
      D.LocationLaBarnet,
    ]) {
      for (const year of [D.FilterNcYear10, D.FilterNcYear4, D.FilterNcYear6, D.FilterNcYear8])
        expected.push(`${period} ${la} ${year}`);
    }
  }
  expect(body.results.map((r) => `${r.timePeriod.period} ${r.locations.LA} ${r.filters[D.FilterNcYear]}`)).toEqual(
    expected,
  );
}

export const DEBUG_ENABLED_MESSAGE = 'Debug mode is enabled. Do not enable debug mode in a production environment.';
export const NO_RESULTS_MESSAGE = 'The query did not match any results. You may need to refine your criteria.';

export const ANALYTICS_NOT_EXPRESSIBLE =
  'not expressible: the reference writes query analytics through a mocked analytics service; this service records no query analytics';

/** The seeded AbsenceSchool version 1.0's id. */
export async function fixtureVersionId(db: Db): Promise<number> {
  const row = await db
    .selectFrom('data_set_versions')
    .select('id')
    .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
    .where('major', '=', 1)
    .where('minor', '=', 0)
    .where('patch', '=', 0)
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * `SetupDataSetWithSpecifiedVersionStatuses` on the seeded data set: versions 1.1, 1.2, 2.0 and 2.1 of the fixture
 * (same public ids), a preview token for 2.1, and a way to put 2.0 and 2.1 in a case's status.
 */
export async function addWildcardVersions(database: TestDatabaseLike) {
  for (const version of ['1.1', '1.2', '2.0', '2.1']) {
    await importFixtureVersion(database, { dataSetId: ABSENCE_SCHOOL.dataSetId, version, status: 'Published' });
  }
  const latest = await database.db
    .selectFrom('data_set_versions')
    .select('id')
    .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
    .where('major', '=', 2)
    .where('minor', '=', 1)
    .executeTakeFirstOrThrow();
  const tokenId = await insertPreviewToken(database.db, latest.id, new Date(Date.now() + 86_400_000));
  const setMajor2 = (status: VersionStatus) =>
    database.db
      .updateTable('data_set_versions')
      .set({ status, withdrawn_at: status === 'Withdrawn' ? new Date() : null })
      .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
      .where('major', '=', 2)
      .execute();
  const restore = () =>
    database.db
      .updateTable('data_set_versions')
      .set({ status: 'Published', withdrawn_at: null })
      .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
      .execute();
  return { tokenId, setMajor2, restore };
}

/** A draft version 1.0.1 of the fixture for a preview token of the wrong version; withdrawn again by `done`. */
export async function otherDraftVersion(database: TestDatabaseLike) {
  const other = await importFixtureVersion(database, {
    dataSetId: ABSENCE_SCHOOL.dataSetId,
    version: '1.0.1',
    status: 'Draft',
  });
  const tokenId = await insertPreviewToken(database.db, other.versionId, new Date(Date.now() + 86_400_000));
  const done = () =>
    database.db
      .updateTable('data_set_versions')
      .set({ status: 'Withdrawn', withdrawn_at: new Date() })
      .where('id', '=', other.versionId)
      .execute();
  return { tokenId, done };
}

/** A catalogue data set of `status` in `publicationId` with one version per `[version, status]`, each with small meta. */
export async function insertCatalogueDataSet(
  db: Db,
  publicationId: string,
  status: DataSetStatus,
  versions: Array<[string, VersionStatus]> = [],
  title = `Data set ${status}`,
) {
  const id = await insertDataSet(db, { publicationId, title, status });
  const versionIds: number[] = [];
  for (const [version, versionStatus] of versions) {
    const row = await insertVersion(db, {
      dataSetId: id,
      version,
      status: versionStatus,
      totalResults: 10,
      withdrawn: versionStatus === 'Withdrawn' ? '2024-06-01T09:30:00Z' : null,
    });
    await insertSmallMeta(db, row.id);
    versionIds.push(row.id);
  }
  return { id, versionIds };
}

/** The small meta's summary as the data set and version views show it (`insertSmallMeta`). */
export const SMALL_META_SUMMARY = {
  timePeriods: { start: '2020/21', end: '2021/22' },
  geographicLevels: ['Local authority', 'National'],
  filters: ['Academy type', 'School type'],
  indicators: ['Enrolments', 'Number of possible sessions'],
};
