import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetStatus, VersionStatus } from '../../../src/statistics/tables.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ABSENCE_SCHOOL } from '../../helpers/statistics.js';
import {
  insertCsvFile,
  insertDataSet,
  insertPreviewToken,
  insertPublication,
  insertSmallMeta,
  insertVersion,
} from '../fixtures.js';
import {
  ANALYTICS_NOT_EXPRESSIBLE,
  expectError,
  insertCatalogueDataSet,
  NOT_MODELLED_REASON,
  NOT_MODELLED_STATUSES,
  validationProblem,
  HOUR,
  MISSING,
} from './replay.js';

/**
 * Replays the reference's `DataSetsControllerTests.cs` (GET /v1/data-sets/{id}, /meta and /csv) over HTTP. The C#
 * tests generate data sets with random metadata; here each case inserts its own catalogue rows (read/fixtures.ts)
 * or uses the seeded AbsenceSchool fixture where a case needs real metadata.
 */

let t: TestApp;
let publicationId: string;

beforeAll(async () => {
  t = await buildTestApp();
  publicationId = await insertPublication(t.database.db, { title: 'Replay of DataSetsControllerTests' });
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string, previewToken?: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'GET',
    url,
    headers: { ...headers, ...(previewToken ? { 'preview-token': previewToken } : {}) },
  });

const dataSet = (status: DataSetStatus, versions: Array<[string, VersionStatus]> = []) =>
  insertCatalogueDataSet(t.database.db, publicationId, status, versions);
const token = (versionId: number, expiresInMs = HOUR) =>
  insertPreviewToken(t.database.db, versionId, new Date(Date.now() + expiresInMs));

