import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSetStatus, VersionStatus } from '../../../src/statistics/tables.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ABSENCE_SCHOOL } from '../../helpers/statistics.js';
import { insertPreviewToken, insertPublication } from '../fixtures.js';
import {
  ANALYTICS_NOT_EXPRESSIBLE,
  hasGreaterThanOrEqualError,
  hasInclusiveBetweenError,
  NOT_MODELLED_REASON,
  NOT_MODELLED_STATUSES,
  validationProblem,
  insertCatalogueDataSet,
  SMALL_META_SUMMARY,
  HOUR, MISSING,
} from './replay.js';

/**
 * Replays the reference's `DataSetVersionsControllerTests.cs` (GET /v1/data-sets/{id}/versions[/{version}[/changes]])
 * over HTTP, each case on catalogue rows of its own.
 */

let t: TestApp;
let publicationId: string;

beforeAll(async () => {
  t = await buildTestApp();
  publicationId = await insertPublication(t.database.db, { title: 'Replay of DataSetVersionsControllerTests' });
});
afterAll(async () => {
  await t?.close();
});

const get = (url: string, previewToken?: string) =>
  t.app.inject({ method: 'GET', url, headers: previewToken ? { 'preview-token': previewToken } : {} });

const dataSet = (status: DataSetStatus, versions: Array<[string, VersionStatus]> = []) => insertCatalogueDataSet(t.database.db, publicationId, status, versions);
const token = (versionId: number, expiresInMs = HOUR) => insertPreviewToken(t.database.db, versionId, new Date(Date.now() + expiresInMs));
const VIEWABLE = ['Published', 'Withdrawn', 'Deprecated'] as const;

