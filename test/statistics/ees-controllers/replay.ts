import { expect } from 'vitest';
import type { Db } from '../../../src/db/database.js';
import type { VersionStatus } from '../../../src/statistics/tables.js';
import { ABSENCE_SCHOOL } from '../../helpers/statistics.js';

/**
 * What the replay of the reference's public API controller tests shares: the fixture's public ids under the names
 * the C# tests use (`AbsenceSchoolData`), the result gathering and sequence helpers of those tests, and the
 * assertions of their `ValidationProblemViewModelTestExtensions` (code, path and the detail members they check).
 */

/** `AbsenceSchoolData.cs`: the public ids of the AbsenceSchool fixture. */
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
  'EDA', 'INST', 'LA', 'LAD', 'LEP', 'LSIP', 'MAT', 'MCA', 'NAT', 'OA', 'PA', 'PCON', 'PFA', 'PROV', 'REG', 'RSC', 'SCH', 'SPON', 'WARD',
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
export function validationProblem(response: { statusCode: number; body: string; json(): unknown }): ErrorBody['errors'] {
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
export const hasLocationAllowedPropertyError = (errors: ErrorBody['errors'], path: string, property: string, allowedProperties: string[]) =>
  expectError(errors, path, 'LocationAllowedProperty', { value: property, allowedProperties });
export const hasLocationValueNotEmptyError = (errors: ErrorBody['errors'], path: string, property: string) =>
  expectError(errors, path, 'LocationValueNotEmpty', { property });
export const hasLocationValueMaxLengthError = (errors: ErrorBody['errors'], path: string, property: string, maxLength: number) =>
  expectError(errors, path, 'LocationValueMaxLength', { property, maxLength });
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
      .set({ status: s, withdrawn_at: s === 'Withdrawn' ? new Date() : null, published_at: s === 'Draft' ? null : new Date('2024-03-21T09:30:00Z') })
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
