import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ABSENCE_SCHOOL } from '../../helpers/statistics.js';
import { insertPreviewToken } from '../fixtures.js';
import {
  AbsenceSchoolData as D,
  ALL_INDICATORS,
  ANALYTICS_NOT_EXPRESSIBLE,
  DEBUG_ENABLED_MESSAGE,
  expectAllDebuggedLabels,
  expectAllResultIds,
  expectError,
  expectMultipleFieldsSequence,
  expectSingleIndicatorViewModel,
  expectValuesInAllowedRanges,
  gatherQueryResultsMeta,
  hasAllowedValueError,
  hasGreaterThanOrEqualError,
  hasInclusiveBetweenError,
  hasMaximumLengthError,
  hasNotEmptyError,
  hasTimePeriodAllowedCodeError,
  hasTimePeriodInvalidYearError,
  hasTimePeriodYearRangeError,
  NEWFIELD_2021,
  NO_RESULTS_MESSAGE,
  NOT_MODELLED_REASON,
  NOT_MODELLED_STATUSES,
  ORDERED_LEVEL_CODES,
  PRIMARY_NAT_NEWEST_FIRST,
  sequence,
  SORT_SEQUENCE_CASES,
  TOTAL_NAT_2020,
  TWO_INDICATORS,
  validationProblem,
  withFixtureStatus,
  addWildcardVersions,
  fixtureVersionId,
  otherDraftVersion,
  yearPeriodEnrolments,
  type QueryBody,
  type SortSequenceCase,
} from './replay.js';

/**
 * Replays the reference's `DataSetsControllerPostQueryTests.cs` over HTTP on the seeded AbsenceSchool fixture:
 * one `describe` per C# test class, one `it` per test and Theory row (Theory rows of criteria by index).
 */

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ QUERY_VERSION_CACHE_MS: '0' });
});
afterAll(async () => {
  await t?.close();
});

interface PostOptions {
  dataSetId?: string;
  dataSetVersion?: string;
  previewToken?: string;
}

/** The C# tests' `QueryDataSet`: the request as the JSON body (`null` sends `null`). */
async function queryDataSet(request: unknown, options: PostOptions = {}) {
  const qs = options.dataSetVersion ? `?dataSetVersion=${encodeURIComponent(options.dataSetVersion)}` : '';
  return t.app.inject({
    method: 'POST',
    url: `/v1/data-sets/${options.dataSetId ?? ABSENCE_SCHOOL.dataSetId}/query${qs}`,
    headers: {
      'content-type': 'application/json',
      ...(options.previewToken ? { 'preview-token': options.previewToken } : {}),
    },
    payload: JSON.stringify(request),
  });
}

async function ok(request: unknown, options: PostOptions = {}): Promise<QueryBody> {
  const response = await queryDataSet(request, options);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<QueryBody>();
}

const SESS_AUTHORISED = { indicators: [D.IndicatorSessAuthorised] };
const facets = (criteria: Record<string, unknown>, request: Record<string, unknown> = SESS_AUTHORISED) => ({
  ...request,
  criteria,
});
const lowerFirst = (comparator: string) => comparator[0]!.toLowerCase() + comparator.slice(1);