describe('ListDataSetVersionsTests', () => {
  const list = (id: string, page = 1, pageSize = 10, previewToken?: string) => get(`/v1/data-sets/${id}/versions?page=${page}&pageSize=${pageSize}`, previewToken);

  describe('PublicDataSetVersionsTests', () => {
    it.each([
      [1, 2, 1],
      [1, 2, 2],
      [1, 2, 9],
      [1, 3, 2],
      [2, 2, 9],
    ])('MultipleAvailableVersionsForRequestedDataSet_Returns200_PaginatedCorrectly(%i, %i, %i)', async (page, pageSize, count) => {
      const versions = Array.from({ length: count }, (_, i) => [`${i + 1}.0`, 'Published'] as [string, VersionStatus]);
      const { id } = await dataSet('Published', versions);
      const response = await list(id, page, pageSize);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.paging).toMatchObject({ page, pageSize, totalResults: count });
      const expected = versions.map(([v]) => v).reverse().slice((page - 1) * pageSize, page * pageSize);
      expect(body.results.map((r: { version: string }) => r.version)).toEqual(expected);
    });

    it('MultipleAvailableVersionsForRequestedDataSet_Returns200_OrderedCorrectly', async () => {
      const { id } = await dataSet('Published', [['1.0', 'Published'], ['2.1', 'Published'], ['1.1', 'Published'], ['3.0', 'Published'], ['2.0', 'Published'], ['3.1', 'Published']]);
      expect((await list(id, 1, 3)).json().results.map((r: { version: string }) => r.version)).toEqual(['3.1', '3.0', '2.1']);
      expect((await list(id, 2, 3)).json().results.map((r: { version: string }) => r.version)).toEqual(['2.0', '1.1', '1.0']);
    });

    it.each(VIEWABLE)('DataSetVersionIsAvailable_Returns200_CorrectViewModel(%s)', async (status) => {
      const { id } = await dataSet('Published', [['1.0', status]]);
      const body = (await list(id, 1, 1)).json();
      expect(body.paging).toMatchObject({ page: 1, pageSize: 1, totalResults: 1 });
      expect(body.results).toHaveLength(1);
      expect(body.results[0]).toEqual({
        version: '1.0',
        type: 'Major',
        status,
        published: '2024-01-01T09:30:00.000Z',
        ...(status === 'Withdrawn' ? { withdrawn: '2024-06-01T09:30:00.000Z' } : {}),
        notes: 'Notes of 1.0',
        totalResults: 10,
        file: { id: expect.any(String) },
        release: { title: 'Release of 1.0', slug: 'release-1-0' },
        ...SMALL_META_SUMMARY,
      });
    });

    it('AvailableVersionForOtherDataSet_Returns200_OnlyVersionForRequestedDataSet', async () => {
      const first = await dataSet('Published', [['1.0', 'Published']]);
      await dataSet('Published', [['2.0', 'Published']]);
      const body = (await list(first.id, 1, 1)).json();
      expect(body.paging.totalResults).toBe(1);
      expect(body.results.map((r: { version: string }) => r.version)).toEqual(['1.0']);
    });

    it('NoAvailableDataSetVersions_Returns200_EmptyList(Draft)', async () => {
      const { id } = await dataSet('Published', [['1.0', 'Draft']]);
      expect((await list(id)).json().paging.totalResults).toBe(0);
    });
    it.skip.each(NOT_MODELLED_STATUSES)(`NoAvailableDataSetVersions_Returns200_EmptyList(%s): not expressible, ${NOT_MODELLED_REASON}`, () => {});

    it('DataSetVersionUnavailable_Returns200_EmptyList(Draft)', async () => {
      const { id } = await dataSet('Published', [['1.0', 'Draft']]);
      const body = (await list(id, 1, 1)).json();
      expect(body.paging).toMatchObject({ page: 1, pageSize: 1, totalResults: 0 });
      expect(body.results).toEqual([]);
    });
    it.skip.each(NOT_MODELLED_STATUSES)(`DataSetVersionUnavailable_Returns200_EmptyList(%s): not expressible, ${NOT_MODELLED_REASON}`, () => {});

    it('NoDataSetVersions_Returns200_EmptyList', async () => {
      const { id } = await dataSet('Published');
      const body = (await list(id, 1, 1)).json();
      expect(body.paging).toMatchObject({ page: 1, pageSize: 1, totalResults: 0 });
      expect(body.results).toEqual([]);
    });

    it('PageTooBig_Returns200_EmptyList', async () => {
      const { id } = await dataSet('Published', [['1.0', 'Published'], ['2.0', 'Published']]);
      const body = (await list(id, 2, 2)).json();
      expect(body.paging).toMatchObject({ page: 2, pageSize: 2, totalResults: 2 });
      expect(body.results).toEqual([]);
    });

    it.each([0, -1])('PageTooSmall_Returns400(%i)', async (page) => {
      const errors = validationProblem(await list(MISSING, page, 1));
      expect(errors).toHaveLength(1);
      hasGreaterThanOrEqualError(errors, 'page', 1);
    });

    it.each([0, -1, 21])('PageSizeOutOfBounds_Returns400(%i)', async (pageSize) => {
      const errors = validationProblem(await list(MISSING, 1, pageSize));
      expect(errors).toHaveLength(1);
      hasInclusiveBetweenError(errors, 'pageSize', 1, 20);
    });

    // Named "503" in the reference, which asserts a 403.
    it.each(['Draft', 'Withdrawn'] as const)('UnavailableDataSet_Returns503(%s): 403', async (status) => {
      const { id } = await dataSet(status);
      expect((await get(`/v1/data-sets/${id}/versions`)).statusCode).toBe(403);
    });

    it('InvalidDataSetId_Returns404', async () => {
      expect((await get('/v1/data-sets/not_a_valid_guid/versions?page=1&pageSize=1')).statusCode).toBe(404);
    });
  });

  describe('PreviewTokenTests', () => {
    it.each([true, false])('PreviewTokenForDraftVersion_IncludesDraftVersionIfValid(%s)', async (tokenValid) => {
      const { id, versionIds } = await dataSet('Published', [['1.0', 'Published'], ['1.1', 'Draft']]);
      const response = await list(id, 1, 10, await token(versionIds[1]!, tokenValid ? HOUR : -HOUR));
      expect(response.statusCode).toBe(200);
      expect(response.json().results).toHaveLength(tokenValid ? 2 : 1);
    });
  });

  describe('AnalyticsTests', () => {
    it.skip(`AnalyticsRequestCaptured: ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
  });
});

describe('GetDataSetVersionTests', () => {
  const version = (id: string, v: string, previewToken?: string) => get(`/v1/data-sets/${id}/versions/${v}`, previewToken);

  describe('ControllerTests', () => {
    it.each(VIEWABLE)('VersionIsAvailable_Returns200(%s)', async (status) => {
      const { id } = await dataSet('Published', [['1.0', status]]);
      const response = await version(id, '1.0');
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body).toMatchObject({
        version: '1.0',
        type: 'Major',
        status,
        published: '2024-01-01T09:30:00.000Z',
        notes: 'Notes of 1.0',
        totalResults: 10,
        release: { title: 'Release of 1.0', slug: 'release-1-0' },
        timePeriods: { start: '2020/21', end: '2021/22' },
      });
      if (status === 'Withdrawn') expect(body.withdrawn).toBe('2024-06-01T09:30:00.000Z');
      // The reference omits a null Withdrawn.
      else expect('withdrawn' in body).toBe(false);
    });

    it('VersionNotAvailable_Returns403(Draft)', async () => {
      const { id } = await dataSet('Published', [['1.0', 'Draft']]);
      expect((await version(id, '1.0')).statusCode).toBe(403);
    });
    it.skip.each(NOT_MODELLED_STATUSES)(`VersionNotAvailable_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`, () => {});

    it('VersionExistsForOtherDataSet_Returns404', async () => {
      await dataSet('Published', [['1.0', 'Published']]);
      const other = await dataSet('Published');
      expect((await version(other.id, '1.0')).statusCode).toBe(404);
    });

    it('VersionDoesNotExist_Returns404', async () => {
      const { id } = await dataSet('Published');
      expect((await version(id, '1.0')).statusCode).toBe(404);
    });

    it('DataSetDoesNotExist_Returns404', async () => {
      expect((await version(MISSING, '1.0')).statusCode).toBe(404);
    });

    it.each([...VIEWABLE, 'Draft'] as const)('PreviewTokenIsActive_Returns200(%s)', async (status) => {
      const { id, versionIds } = await dataSet('Published', [['1.0', status]]);
      expect((await version(id, '1.0', await token(versionIds[0]!))).statusCode).toBe(200);
    });

    it('PreviewTokenIsExpired_Returns403', async () => {
      const { id, versionIds } = await dataSet('Published', [['1.0', 'Draft']]);
      expect((await version(id, '1.0', await token(versionIds[0]!, -HOUR))).statusCode).toBe(403);
    });

    it('PreviewTokenIsForWrongDataSetVersion_Returns403', async () => {
      const { id, versionIds } = await dataSet('Published', [['1.0', 'Draft'], ['1.1', 'Draft']]);
      expect((await version(id, '1.0', await token(versionIds[1]!))).statusCode).toBe(403);
    });

    it.skip.each(NOT_MODELLED_STATUSES)(`PreviewTokenIsForUnavailableDataSetVersion_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`, () => {});

    it('WildCardSpecified_RequestedPublished_Returns200', async () => {
      const { id } = await dataSet('Published', [['1.0', 'Published'], ['2.0', 'Published'], ['2.1', 'Published']]);
      const response = await version(id, '2.*');
      expect(response.statusCode).toBe(200);
      expect(response.json().version).toBe('2.1');
    });

    it.each(['Draft', 'Deprecated', 'Withdrawn'] as const)('WildCardSpecified_RequestedNonPublished_Returns404(%s)', async (status) => {
      const { id } = await dataSet('Published', [['1.0', 'Published'], ['2.0', status], ['2.1', status]]);
      expect((await version(id, '2.*')).statusCode).toBe(404);
    });
    it.skip.each(NOT_MODELLED_STATUSES)(`WildCardSpecified_RequestedNonPublished_Returns404(%s): not expressible, ${NOT_MODELLED_REASON}`, () => {});
  });

  describe('AnalyticsTests', () => {
    it.skip(`AnalyticsRequestCaptured: ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
  });
});

