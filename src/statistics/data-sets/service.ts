import type { Executor } from '../../db/database.js';
import { pagingOf, type PagingViewModel } from '../paging.js';
import type { DataSetView } from '../schemas.js';
import {
  findLatestLiveVersion,
  findLatestLiveVersions,
  PUBLIC_VERSION_STATUSES,
  resolveDataSet,
  type DataSetRow,
  type DataSetVersionRow,
} from '../versions/access.js';
import { latestVersionView, type VersionSummaryCache } from '../versions/summaries.js';
import { findPublicationDataSetsPage } from './repository.js';

/** Data sets and their versions. */

function dataSetView(
  dataSet: DataSetRow,
  live: DataSetVersionRow | undefined,
  summary: Parameters<typeof latestVersionView>[1] | undefined,
): DataSetView {
  return {
    id: dataSet.id,
    title: dataSet.title,
    summary: dataSet.summary,
    status: dataSet.status,
    ...(dataSet.superseding_data_set_id ? { supersedingDataSetId: dataSet.superseding_data_set_id } : {}),
    ...(live && summary ? { latestVersion: latestVersionView(live, summary) } : {}),
  };
}

export interface PageQuery {
  page: number;
  pageSize: number;
}

/**
 * A publication's data sets with status Published or Deprecated, newest live version first, then by title and id.
 * An unknown publication has no data sets (200, empty list), as in the reference.
 */
export async function listPublicationDataSets(
  db: Executor,
  summaryCache: VersionSummaryCache,
  publicationId: string,
  { page, pageSize }: PageQuery,
): Promise<{ paging: PagingViewModel; results: DataSetView[] }> {
  const { rows, total } = await findPublicationDataSetsPage(
    db,
    publicationId,
    { statuses: ['Published', 'Deprecated'], versionStatuses: PUBLIC_VERSION_STATUSES },
    { limit: pageSize, offset: (page - 1) * pageSize },
  );
  const live = await findLatestLiveVersions(
    db,
    rows.map((r) => r.id),
  );
  const summaries = await summaryCache.load(
    db,
    [...live.values()].map((v) => v.id),
  );
  const results = rows.map((dataSet) => {
    const version = live.get(dataSet.id);
    return dataSetView(dataSet, version, version ? summaries.get(version.id) : undefined);
  });
  return { paging: pagingOf(page, pageSize, total), results };
}

/** `GET /data-sets/{id}`: the summary with `latestVersion` (view-data-set policy). */
export async function getDataSet(
  db: Executor,
  summaryCache: VersionSummaryCache,
  dataSetId: string,
  previewToken?: string,
): Promise<DataSetView> {
  const { dataSet } = await resolveDataSet(db, { dataSetId, previewToken });
  const live = await findLatestLiveVersion(db, dataSet.id);
  const summary = live ? (await summaryCache.load(db, [live.id])).get(live.id) : undefined;
  return dataSetView(dataSet, live, summary);
}