describe('AccessTests', () => {
  it('VersionNotAvailable_Returns403(Withdrawn)', async () => {
    await withFixtureStatus(t.database.db, 'Withdrawn', async () => {
      expect((await queryDataSet(SESS_AUTHORISED)).statusCode).toBe(403);
    });
  });
  // The C# case makes the draft the data set's LatestLiveVersion, which no real data set has; asked for by number.
  it('VersionNotAvailable_Returns403(Draft), the draft asked for by number', async () => {
    await withFixtureStatus(t.database.db, 'Draft', async () => {
      expect((await queryDataSet(SESS_AUTHORISED, { dataSetVersion: '1.0' })).statusCode).toBe(403);
    });
  });
  it.skip.each(NOT_MODELLED_STATUSES)(
    `VersionNotAvailable_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`,
    () => {},
  );

  it.each(['Published', 'Deprecated'] as const)('VersionAvailable_Returns200(%s)', async (status) => {
    await withFixtureStatus(t.database.db, status, async () => {
      const body = await ok(SESS_AUTHORISED);
      expect(body.paging).toMatchObject({ page: 1, totalPages: 1, totalResults: 216 });
      expect(body.warnings).toEqual([]);
      expect(body.results).toHaveLength(216);
    });
  });

  it('DataSetDoesNotExist_Returns404', async () => {
    expect(
      (await queryDataSet(SESS_AUTHORISED, { dataSetId: '0b8f1c2e-5f7a-4a3b-9c1d-2e3f4a5b6c7d' })).statusCode,
    ).toBe(404);
  });

  it('VersionDoesNotExist_Returns404', async () => {
    expect((await queryDataSet(SESS_AUTHORISED, { dataSetVersion: '2.0' })).statusCode).toBe(404);
  });

  describe('with versions 1.1 and 1.2 Published and 2.0 and 2.1 in the case status (SetupDataSetWithSpecifiedVersionStatuses)', () => {
    let versions: Awaited<ReturnType<typeof addWildcardVersions>>;
    beforeAll(async () => {
      versions = await addWildcardVersions(t.database);
    });
    afterAll(async () => {
      await versions.restore();
    });

    it.each(['Draft', 'Deprecated', 'Withdrawn'] as const)(
      'WildCardSpecified_RequestsNonPublishedVersion_Returns404(%s)',
      async (status) => {
        await versions.setMajor2(status);
        expect(
          (await queryDataSet(SESS_AUTHORISED, { dataSetVersion: '2.*', previewToken: versions.tokenId })).statusCode,
        ).toBe(404);
      },
    );
    it.skip.each(NOT_MODELLED_STATUSES)(
      `WildCardSpecified_RequestsNonPublishedVersion_Returns404(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );

    it('WildCardSpecified_RequestPublishedVersion_Returns200', async () => {
      await versions.setMajor2('Published');
      const body = await ok(SESS_AUTHORISED, { dataSetVersion: '2.*', previewToken: versions.tokenId });
      expect(body.paging).toMatchObject({ page: 1, totalPages: 1, totalResults: 216 });
      expect(body.warnings).toEqual([]);
      expect(body.results).toHaveLength(216);
    });
  });
});

describe('PreviewTokenTests', () => {
  const token = async (expiresInMs: number, versionId?: number) =>
    insertPreviewToken(
      t.database.db,
      versionId ?? (await fixtureVersionId(t.database.db)),
      new Date(Date.now() + expiresInMs),
    );

  it.each(['Published', 'Deprecated', 'Draft'] as const)('PreviewTokenIsActive_Returns200(%s)', async (status) => {
    await withFixtureStatus(t.database.db, status, async () => {
      const response = await queryDataSet(SESS_AUTHORISED, {
        dataSetVersion: '1.0',
        previewToken: await token(86_400_000),
      });
      expect(response.statusCode, response.body).toBe(200);
    });
  });

  it('PreviewTokenIsExpired_Returns403', async () => {
    await withFixtureStatus(t.database.db, 'Draft', async () => {
      expect(
        (await queryDataSet(SESS_AUTHORISED, { dataSetVersion: '1.0', previewToken: await token(-60_000) })).statusCode,
      ).toBe(403);
    });
  });

  it('PreviewTokenIsForWrongDataSetVersion_Returns403', async () => {
    await withFixtureStatus(t.database.db, 'Draft', async () => {
      const other = await otherDraftVersion(t.database);
      expect(
        (await queryDataSet(SESS_AUTHORISED, { dataSetVersion: '1.0', previewToken: other.tokenId })).statusCode,
      ).toBe(403);
      await other.done();
    });
  });

  it('PreviewTokenIsForUnavailableDataSetVersion_Returns403(Withdrawn)', async () => {
    await withFixtureStatus(t.database.db, 'Withdrawn', async () => {
      expect(
        (await queryDataSet(SESS_AUTHORISED, { dataSetVersion: '1.0', previewToken: await token(86_400_000) }))
          .statusCode,
      ).toBe(403);
    });
  });
  it.skip.each(NOT_MODELLED_STATUSES)(
    `PreviewTokenIsForUnavailableDataSetVersion_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`,
    () => {},
  );
});

describe('IndicatorValidationTests', () => {
  it('Blank_Returns400', async () => {
    const errors = validationProblem(await queryDataSet({ indicators: ['', ' ', '  '] }));
    expect(errors).toHaveLength(3);
    for (const i of [0, 1, 2]) hasNotEmptyError(errors, `indicators[${i}]`);
  });

  it('TooLong_Returns400', async () => {
    const errors = validationProblem(await queryDataSet({ indicators: ['a'.repeat(41), 'a'.repeat(42)] }));
    expect(errors).toHaveLength(2);
    hasMaximumLengthError(errors, 'indicators[0]', 40);
    hasMaximumLengthError(errors, 'indicators[1]', 40);
  });

  it('NotFound_Returns400', async () => {
    const notFound = ['invalid1', 'invalid2', 'invalid3'];
    const errors = validationProblem(await queryDataSet({ indicators: notFound }));
    expect(errors).toHaveLength(1);
    expectError(errors, 'indicators', 'IndicatorsNotFound', { items: notFound });
  });
});

describe('FiltersValidationTests', () => {
  it.each(['In', 'NotIn'])('Empty_Returns400(%s)', async (comparator) => {
    const errors = validationProblem(await queryDataSet(facets({ filters: { [lowerFirst(comparator)]: [] } })));
    expect(errors).toHaveLength(1);
    hasNotEmptyError(errors, `criteria.filters.${lowerFirst(comparator)}`);
  });

  it.each(['In', 'NotIn'])('InvalidMix_Returns400(%s)', async (comparator) => {
    const base = `criteria.filters.${lowerFirst(comparator)}`;
    const errors = validationProblem(
      await queryDataSet(
        facets({ filters: { [lowerFirst(comparator)]: ['', ' ', '  ', 'a'.repeat(11), 'a'.repeat(12)] } }),
      ),
    );
    expect(errors).toHaveLength(5);
    for (const i of [0, 1, 2]) hasNotEmptyError(errors, `${base}[${i}]`);
    hasMaximumLengthError(errors, `${base}[3]`, 10);
    hasMaximumLengthError(errors, `${base}[4]`, 10);
  });

  it('AllComparatorsInvalid_Returns400', async () => {
    const errors = validationProblem(
      await queryDataSet(
        facets({ filters: { eq: 'a'.repeat(11), notEq: 'a'.repeat(12), in: [], notIn: ['a'.repeat(11), ''] } }),
      ),
    );
    expect(errors).toHaveLength(5);
    hasMaximumLengthError(errors, 'criteria.filters.eq', 10);
    hasMaximumLengthError(errors, 'criteria.filters.notEq', 10);
    hasNotEmptyError(errors, 'criteria.filters.in');
    hasMaximumLengthError(errors, 'criteria.filters.notIn[0]', 10);
    hasNotEmptyError(errors, 'criteria.filters.notIn[1]');
  });

  it('NotFound_Returns200_HasWarning', async () => {
    const notFound = ['invalid', '9999999'];
    const body = await ok(
      facets({
        filters: { eq: notFound[0], notEq: notFound[1], in: ['IzBzg', ...notFound], notIn: ['IzBzg', ...notFound] },
      }),
    );
    // The C# test counts 5 warnings: the four below and QueryNoResults (in and notIn of IzBzg match nothing together).
    expect(body.warnings).toHaveLength(5);
    const warning = (path: string) =>
      body.warnings.find((w) => w.code === 'FiltersNotFound' && w.path === path)?.detail;
    expect(warning('criteria.filters.eq')).toEqual({ items: [notFound[0]] });
    expect(warning('criteria.filters.notEq')).toEqual({ items: [notFound[1]] });
    expect(warning('criteria.filters.in')).toEqual({ items: notFound });
    expect(warning('criteria.filters.notIn')).toEqual({ items: notFound });
  });
});

describe('GeographicLevelsValidationTests', () => {
  it('Empty_Returns400', async () => {
    const errors = validationProblem(await queryDataSet(facets({ geographicLevels: { in: [], notIn: [] } })));
    expect(errors).toHaveLength(2);
    hasNotEmptyError(errors, 'criteria.geographicLevels.in');
    hasNotEmptyError(errors, 'criteria.geographicLevels.notIn');
  });

  it.each(['In', 'NotIn'])('InvalidMix_Returns400(%s)', async (comparator) => {
    const invalid = ['', ' ', 'LADD', 'NATT', 'National', 'Local authority', 'LocalAuthority'];
    const path = `criteria.geographicLevels.${lowerFirst(comparator)}`;
    const errors = validationProblem(
      await queryDataSet(facets({ geographicLevels: { [lowerFirst(comparator)]: invalid } })),
    );
    expect(errors).toHaveLength(7);
    invalid.forEach((value, i) => hasAllowedValueError(errors, `${path}[${i}]`, value, ORDERED_LEVEL_CODES));
  });

  it.each(['In', 'NotIn'])('NotFound_Returns200_HasWarning(%s)', async (comparator) => {
    const notFound = ['WARD', 'OA', 'PA'];
    const body = await ok(facets({ geographicLevels: { [lowerFirst(comparator)]: ['LA', ...notFound] } }));
    expect(body.warnings).toHaveLength(1);
    expect(body.warnings[0]).toMatchObject({
      code: 'GeographicLevelsNotFound',
      path: `criteria.geographicLevels.${lowerFirst(comparator)}`,
      detail: { items: notFound },
    });
  });

  it('AllComparatorsInvalid_Returns400', async () => {
    const errors = validationProblem(
      await queryDataSet(
        facets({ geographicLevels: { eq: 'NATT', notEq: 'LADD', in: ['  ', 'National'], notIn: [] } }),
      ),
    );
    expect(errors).toHaveLength(5);
    hasAllowedValueError(errors, 'criteria.geographicLevels.eq', 'NATT', ORDERED_LEVEL_CODES);
    hasAllowedValueError(errors, 'criteria.geographicLevels.notEq', 'LADD', ORDERED_LEVEL_CODES);
    hasAllowedValueError(errors, 'criteria.geographicLevels.in[0]', '  ', ORDERED_LEVEL_CODES);
    hasAllowedValueError(errors, 'criteria.geographicLevels.in[1]', 'National', ORDERED_LEVEL_CODES);
    hasNotEmptyError(errors, 'criteria.geographicLevels.notIn');
  });
});

describe('LocationsValidationTests', () => {
  it.each(['In', 'NotIn'])('Empty_Returns400(%s)', async (comparator) => {
    const errors = validationProblem(await queryDataSet(facets({ locations: { [lowerFirst(comparator)]: [] } })));
    expect(errors).toHaveLength(1);
    hasNotEmptyError(errors, `criteria.locations.${lowerFirst(comparator)}`);
  });

  it.each(['In', 'NotIn'])('InvalidMix_Returns400(%s)', async (comparator) => {
    const path = `criteria.locations.${lowerFirst(comparator)}`;
    const locations = [
      { level: 'LADD', code: '12345' },
      { level: 'NATT', code: '12345' },
      { level: 'NAT', id: '' },
      { level: 'NAT', id: ' ' },
      { level: 'REG', code: '' },
      { level: 'LA', code: '' },
      { level: 'NAT', id: 'a'.repeat(11) },
      { level: 'LA', code: 'a'.repeat(31) },
      { level: 'LA', oldCode: 'a'.repeat(21) },
      { level: 'PROV', ukprn: 'a'.repeat(21) },
      { level: 'SCH', urn: 'a'.repeat(21) },
      { level: 'SCH', laEstab: 'a'.repeat(21) },
    ];
    const errors = validationProblem(
      await queryDataSet(facets({ locations: { [lowerFirst(comparator)]: locations } })),
    );
    expect(errors).toHaveLength(12);
    hasAllowedValueError(errors, `${path}[0].level`, 'LADD', ORDERED_LEVEL_CODES);
    hasAllowedValueError(errors, `${path}[1].level`, 'NATT', ORDERED_LEVEL_CODES);
    hasNotEmptyError(errors, `${path}[2].id`);
    hasNotEmptyError(errors, `${path}[3].id`);
    hasNotEmptyError(errors, `${path}[4].code`);
    hasNotEmptyError(errors, `${path}[5].code`);
    hasMaximumLengthError(errors, `${path}[6].id`, 10);
    hasMaximumLengthError(errors, `${path}[7].code`, 30);
    hasMaximumLengthError(errors, `${path}[8].oldCode`, 20);
    hasMaximumLengthError(errors, `${path}[9].ukprn`, 20);
    hasMaximumLengthError(errors, `${path}[10].urn`, 20);
    hasMaximumLengthError(errors, `${path}[11].laEstab`, 20);
  });

  it('AllComparatorsInvalid_Returns400', async () => {
    const errors = validationProblem(
      await queryDataSet(
        facets({
          locations: {
            eq: { level: 'LADD', code: '12345' },
            notEq: { level: 'NAT', id: ' ' },
            in: [
              { level: '', id: '' },
              { level: 'NAT', id: ' ' },
              { level: 'NAT', id: 'a'.repeat(11) },
            ],
            notIn: [],
          },
        }),
      ),
    );
    expect(errors).toHaveLength(7);
    hasAllowedValueError(errors, 'criteria.locations.eq.level', 'LADD', ORDERED_LEVEL_CODES);
    hasNotEmptyError(errors, 'criteria.locations.notEq.id');
    hasNotEmptyError(errors, 'criteria.locations.in[0].id');
    hasAllowedValueError(errors, 'criteria.locations.in[0].level', '', ORDERED_LEVEL_CODES);
    hasNotEmptyError(errors, 'criteria.locations.in[1].id');
    hasMaximumLengthError(errors, 'criteria.locations.in[2].id', 10);
    hasNotEmptyError(errors, 'criteria.locations.notIn');
  });

  it.each(['In', 'NotIn'])('NotFound_Returns200_HasWarning(%s)', async (comparator) => {
    const notFound = [
      { level: 'NAT', id: '11111111' },
      { level: 'NAT', code: '11111111' },
      { level: 'REG', id: '22222222' },
      { level: 'LA', code: '4444444' },
      { level: 'LA', oldCode: '333' },
      { level: 'PROV', ukprn: '88888888' },
      { level: 'SCH', urn: '666666' },
      { level: 'SCH', laEstab: '7777777' },
    ];
    const body = await ok(
      facets({ locations: { [lowerFirst(comparator)]: [{ level: 'LA', code: 'E08000016' }, ...notFound] } }),
    );
    expect(body.warnings).toHaveLength(1);
    expect(body.warnings[0]).toMatchObject({
      code: 'LocationsNotFound',
      path: `criteria.locations.${lowerFirst(comparator)}`,
      detail: { items: notFound },
    });
  });
});

describe('TimePeriodsValidationTests', () => {
  it.each(['In', 'NotIn'])('Empty_Returns400(%s)', async (comparator) => {
    const errors = validationProblem(await queryDataSet(facets({ timePeriods: { [lowerFirst(comparator)]: [] } })));
    expect(errors).toHaveLength(1);
    hasNotEmptyError(errors, `criteria.timePeriods.${lowerFirst(comparator)}`);
  });

  it.each(['In', 'NotIn'])('InvalidMix_Returns400(%s)', async (comparator) => {
    const path = `criteria.timePeriods.${lowerFirst(comparator)}`;
    const periods = [
      { code: '', period: '' },
      { code: 'AY', period: '2020/2019' },
      { code: 'AY', period: '2020/2022' },
      { code: 'INVALID', period: '2020' },
      { code: 'CY', period: '2020/2021' },
      { code: 'CYQ2', period: '2020/2021' },
      { code: 'RY', period: '2020/2021' },
      { code: 'W10', period: '2020/2021' },
      { code: 'M5', period: '2020/2021' },
    ];
    const errors = validationProblem(
      await queryDataSet(facets({ timePeriods: { [lowerFirst(comparator)]: periods } })),
    );
    expect(errors).toHaveLength(9);
    hasTimePeriodAllowedCodeError(errors, `${path}[0].code`, '');
    hasTimePeriodYearRangeError(errors, `${path}[1].period`, '2020/2019');
    hasTimePeriodYearRangeError(errors, `${path}[2].period`, '2020/2022');
    hasTimePeriodAllowedCodeError(errors, `${path}[3].code`, 'INVALID');
    hasTimePeriodAllowedCodeError(errors, `${path}[4].code`, 'CY');
    hasTimePeriodAllowedCodeError(errors, `${path}[5].code`, 'CYQ2');
    hasTimePeriodAllowedCodeError(errors, `${path}[6].code`, 'RY');
    hasTimePeriodAllowedCodeError(errors, `${path}[7].code`, 'W10');
    hasTimePeriodAllowedCodeError(errors, `${path}[8].code`, 'M5');
  });

  it('AllComparatorsInvalid_Returns400', async () => {
    const errors = validationProblem(
      await queryDataSet(
        facets({
          timePeriods: {
            eq: { code: 'AY', period: '2020/2019' },
            notEq: { code: 'W10', period: '2020/2021' },
            in: [
              { code: 'INVALID', period: '2020' },
              { code: 'CY', period: '' },
            ],
            notIn: [],
            gt: { code: 'CY', period: '2020/2021' },
            gte: { code: 'AY', period: '2020/' },
            lt: { code: '', period: '2020' },
            lte: { code: '', period: '2020/2021' },
          },
        }),
      ),
    );
    expect(errors).toHaveLength(9);
    hasTimePeriodYearRangeError(errors, 'criteria.timePeriods.eq.period', '2020/2019');
    hasTimePeriodAllowedCodeError(errors, 'criteria.timePeriods.notEq.code', 'W10');
    hasTimePeriodAllowedCodeError(errors, 'criteria.timePeriods.in[0].code', 'INVALID');
    hasTimePeriodInvalidYearError(errors, 'criteria.timePeriods.in[1].period', '');
    hasNotEmptyError(errors, 'criteria.timePeriods.notIn');
    hasTimePeriodAllowedCodeError(errors, 'criteria.timePeriods.gt.code', 'CY');
    hasTimePeriodYearRangeError(errors, 'criteria.timePeriods.gte.period', '2020/');
    hasTimePeriodAllowedCodeError(errors, 'criteria.timePeriods.lt.code', '');
    hasTimePeriodAllowedCodeError(errors, 'criteria.timePeriods.lte.code', '');
  });

  it.each(['In', 'NotIn'])('NotFound_Returns200_HasWarning(%s)', async (comparator) => {
    const notFound = [
      { code: 'CY', period: '2021' },
      { code: 'CY', period: '2022' },
      { code: 'CY', period: '2030' },
      { code: 'AY', period: '2023/2024' },
      { code: 'AY', period: '2018/2019' },
    ];
    const body = await ok(
      facets({ timePeriods: { [lowerFirst(comparator)]: [{ code: 'AY', period: '2020/2021' }, ...notFound] } }),
    );
    expect(body.warnings).toHaveLength(1);
    expect(body.warnings[0]).toMatchObject({
      code: 'TimePeriodsNotFound',
      path: `criteria.timePeriods.${lowerFirst(comparator)}`,
    });
    expect(
      (body.warnings[0]!.detail!.items as Array<Record<string, string>>).map((i) => `${i.period}|${i.code}`),
    ).toEqual(notFound.map((i) => `${i.period}|${i.code}`));
  });
});

describe('SortsValidationTests', () => {
  it('Empty_Returns400', async () => {
    const errors = validationProblem(await queryDataSet({ ...SESS_AUTHORISED, sorts: [] }));
    expect(errors).toHaveLength(1);
    hasNotEmptyError(errors, 'sorts');
  });

  it('InvalidMix_Returns400', async () => {
    const errors = validationProblem(
      await queryDataSet({
        ...SESS_AUTHORISED,
        sorts: [
          { field: '', direction: 'asc' },
          { field: 'test', direction: '' },
          { field: 'test', direction: 'invalid' },
          { field: 'test', direction: 'asc' },
          { field: 'test', direction: 'desc' },
          { field: 'a'.repeat(41), direction: 'Asc' },
          { field: 'b'.repeat(41), direction: 'Desc' },
        ],
      }),
    );
    expect(errors).toHaveLength(8);
    hasNotEmptyError(errors, 'sorts[0].field');
    for (const [i, value] of ['asc', '', 'invalid', 'asc', 'desc'].entries())
      expectError(errors, `sorts[${i}].direction`, 'AllowedValue', { value });
    hasMaximumLengthError(errors, 'sorts[5].field', 40);
    hasMaximumLengthError(errors, 'sorts[6].field', 40);
  });

  it('FieldsNotFound_Returns400', async () => {
    const notFound = [
      { field: 'invalid1', direction: 'Asc' },
      { field: 'invalid2', direction: 'Desc' },
      { field: 'filter', direction: 'Asc' },
      { field: 'filter|invalid', direction: 'Asc' },
      { field: 'location', direction: 'Asc' },
      { field: 'location|invalid', direction: 'Asc' },
      { field: 'indicator', direction: 'Asc' },
      { field: 'indicator|invalid', direction: 'Asc' },
    ];
    const errors = validationProblem(
      await queryDataSet({ ...SESS_AUTHORISED, sorts: [{ field: 'timePeriod', direction: 'Asc' }, ...notFound] }),
    );
    expect(errors).toHaveLength(1);
    expectError(errors, 'sorts', 'SortFieldsNotFound', { items: notFound });
  });
});

describe('PaginationTests', () => {
  it.each([-1, 0])('PageTooSmall_Returns400(%i)', async (page) => {
    const errors = validationProblem(await queryDataSet({ ...SESS_AUTHORISED, page }));
    expect(errors).toHaveLength(1);
    hasGreaterThanOrEqualError(errors, 'page', 1);
  });

  it.each([-1, 0, 10001])('PageSizeOutOfBounds_Returns400(%i)', async (pageSize) => {
    const errors = validationProblem(await queryDataSet({ ...SESS_AUTHORISED, pageSize }));
    expect(errors).toHaveLength(1);
    hasInclusiveBetweenError(errors, 'pageSize', 1, 10000);
  });

  it.each([
    [1, 50, 5, 50],
    [2, 50, 5, 50],
    [3, 50, 5, 50],
    [1, 150, 2, 150],
    [2, 150, 2, 66],
    [1, 216, 1, 216],
  ])('MultiplePages_Returns200_PaginatedCorrectly(%i, %i, %i, %i)', async (page, pageSize, totalPages, pageResults) => {
    const body = await ok({ ...SESS_AUTHORISED, page, pageSize });
    expect(body.results).toHaveLength(pageResults);
    expect(body.paging).toEqual({ page, pageSize, totalPages, totalResults: 216 });
  });
});

const TWO = { indicators: TWO_INDICATORS };

describe('FiltersQueryTests', () => {
  it.each([
    ['Eq', 54],
    ['NotEq', 162],
    ['In', 54],
    ['NotIn', 162],
  ] as const)('SingleOption_Returns200(%s, %i)', async (comparator, expected) => {
    const value = comparator.endsWith('In') ? [D.FilterNcYear4] : D.FilterNcYear4;
    const body = await ok(facets({ filters: { [lowerFirst(comparator)]: value } }, TWO));
    expect(body.results).toHaveLength(expected);
    const years = gatherQueryResultsMeta(body.results).filters[D.FilterNcYear]!;
    if (comparator === 'Eq' || comparator === 'In') expect([...years]).toEqual([D.FilterNcYear4]);
    else {
      expect(years.size).toBe(3);
      expect(years.has(D.FilterNcYear4)).toBe(false);
    }
  });

  it.each([
    ['In', 108],
    ['NotIn', 108],
  ] as const)('MultipleOptionsInSameFilter_Returns200(%s, %i)', async (comparator, expected) => {
    const ids = [D.FilterNcYear4, D.FilterNcYear8];
    const body = await ok(facets({ filters: { [lowerFirst(comparator)]: ids } }, TWO));
    expect(body.results).toHaveLength(expected);
    const years = gatherQueryResultsMeta(body.results).filters[D.FilterNcYear]!;
    expect(years.size).toBe(2);
    for (const id of ids) expect(years.has(id)).toBe(comparator === 'In');
  });

  it.each([
    ['In', 150],
    ['NotIn', 66],
  ] as const)('MultipleOptionsInDifferentFilters_Returns200(%s, %i)', async (comparator, expected) => {
    const ids = [
      D.FilterSchoolTypeTotal,
      D.FilterSchoolTypeSecondary,
      D.FilterAcademyTypeSecondaryFreeSchool,
      D.FilterAcademyTypeSecondarySponsorLed,
    ];
    const body = await ok(facets({ filters: { [lowerFirst(comparator)]: ids } }, TWO));
    expect(body.results).toHaveLength(expected);
    const meta = gatherQueryResultsMeta(body.results);
    const schoolTypes = meta.filters[D.FilterSchoolType]!;
    const academyTypes = meta.filters[D.FilterAcademyType]!;
    if (comparator === 'In') {
      expect([...schoolTypes].sort()).toEqual([ids[0], ids[1]].sort());
      expect([...academyTypes].sort()).toEqual([ids[2], ids[3]].sort());
    } else {
      expect(schoolTypes.size).toBe(1);
      expect(academyTypes.size).toBe(1);
      for (const id of ids) expect(schoolTypes.has(id) || academyTypes.has(id)).toBe(false);
    }
  });
});

describe('GeographicLevelsQueryTests', () => {
  it.each([
    ['Eq', 132],
    ['NotEq', 84],
    ['In', 132],
    ['NotIn', 84],
  ] as const)('SingleOption_Returns200(%s, %i)', async (comparator, expected) => {
    const body = await ok(
      facets({ geographicLevels: { [lowerFirst(comparator)]: comparator.endsWith('In') ? ['LA'] : 'LA' } }, TWO),
    );
    expect(body.results).toHaveLength(expected);
    const levels = gatherQueryResultsMeta(body.results).geographicLevels;
    if (comparator === 'Eq' || comparator === 'In') expect([...levels]).toEqual(['LA']);
    else {
      expect(levels.size).toBe(3);
      expect(levels.has('LA')).toBe(false);
    }
  });

  it.each([
    ['In', 180],
    ['NotIn', 36],
  ] as const)('MultipleOptions_Returns200(%s, %i)', async (comparator, expected) => {
    const body = await ok(facets({ geographicLevels: { [lowerFirst(comparator)]: ['REG', 'LA'] } }, TWO));
    expect(body.results).toHaveLength(expected);
    const levels = gatherQueryResultsMeta(body.results).geographicLevels;
    expect(levels.size).toBe(2);
    for (const level of ['REG', 'LA']) expect(levels.has(level)).toBe(comparator === 'In');
  });
});

describe('LocationsQueryTests', () => {
  const SHEFFIELD = { level: 'LA', code: 'E08000019' };
  const BARNSLEY = { level: 'LA', id: D.LocationLaBarnsley };

  it.each([
    ['Eq', 36],
    ['NotEq', 180],
    ['In', 36],
    ['NotIn', 180],
  ] as const)('SingleOption_Returns200(%s, %i)', async (comparator, expected) => {
    const body = await ok(
      facets({ locations: { [lowerFirst(comparator)]: comparator.endsWith('In') ? [SHEFFIELD] : SHEFFIELD } }, TWO),
    );
    expect(body.results).toHaveLength(expected);
    const las = gatherQueryResultsMeta(body.results).locations.LA!;
    if (comparator === 'Eq' || comparator === 'In') expect([...las]).toEqual([D.LocationLaSheffield]);
    else {
      expect(las.size).toBe(3);
      expect(las.has(D.LocationLaSheffield)).toBe(false);
    }
  });

  it.each([
    ['In', 72],
    ['NotIn', 144],
  ] as const)('MultipleOptionsInSameLevel_Returns200(%s, %i)', async (comparator, expected) => {
    const body = await ok(facets({ locations: { [lowerFirst(comparator)]: [SHEFFIELD, BARNSLEY] } }, TWO));
    expect(body.results).toHaveLength(expected);
    const las = gatherQueryResultsMeta(body.results).locations.LA!;
    expect(las.size).toBe(2);
    for (const id of [D.LocationLaSheffield, D.LocationLaBarnsley]) expect(las.has(id)).toBe(comparator === 'In');
  });

  it.each([
    ['In', 84],
    ['NotIn', 132],
  ] as const)('MultipleOptionsInDifferentLevels_Returns200(%s, %i)', async (comparator, expected) => {
    const locations = [SHEFFIELD, BARNSLEY, { level: 'SCH', laEstab: '3144001' }, { level: 'SCH', urn: '102579' }];
    const body = await ok(facets({ locations: { [lowerFirst(comparator)]: locations } }, TWO));
    expect(body.results).toHaveLength(expected);
    const meta = gatherQueryResultsMeta(body.results);
    expect([meta.locations.LA!.size, meta.locations.SCH!.size]).toEqual(comparator === 'In' ? [3, 6] : [2, 2]);
  });
});

describe('TimePeriodsQueryTests', () => {
  const TP_2021_22 = { period: '2021/2022', code: 'AY' };
  it.each([
    ['Eq', 72, 1],
    ['NotEq', 144, 2],
    ['In', 72, 1],
    ['NotIn', 144, 2],
    ['Gt', 72, 1],
    ['Gte', 144, 2],
    ['Lt', 72, 1],
    ['Lte', 144, 2],
  ] as const)('SingleOption_Returns200(%s, %i)', async (comparator, expected, periods) => {
    const body = await ok(
      facets({ timePeriods: { [lowerFirst(comparator)]: comparator.endsWith('In') ? [TP_2021_22] : TP_2021_22 } }, TWO),
    );
    expect(body.results).toHaveLength(expected);
    const timePeriods = gatherQueryResultsMeta(body.results).timePeriods;
    expect(timePeriods.size).toBe(periods);
    expect(timePeriods.has('2021/2022|AY')).toBe(['Eq', 'In', 'Gte', 'Lte'].includes(comparator));
  });

  it.each([
    ['In', 144],
    ['NotIn', 72],
  ] as const)('MultipleOptions_Returns200(%s, %i)', async (comparator, expected) => {
    const body = await ok(
      facets(
        {
          timePeriods: {
            [lowerFirst(comparator)]: [
              { period: '2021', code: 'AY' },
              { period: '2022/2023', code: 'AY' },
            ],
          },
        },
        TWO,
      ),
    );
    expect(body.results).toHaveLength(expected);
    const timePeriods = [...gatherQueryResultsMeta(body.results).timePeriods].sort();
    expect(timePeriods).toEqual(comparator === 'In' ? ['2021/2022|AY', '2022/2023|AY'] : ['2020/2021|AY']);
  });
});

/** The mixture of every facet the and/or/not tests build on (`AllFacetsMixture_Returns200`). */
const MIXTURE = {
  filters: {
    notEq: D.FilterNcYear8,
    in: [D.FilterAcademyTypeSecondaryFreeSchool, D.FilterAcademyTypeSecondarySponsorLed],
  },
  geographicLevels: { notEq: 'NAT' },
  locations: {
    eq: { level: 'NAT', id: D.LocationNatEngland },
    notIn: [
      { level: 'REG', code: 'E13000002' },
      { level: 'LA', oldCode: '370' },
    ],
  },
  timePeriods: { gt: { period: '2020/2021', code: 'AY' }, lt: { period: '2022/2023', code: 'AY' } },
};

describe('FacetsOnlyResultsTests', () => {
  it('NoResults_Returns200_HasWarning (documented deviation: the NoResults code the specification names)', async () => {
    const body = await ok(
      facets({ locations: { eq: { level: 'LA', id: D.LocationLaSheffield } }, geographicLevels: { eq: 'NAT' } }),
    );
    expect(body.paging).toEqual({ page: 1, pageSize: 1000, totalPages: 1, totalResults: 0 });
    expect(body.warnings).toHaveLength(1);
    // The reference's code is QueryNoResults; docs/compatibility.md records why this service says NoResults.
    expect(body.warnings[0]).toMatchObject({ code: 'NoResults', message: NO_RESULTS_MESSAGE });
  });

  it('DebugEnabled_Returns200_HasWarning', async () => {
    const body = await ok({ ...SESS_AUTHORISED, debug: true });
    expect(body.warnings).toHaveLength(1);
    expect(body.warnings[0]).toMatchObject({ code: 'DebugEnabled', message: DEBUG_ENABLED_MESSAGE });
  });

  it('SingleIndicator_Returns200_CorrectViewModel', async () => {
    expectSingleIndicatorViewModel(await ok(SESS_AUTHORISED));
  });

  it('AllIndicators_Returns200_ResultValuesInAllowedRanges', async () => {
    expectValuesInAllowedRanges(await ok({ indicators: ALL_INDICATORS }));
  });

  it.each([false, true])('AllIndicators_Returns200_CorrectResultIds(%s)', async (includeIndicators) => {
    expectAllResultIds(await ok(includeIndicators ? { indicators: ALL_INDICATORS } : {}));
  });

  it.each([false, true])('AllIndicators_Returns200_CorrectDebuggedResultLabels(%s)', async (includeIndicators) => {
    expectAllDebuggedLabels(
      await ok(includeIndicators ? { indicators: ALL_INDICATORS, debug: true } : { debug: true }),
    );
  });

  it('AllFacetsMixture_Returns200', async () => {
    expect((await ok(facets(MIXTURE, TWO))).results).toEqual([NEWFIELD_2021]);
  });

  it('NoFacets_Returns200AndAllResults', async () => {
    const body = await ok(null);
    expect(body.results).toHaveLength(216);
    const full = body.results.find((r) => r.values[D.IndicatorEnrolments] === '296352');
    expect(full).toEqual({
      filters: {
        [D.FilterNcYear]: D.FilterNcYear4,
        [D.FilterSchoolType]: D.FilterSchoolTypePrimary,
        [D.FilterAcademyType]: D.FilterAcademyTypePrimarySponsorLed,
      },
      geographicLevel: 'LA',
      locations: {
        NAT: D.LocationNatEngland,
        REG: D.LocationRegionYorkshire,
        LA: D.LocationLaBarnsley,
        SCH: D.LocationSchoolHoylandPrimary,
      },
      timePeriod: { code: 'AY', period: '2020/2021' },
      values: {
        [D.IndicatorEnrolments]: '296352',
        [D.IndicatorSessAuthorised]: '1002108',
        [D.IndicatorSessPossible]: '7368540',
        [D.IndicatorSessUnauthorised]: '285622',
        [D.IndicatorSessUnauthorisedPercent]: '3.9876',
      },
    });
  });
});

const TP = (period: string) => ({ period, code: 'AY' });
/** `BaseFacets` of AndConditionTests: the mixture with the time period 2021/22 instead of the gt/lt range. */
const AND_BASE = { ...MIXTURE, locations: { notIn: MIXTURE.locations.notIn }, timePeriods: { eq: TP('2021/2022') } };
/** `BaseFacets` of OrConditionTests: the mixture without time periods. */
const OR_BASE = { filters: MIXTURE.filters, geographicLevels: MIXTURE.geographicLevels, locations: MIXTURE.locations };
/** `BaseFacets` of NotConditionTests. */
const NOT_BASE = {
  filters: { in: [D.FilterSchoolTypePrimary, D.FilterNcYear8] },
  geographicLevels: { in: ['NAT', 'REG', 'LA'] },
  locations: {
    in: [
      { level: 'LA', code: 'E09000003' },
      { level: 'LA', code: 'E08000016' },
      { level: 'LA', code: 'E09000021 / E09000027' },
    ],
  },
  timePeriods: { in: [TP('2020/2021'), TP('2022/2023')] },
};

describe('AndConditionTests', () => {
  it('Empty_Returns400', async () => {
    const errors = validationProblem(
      await queryDataSet({ indicators: TWO_INDICATORS, debug: true, criteria: { and: [] } }),
    );
    expect(errors).toHaveLength(1);
    hasNotEmptyError(errors, 'criteria.and');
  });

  const split = (base: typeof AND_BASE) => [
    { filters: base.filters },
    { geographicLevels: base.geographicLevels },
    { locations: base.locations },
    { timePeriods: base.timePeriods },
  ];
  const EQUIVALENT = [
    { and: [AND_BASE] },
    { and: split(AND_BASE) },
    { and: [{ and: [AND_BASE] }] },
    { and: [{ and: split(AND_BASE) }] },
    {
      and: [
        {
          and: [
            { filters: { notEq: AND_BASE.filters.notEq } },
            { filters: { in: AND_BASE.filters.in }, locations: AND_BASE.locations },
          ],
        },
        { geographicLevels: AND_BASE.geographicLevels },
        { timePeriods: AND_BASE.timePeriods },
      ],
    },
    {
      and: [
        {
          and: [
            { filters: { notEq: AND_BASE.filters.notEq } },
            { locations: AND_BASE.locations, timePeriods: AND_BASE.timePeriods },
          ],
        },
        {
          or: [
            { filters: { eq: D.FilterAcademyTypeSecondaryFreeSchool } },
            { filters: { eq: D.FilterAcademyTypeSecondarySponsorLed } },
          ],
        },
        { not: { geographicLevels: { eq: 'NAT' } } },
      ],
    },
  ];

  it.each(EQUIVALENT.map((criteria, i) => [i, criteria] as const))(
    'EquivalentCriteria_Returns200(row %i)',
    async (_i, criteria) => {
      expect((await ok({ indicators: TWO_INDICATORS, criteria })).results).toEqual([NEWFIELD_2021]);
    },
  );
});

describe('OrConditionTests', () => {
  it('Empty_Returns400', async () => {
    const errors = validationProblem(
      await queryDataSet({ indicators: TWO_INDICATORS, debug: true, criteria: { or: [] } }),
    );
    expect(errors).toHaveLength(1);
    hasNotEmptyError(errors, 'criteria.or');
  });

  const both = { in: [TP('2021/2022'), TP('2022/2023')] };
  const eq2122 = { ...OR_BASE, timePeriods: { eq: TP('2021/2022') } };
  const eq2223 = { ...OR_BASE, timePeriods: { eq: TP('2022/2023') } };
  const EQUIVALENT = [
    { or: [{ ...OR_BASE, timePeriods: both }] },
    { or: [eq2122, eq2223] },
    { or: [eq2122, { or: [eq2223] }] },
    { or: [{ or: [{ ...OR_BASE, timePeriods: both }] }] },
    { or: [{ or: [eq2122, eq2223] }] },
    {
      or: [
        {
          and: [
            { filters: OR_BASE.filters },
            { geographicLevels: OR_BASE.geographicLevels },
            { locations: OR_BASE.locations },
            { timePeriods: both },
          ],
        },
        { or: [eq2122, eq2223] },
      ],
    },
  ];

  it.each(EQUIVALENT.map((criteria, i) => [i, criteria] as const))(
    'EquivalentCriteria_Returns200(row %i)',
    async (_i, criteria) => {
      const body = await ok({ indicators: TWO_INDICATORS, criteria });
      expect(body.results).toEqual([
        {
          ...NEWFIELD_2021,
          timePeriod: { code: 'AY', period: '2022/2023' },
          values: { [D.IndicatorEnrolments]: '751028', [D.IndicatorSessAuthorised]: '175843' },
        },
        NEWFIELD_2021,
      ]);
    },
  );
});

describe('NotConditionTests', () => {
  const EQUIVALENT = [
    { not: NOT_BASE },
    { not: { not: { not: NOT_BASE } } },
    { not: { not: { and: [{ ...MIXTURE, timePeriods: { eq: TP('2021/2022') } }] } } },
    { not: { or: Object.entries(NOT_BASE).map(([facet, comparators]) => ({ [facet]: comparators })) } },
  ];

  it.each(EQUIVALENT.map((criteria, i) => [i, criteria] as const))(
    'EquivalentCriteria_Returns200(row %i)',
    async (_i, criteria) => {
      expect((await ok({ indicators: TWO_INDICATORS, criteria })).results).toEqual([NEWFIELD_2021]);
    },
  );
});

describe('SortsTests', () => {
  const ENROLMENTS = { indicators: [D.IndicatorEnrolments] };
  const PRIMARY_NAT = { filters: { eq: D.FilterSchoolTypePrimary }, geographicLevels: { eq: 'NAT' } };

  it('NoFields_SingleTimePeriod_Returns200', async () => {
    const body = await ok(
      facets(
        {
          filters: { eq: D.FilterSchoolTypeTotal },
          geographicLevels: { eq: 'NAT' },
          timePeriods: { eq: TP('2020/2021') },
        },
        ENROLMENTS,
      ),
    );
    expect(yearPeriodEnrolments(body)).toEqual(TOTAL_NAT_2020);
  });

  it('NoFields_MultipleTimePeriods_Returns200', async () => {
    expect(yearPeriodEnrolments(await ok(facets(PRIMARY_NAT, ENROLMENTS)))).toEqual(PRIMARY_NAT_NEWEST_FIRST);
  });

  it('SingleField_TimePeriodAsc_Returns200', async () => {
    const body = await ok(facets(PRIMARY_NAT, { ...ENROLMENTS, sorts: [{ field: 'timePeriod', direction: 'Asc' }] }));
    const [a, b, c, d, e, f] = PRIMARY_NAT_NEWEST_FIRST;
    expect(yearPeriodEnrolments(body)).toEqual([e, f, c, d, a, b]);
  });

  it('SingleField_TimePeriodDesc_Returns200', async () => {
    const body = await ok(facets(PRIMARY_NAT, { ...ENROLMENTS, sorts: [{ field: 'timePeriod', direction: 'Desc' }] }));
    expect(yearPeriodEnrolments(body)).toEqual(PRIMARY_NAT_NEWEST_FIRST);
  });

  const TP_2020 = { eq: { period: '2020', code: 'AY' } };
  const FACETS: Record<SortSequenceCase['facets'], Record<string, unknown>> = {
    year4England2020: {
      filters: { eq: D.FilterNcYear4 },
      locations: { eq: { level: 'NAT', id: D.LocationNatEngland } },
      timePeriods: TP_2020,
    },
    year4La2020: { filters: { eq: D.FilterNcYear4 }, geographicLevels: { eq: 'LA' }, timePeriods: TP_2020 },
    nat2020: { geographicLevels: { eq: 'NAT' }, timePeriods: TP_2020 },
    year4Reg2020: { filters: { eq: D.FilterNcYear4 }, geographicLevels: { eq: 'REG' }, timePeriods: TP_2020 },
  };

  it.each(SORT_SEQUENCE_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const body = await ok(
      facets(FACETS[c.facets], { ...ENROLMENTS, sorts: [{ field: c.field, direction: c.direction }] }),
    );
    expect(body.results).toHaveLength(c.count);
    expect(sequence(body.results.map(c.pick))).toEqual(c.expected);
  });

  it('MultipleFields_Returns200_CorrectSequence', async () => {
    const sorts = [
      { field: 'timePeriod', direction: 'Asc' },
      { field: 'location|LA', direction: 'Desc' },
      { field: `filter|${D.FilterNcYear}`, direction: 'Asc' },
    ];
    expectMultipleFieldsSequence(
      await ok(
        facets({ geographicLevels: { eq: 'LA' }, filters: { eq: D.FilterSchoolTypeTotal } }, { ...ENROLMENTS, sorts }),
      ),
    );
  });
});

describe('AnalyticsTests', () => {
  it.skip(`AnalyticsRequestCaptured: ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
  it.skip(`UnsuccessfulQuery_NotCapturedByAnalytics: ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
  it.skip(`ExceptionThrownByAnalyticsService_SuccessfulResultsStillReturned: ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
});