describe('GetDataSetVersionChangesTests', () => {
  const changes = (id: string, v: string, previewToken?: string, query = '') => get(`/v1/data-sets/${id}/versions/${v}/changes${query}`, previewToken);

  it('VersionAvailable_Returns200_AllChanges (the fixture 1.0: its first version, no changes)', async () => {
    const response = await changes(ABSENCE_SCHOOL.dataSetId, '1.0');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ majorChanges: {}, minorChanges: {} });
  });

  const contentReason =
    'not replayed here: the change-set content cases build change rows through the reference processor\'s mapping; the same views are checked in test/statistics/read/meta-changes-csv.test.ts and test/statistics/import/changes.test.ts';
  for (const name of [
    'GetChanges_PatchHistory_Returns200_AllChanges(True)',
    'GetChanges_PatchHistory_Returns200_AllChanges(False)',
    'OnlyFilterChanges_Returns200',
    'OnlyFilterOptionChanges_Returns200',
    'OnlyGeographicLevelChanges_Returns200',
    'OnlyLocationGroupChanges_Returns200',
    'OnlyLocationOptionChanges_Returns200',
    'OnlyTimePeriodChanges_Returns200',
  ]) {
    it.skip(`${name}: ${contentReason}`, () => {});
  }
  it.skip('GetChanges_PatchHistory_Returns403_UnViewableDataSetVersion: not expressible, the service has no includePatchHistory parameter', () => {});

  it('VersionNotAvailable_Returns403(Draft)', async () => {
    const { id } = await dataSet('Published', [['1.0', 'Draft']]);
    expect((await changes(id, '1.0')).statusCode).toBe(403);
  });
  it.skip.each(NOT_MODELLED_STATUSES)(`VersionNotAvailable_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`, () => {});

  it('VersionExistsForOtherDataSet_Returns404', async () => {
    await dataSet('Published', [['1.0', 'Published']]);
    const other = await dataSet('Published');
    expect((await changes(other.id, '1.0')).statusCode).toBe(404);
  });

  it('VersionDoesNotExist_Returns404', async () => {
    const { id } = await dataSet('Published');
    expect((await changes(id, '1.0')).statusCode).toBe(404);
  });

  it('DataSetDoesNotExist_Returns404', async () => {
    expect((await changes(MISSING, '1.0')).statusCode).toBe(404);
  });

  it.each([...VIEWABLE, 'Draft'] as const)('PreviewTokenIsActive_Returns200(%s)', async (status) => {
    const { id, versionIds } = await dataSet('Published', [['1.0', status]]);
    expect((await changes(id, '1.0', await token(versionIds[0]!))).statusCode).toBe(200);
  });

  it('PreviewTokenIsExpired_Returns403', async () => {
    const { id, versionIds } = await dataSet('Published', [['1.0', 'Draft']]);
    expect((await changes(id, '1.0', await token(versionIds[0]!, -HOUR))).statusCode).toBe(403);
  });

  it('PreviewTokenIsForWrongDataSetVersion_Returns403', async () => {
    const { id, versionIds } = await dataSet('Published', [['1.0', 'Draft'], ['1.1', 'Draft']]);
    expect((await changes(id, '1.0', await token(versionIds[1]!))).statusCode).toBe(403);
  });

  it.skip.each(NOT_MODELLED_STATUSES)(`PreviewTokenIsForUnavailableDataSetVersion_Returns403(%s): not expressible, ${NOT_MODELLED_REASON}`, () => {});

  const ADMIN = 'not expressible: the service has no admin users (the reference lets an admin with the AdminAccess read role see any version)';
  it.skip.each(['Draft', ...NOT_MODELLED_STATUSES])(`VersionNotAvailable_UserMissingAdminAccessReadRole_Returns403(%s): ${ADMIN}`, () => {});
  it.skip.each(['Draft', ...NOT_MODELLED_STATUSES])(`VersionNotAvailable_UserHasAdminAccessReadRole_Returns200(%s): ${ADMIN}`, () => {});

  it('WildCardSpecified_RequestedPublished_Returns200', async () => {
    const { id } = await dataSet('Published', [['1.0', 'Published'], ['2.0', 'Published'], ['2.1', 'Published']]);
    expect((await changes(id, '2.*')).statusCode).toBe(200);
  });

  it.each(['Draft', 'Deprecated', 'Withdrawn'] as const)('WildCardSpecified_RequestedNonPublished_Returns404(%s)', async (status) => {
    const { id } = await dataSet('Published', [['1.0', 'Published'], ['2.0', status], ['2.1', status]]);
    expect((await changes(id, '2.*')).statusCode).toBe(404);
  });
  it.skip.each(NOT_MODELLED_STATUSES)(`WildCardSpecified_RequestedNonPublished_Returns404(%s): not expressible, ${NOT_MODELLED_REASON}`, () => {});

  it.skip(`AnalyticsRequestCaptured: ${ANALYTICS_NOT_EXPRESSIBLE}`, () => {});
});