describe('GetDataSetTests', () => {
  describe('PublishedDataSetTests', () => {
    it('DataSetIsAvailable_Returns200(Published): the seeded fixture', async () => {
      const response = await get(`/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}`);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toEqual({
        id: ABSENCE_SCHOOL.dataSetId,
        title: 'Absence rates by school and geography',
        summary: expect.any(String),
        status: 'Published',
        latestVersion: {
          version: '1.0',
          // Milliseconds, not the reference's ticks: a documented deviation (time stamps).
          published: '2024-03-21T09:30:00.000Z',
          totalResults: 216,
          file: { id: expect.any(String) },
          timePeriods: { start: '2020/21', end: '2022/23' },
          geographicLevels: ['Local authority', 'National', 'Regional', 'School'],
          filters: ['Academy type', 'National Curriculum year', 'School type'],
          indicators: [
            'Enrolments',
            'Number of authorised sessions',
            'Number of possible sessions',
            'Number of unauthorised sessions',
            'Percentage of unauthorised sessions',
          ],
        },
      });
      // The reference omits a null SupersedingDataSetId (its serializer drops null members).
      expect('supersedingDataSetId' in body).toBe(false);
    });

    it('DataSetIsAvailable_Returns200(Deprecated)', async () => {
      const superseding = (await dataSet('Published', [['1.0', 'Published']])).id;
      const id = await insertDataSet(t.database.db, {
        publicationId,
        title: 'Deprecated one',
        status: 'Deprecated',
        supersedingDataSetId: superseding,
      });
      await insertVersion(t.database.db, { dataSetId: id, version: '1.0', status: 'Deprecated' });
      const response = await get(`/v1/data-sets/${id}`);
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({
        id,
        status: 'Deprecated',
        supersedingDataSetId: superseding,
        latestVersion: { version: '1.0' },
      });
    });

    it.each(['Draft', 'Withdrawn'] as const)('DataSetNotAvailable_Returns403(%s)', async (status) => {
      const { id } = await dataSet(status);
      expect((await get(`/v1/data-sets/${id}`)).statusCode).toBe(403);
    });

    it('DataSetDoesNotExist_Returns404', async () => {
      expect((await get(`/v1/data-sets/${MISSING}`)).statusCode).toBe(404);
    });
  });

  describe('PreviewTokenTests', () => {
    it.each(['Draft', 'Published', 'Deprecated', 'Withdrawn'] as const)(
      'PreviewTokenIsActive_Returns200(%s)',
      async (status) => {
        const { id, versionIds } = await dataSet(status, [['1.0', 'Draft']]);
        const response = await get(`/v1/data-sets/${id}`, await token(versionIds[0]!));
        expect(response.statusCode, response.body).toBe(200);
        const body = response.json();
        expect(body).toMatchObject({ id, title: `Data set ${status}`, status });
        // No live version: LatestVersion is null, and omitted.
        expect('latestVersion' in body).toBe(false);
      },
    );

    it('PreviewTokenIsActiveButForLiveVersion_DataSetIsAvailable_ReturnsOk', async () => {
      const { id, versionIds } = await dataSet('Published', [
        ['1.0', 'Published'],
        ['1.1', 'Draft'],
      ]);
      expect((await get(`/v1/data-sets/${id}`, await token(versionIds[0]!))).statusCode).toBe(200);
    });

    it('PreviewTokenIsExpired_Returns403', async () => {
      const { id, versionIds } = await dataSet('Draft', [['1.0', 'Draft']]);
      expect((await get(`/v1/data-sets/${id}`, await token(versionIds[0]!, -HOUR))).statusCode).toBe(403);
    });

    it('PreviewTokenIsForWrongDataSet_Returns403', async () => {
      const first = await dataSet('Draft', [['1.0', 'Draft']]);
      const second = await dataSet('Draft', [['1.0', 'Draft']]);
      expect((await get(`/v1/data-sets/${first.id}`, await token(first.versionIds[0]!))).statusCode).toBe(200);
      expect((await get(`/v1/data-sets/${first.id}`, await token(second.versionIds[0]!))).statusCode).toBe(403);
    });

    it.skip.each(NOT_MODELLED_STATUSES)(
      `PreviewTokenIsForUnavailableDataSetVersion_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );
  });

  describe('AnalyticsTests', () => {
    it.skip(`AnalyticsRequestCaptured: ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
  });
});

describe('GetDataSetMetaTests', () => {
  const meta = (id: string, query = '', previewToken?: string) => get(`/v1/data-sets/${id}/meta${query}`, previewToken);

  describe('NoQueryParametersTests', () => {
    it('ReturnsCorrectViewModel (on the fixture: every meta member the reference model has, none it omits)', async () => {
      const response = await meta(ABSENCE_SCHOOL.dataSetId);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.filters.map((f: { id: string }) => f.id)).toEqual(['dP0Zw', 'O7CLF', '7zXob']);
      for (const filter of body.filters) {
        expect(Object.keys(filter).sort()).toEqual(['column', 'hint', 'id', 'label', 'options']);
        for (const option of filter.options) expect(Object.keys(option).sort()).toEqual(['id', 'label']);
      }
      // The reference's IndicatorViewModel: Unit is null when the indicator has none, and null members are omitted.
      const indicators = Object.fromEntries(body.indicators.map((i: Record<string, unknown>) => [i.column, i]));
      expect(indicators.enrolments).toEqual({
        id: 'dP0Zw',
        column: 'enrolments',
        label: 'Enrolments',
        decimalPlaces: 0,
      });
      expect(indicators.sess_unauthorised_percent).toEqual({
        id: 'IzBzg',
        column: 'sess_unauthorised_percent',
        label: 'Percentage of unauthorised sessions',
        unit: '%',
        decimalPlaces: 2,
      });
      expect(body.geographicLevels).toEqual([
        { code: 'LA', label: 'Local authority' },
        { code: 'NAT', label: 'National' },
        { code: 'REG', label: 'Regional' },
        { code: 'SCH', label: 'School' },
      ]);
      const byLevel = Object.fromEntries(
        body.locations.map((g: { level: { code: string }; options: unknown[] }) => [g.level.code, g.options]),
      );
      expect(byLevel.LA).toContainEqual({ id: 'dP0Zw', label: 'Barnsley', code: 'E08000016', oldCode: '370' });
      expect(byLevel.NAT).toEqual([{ id: 'IzBzg', label: 'England', code: 'E92000001' }]);
      expect(byLevel.SCH).toContainEqual({
        id: 'CpId1',
        label: 'Wren Academy Finchley',
        urn: '135507',
        laEstab: '3026906',
      });
      expect(body.timePeriods).toEqual([
        { code: 'AY', period: '2020/2021', label: '2020/21' },
        { code: 'AY', period: '2021/2022', label: '2021/22' },
        { code: 'AY', period: '2022/2023', label: '2022/23' },
      ]);
    });

    it.each(['Published', 'Withdrawn', 'Deprecated'] as const)('VersionAvailable_Returns200(%s)', async (status) => {
      const { id } = await dataSet('Published', [['1.0', status]]);
      expect((await meta(id, '?dataSetVersion=1.0')).statusCode).toBe(200);
    });

    it('VersionNotAvailable_Returns403(Draft)', async () => {
      const { id } = await dataSet('Published', [['1.0', 'Draft']]);
      expect((await meta(id, '?dataSetVersion=1.0')).statusCode).toBe(403);
    });
    it.skip.each(NOT_MODELLED_STATUSES)(
      `VersionNotAvailable_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );

    it('DataSetDoesNotExist_Returns404', async () => {
      expect((await meta(MISSING)).statusCode).toBe(404);
    });
  });

  describe('DataSetVersionQueryParameterTests', () => {
    let id: string;
    beforeAll(async () => {
      id = await insertDataSet(t.database.db, { publicationId, title: 'Versions of meta', status: 'Published' });
      for (const version of ['1.0', '2.0']) {
        const row = await insertVersion(t.database.db, {
          dataSetId: id,
          version,
          status: 'Published',
          published: version === '1.0' ? '2024-01-01T09:30:00Z' : '2024-06-01T09:30:00Z',
        });
        await insertSmallMeta(t.database.db, row.id);
        await t.database.db
          .updateTable('version_filters')
          .set({ label: `filter of ${version}` })
          .where('version_id', '=', row.id)
          .where('column_name', '=', 'school_type')
          .execute();
      }
    });
    const labels = (body: { filters: Array<{ label: string }> }) => body.filters.map((f) => f.label);

    it('VersionSpecified_ReturnsCorrectVersion', async () => {
      expect(labels((await meta(id, '?dataSetVersion=1.0')).json())).toContain('filter of 1.0');
    });

    it('VersionUnspecified_ReturnsLatestVersion', async () => {
      expect(labels((await meta(id)).json())).toContain('filter of 2.0');
    });

    it('VersionExistsForOtherDataSet_Returns404', async () => {
      const other = await dataSet('Published', [['1.0', 'Published']]);
      expect((await meta(other.id, '?dataSetVersion=2.0')).statusCode).toBe(404);
    });

    it('VersionDoesNotExist_Returns404', async () => {
      const other = await dataSet('Published');
      expect((await meta(other.id, '?dataSetVersion=1.0')).statusCode).toBe(404);
    });

    it.each(['Draft', 'Deprecated', 'Withdrawn'] as const)(
      'WildCardSpecified_RequestsNonPublishedVersion_Returns404(%s)',
      async (status) => {
        const other = await dataSet('Published', [
          ['1.0', 'Published'],
          ['1.1', 'Published'],
          ['1.2', 'Published'],
          ['2.0', status],
          ['2.1', status],
        ]);
        expect((await meta(other.id, '?dataSetVersion=2.*')).statusCode).toBe(404);
      },
    );
    it.skip.each(NOT_MODELLED_STATUSES)(
      `WildCardSpecified_RequestsNonPublishedVersion_Returns404(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );

    it('WildCardSpecified_RequestsPublishedVersion_Returns200', async () => {
      const other = await dataSet('Published', [
        ['1.0', 'Published'],
        ['2.0', 'Published'],
        ['2.1', 'Published'],
      ]);
      expect((await meta(other.id, '?dataSetVersion=2.*')).statusCode).toBe(200);
    });
  });

  describe('TypesQueryParameterTests', () => {
    const SECTIONS = {
      Filters: 'filters',
      Locations: 'locations',
      Indicators: 'indicators',
      TimePeriods: 'timePeriods',
    } as const;
    type MetaType = keyof typeof SECTIONS;
    const ALLOWED = ['Filters', 'Indicators', 'Locations', 'TimePeriods'];

    async function expectOnly(query: string, types: MetaType[]) {
      const response = await meta(ABSENCE_SCHOOL.dataSetId, query);
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json();
      for (const [type, member] of Object.entries(SECTIONS)) {
        if (types.includes(type as MetaType)) expect(body[member].length).toBeGreaterThan(0);
        else expect(body[member]).toEqual([]);
      }
    }

    it('TypesNotSpecified_ReturnsAllMeta', async () => {
      await expectOnly('', ['Filters', 'Locations', 'Indicators', 'TimePeriods']);
    });

    it.each(['Filters', 'Locations', 'Indicators', 'TimePeriods'] as const)(
      'OneTypeSpecified_ReturnsOnlySpecifiedMetaType(%s)',
      async (type) => {
        await expectOnly(`?types=${type}`, [type]);
      },
    );

    const MULTIPLE: MetaType[][] = [
      ['Filters', 'Locations'],
      ['Filters', 'Locations', 'Indicators'],
      ['Filters', 'Locations', 'Indicators', 'TimePeriods'],
    ];
    it.each(MULTIPLE.map((types) => [types.join(', '), types] as const))(
      'MultipleTypesSpecified_ReturnsOnlySpecifiedMetaTypes(%s)',
      async (_name, types) => {
        await expectOnly(`?types=${types.join(',')}`, types);
      },
    );

    const DUPLICATES: MetaType[][] = [
      ['Filters', 'Filters'],
      ['Locations', 'Locations'],
      ['Indicators', 'Indicators'],
      ['TimePeriods', 'TimePeriods'],
      ['Filters', 'Filters', 'Locations'],
      ['Locations', 'Locations', 'Filters'],
      ['Indicators', 'Indicators', 'Filters'],
      ['TimePeriods', 'TimePeriods', 'Filters'],
    ];
    it.each(DUPLICATES.map((types) => [types.join(', '), types] as const))(
      'DuplicateTypesSpecified_ReturnsOnlySpecifiedMetaTypes(%s)',
      async (_name, types) => {
        await expectOnly(`?types=${types.join(',')}`, types);
      },
    );

    it.each(
      [...MULTIPLE, ...(['Filters', 'Locations', 'Indicators', 'TimePeriods'] as const).map((t) => [t])].map(
        (types) => [types.join(', '), types] as const,
      ),
    )('ArrayQueryParameterSyntax_ReturnsOnlySpecifiedMetaTypes(%s)', async (_name, types) => {
      await expectOnly(`?${types.map((type, i) => `types[${i}]=${type}`).join('&')}`, [...types]);
    });

    it('EmptyList_AllowedValueError', async () => {
      const errors = validationProblem(await meta(MISSING, '?types='));
      expect(errors).toHaveLength(1);
      expectError(errors, 'types[0]', 'AllowedValue', { value: null, allowed: ALLOWED });
    });

    it.each([
      ['filters', 'filters'],
      ['locations', 'locations'],
      ['indicators', 'indicators'],
      ['timePeriods', 'timePeriods'],
      ['invalid', 'invalid'],
      [null, ''],
      [null, ' '],
    ])('InvalidMetaType_AllowedValueError(%s, "%s")', async (value, type) => {
      const errors = validationProblem(await meta(MISSING, `?types=${encodeURIComponent(type)}`));
      expect(errors).toHaveLength(1);
      expectError(errors, 'types[0]', 'AllowedValue', { value, allowed: ALLOWED });
    });

    it('MultipleInvalidMetaTypes_AllowedValueError', async () => {
      const errors = validationProblem(await meta(MISSING, '?types=invalid1,invalid2'));
      expect(errors).toHaveLength(2);
      expectError(errors, 'types[0]', 'AllowedValue', { value: 'invalid1', allowed: ALLOWED });
      expectError(errors, 'types[1]', 'AllowedValue', { value: 'invalid2', allowed: ALLOWED });
    });

    it('MixedValidAndInvalidMetaTypes_AllowedValueError', async () => {
      const errors = validationProblem(await meta(MISSING, '?types=Filters,invalid'));
      expect(errors).toHaveLength(1);
      expectError(errors, 'types[1]', 'AllowedValue', { value: 'invalid', allowed: ALLOWED });
    });
  });

  describe('PreviewTokenTests', () => {
    it.each(['Draft', 'Published', 'Deprecated', 'Withdrawn'] as const)(
      'PreviewTokenIsActive_Returns200(%s)',
      async (status) => {
        const { id, versionIds } = await dataSet(status, [['1.0', 'Draft']]);
        expect((await meta(id, '?dataSetVersion=1.0', await token(versionIds[0]!))).statusCode).toBe(200);
      },
    );

    it('PreviewTokenIsActiveButForLiveVersion_DraftVersionTargeted_Returns403', async () => {
      const { id, versionIds } = await dataSet('Published', [
        ['1.0', 'Published'],
        ['1.1', 'Draft'],
      ]);
      expect((await meta(id, '?dataSetVersion=1.1', await token(versionIds[0]!))).statusCode).toBe(403);
    });

    it('PreviewTokenIsExpired_Returns403', async () => {
      const { id, versionIds } = await dataSet('Draft', [['1.0', 'Draft']]);
      expect((await meta(id, '?dataSetVersion=1.0', await token(versionIds[0]!, -HOUR))).statusCode).toBe(403);
    });

    it('PreviewTokenIsForWrongDataSetVersion_Returns403', async () => {
      const { id, versionIds } = await dataSet('Draft', [
        ['1.0', 'Draft'],
        ['1.1', 'Draft'],
      ]);
      expect((await meta(id, '?dataSetVersion=1.0', await token(versionIds[1]!))).statusCode).toBe(403);
    });

    it.skip.each(NOT_MODELLED_STATUSES)(
      `PreviewTokenIsForUnavailableDataSetVersion_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );
  });

  describe('AnalyticsTests', () => {
    it.skip(`AnalyticsRequestCaptured: ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
  });
});

describe('DownloadDataSetCsvTests', () => {
  const CSV =
    'first_column,second_column\nfirst-column-value-1,second-column-value-1\nfirst-column-value-2,second-column-value-2\n';
  const GZIP = { 'accept-encoding': 'gzip' };
  const csv = (id: string, query = '', previewToken?: string, headers = GZIP) =>
    get(`/v1/data-sets/${id}/csv${query}`, previewToken, headers);

  async function csvDataSet(status: DataSetStatus, versions: Array<[string, VersionStatus]>) {
    const made = await dataSet(status, versions);
    for (const versionId of made.versionIds) await insertCsvFile(t.database.db, versionId, CSV);
    return made;
  }

  function expectGzippedCsv(response: Awaited<ReturnType<typeof get>>) {
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/csv/);
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(response.rawPayload).toString('utf8')).toBe(CSV);
  }

  describe('DownloadTests', () => {
    it.each(['Published', 'Withdrawn', 'Deprecated'] as const)(
      'LatestVersionAvailable_Returns200(%s)',
      async (status) => {
        const { id } = await csvDataSet('Published', [['1.0', status]]);
        expectGzippedCsv(await csv(id));
      },
    );

    it('LatestVersionAvailable_Returns200 with no Accept-Encoding (documented deviation: plain CSV)', async () => {
      const { id } = await csvDataSet('Published', [['1.0', 'Published']]);
      const response = await csv(id, '', undefined, {} as typeof GZIP);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-encoding']).toBeUndefined();
      expect(response.body).toBe(CSV);
    });

    it.each(['Published', 'Withdrawn', 'Deprecated'] as const)(
      'RequestedVersionAvailable_Returns200(%s)',
      async (status) => {
        const { id } = await csvDataSet('Published', [
          ['1.0', 'Published'],
          ['1.1.0', status],
        ]);
        expectGzippedCsv(await csv(id, '?dataSetVersion=1.1.0'));
      },
    );

    it('LatestVersionUnavailable_Returns403(Draft): the draft asked for by number', async () => {
      const { id } = await csvDataSet('Published', [['1.0', 'Draft']]);
      expect((await csv(id, '?dataSetVersion=1.0')).statusCode).toBe(403);
    });
    it.skip.each(NOT_MODELLED_STATUSES)(
      `LatestVersionUnavailable_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );

    it('RequestedVersionUnavailable_Returns403(Draft)', async () => {
      const { id } = await csvDataSet('Published', [
        ['1.0', 'Published'],
        ['1.1.0', 'Draft'],
      ]);
      expect((await csv(id, '?dataSetVersion=1.1.0')).statusCode).toBe(403);
    });
    it.skip.each(NOT_MODELLED_STATUSES)(
      `RequestedVersionUnavailable_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );

    it('DataSetDoesNotExist_Returns404', async () => {
      expect((await csv(MISSING)).statusCode).toBe(404);
    });

    it('LatestVersionDoesNotExist_Returns404', async () => {
      const { id } = await csvDataSet('Published', []);
      expect((await csv(id)).statusCode).toBe(404);
    });

    it('RequestedVersionDoesNotExist_Returns404', async () => {
      const { id } = await csvDataSet('Published', [['1.0', 'Published']]);
      expect((await csv(id, '?dataSetVersion=1.1.0')).statusCode).toBe(404);
    });

    it('WildCardSpecified_RequestsPublishedVersion_Returns200', async () => {
      const { id } = await csvDataSet('Published', [
        ['1.0', 'Published'],
        ['1.1', 'Published'],
        ['2.0', 'Published'],
        ['2.1', 'Published'],
      ]);
      expectGzippedCsv(await csv(id, '?dataSetVersion=2.*'));
    });

    it.each(['Draft', 'Deprecated', 'Withdrawn'] as const)(
      'WildCardSpecified_RequestsNonPublishedVersion_Returns404(%s)',
      async (status) => {
        const { id } = await csvDataSet('Published', [
          ['1.0', 'Published'],
          ['1.1', 'Published'],
          ['2.0', status],
          ['2.1', status],
        ]);
        expect((await csv(id, '?dataSetVersion=2.*')).statusCode).toBe(404);
      },
    );
    it.skip.each(NOT_MODELLED_STATUSES)(
      `WildCardSpecified_RequestsNonPublishedVersion_Returns404(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );
  });

  describe('PreviewTokenTests', () => {
    it.each(['Draft', 'Published', 'Deprecated', 'Withdrawn'] as const)(
      'PreviewTokenIsActive_Returns200(%s)',
      async (status) => {
        const { id, versionIds } = await csvDataSet(status, [['1.0', 'Draft']]);
        expectGzippedCsv(await csv(id, '?dataSetVersion=1.0', await token(versionIds[0]!)));
      },
    );

    it('PreviewTokenIsActiveButForLiveVersion_DraftVersionTargeted_Returns403', async () => {
      const { id, versionIds } = await csvDataSet('Published', [
        ['1.0', 'Published'],
        ['1.1', 'Draft'],
      ]);
      expect((await csv(id, '?dataSetVersion=1.1', await token(versionIds[0]!))).statusCode).toBe(403);
    });

    it.each(['Draft', 'Published', 'Deprecated', 'Withdrawn'] as const)(
      'PreviewTokenIsExpired_Returns403(%s)',
      async (status) => {
        const { id, versionIds } = await csvDataSet(status, [['1.0', 'Draft']]);
        expect((await csv(id, '?dataSetVersion=1.0', await token(versionIds[0]!, -HOUR))).statusCode).toBe(403);
      },
    );

    it('PreviewTokenIsForWrongDataSet_Returns403', async () => {
      const first = await csvDataSet('Draft', [['1.0', 'Draft']]);
      const second = await csvDataSet('Draft', [['1.0', 'Draft']]);
      expect((await csv(first.id, '?dataSetVersion=1.0', await token(second.versionIds[0]!))).statusCode).toBe(403);
    });

    it.skip.each(NOT_MODELLED_STATUSES)(
      `PreviewTokenIsForUnavailableDataSetVersion_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`,
      () => {},
    );
  });

  describe('AnalyticsTests', () => {
    it.skip.each([null, '1.0.*'])(`AnalyticsRequestCaptured(%s): ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
  });
});
