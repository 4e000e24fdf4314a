import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { pagingOf, type PagingViewModel } from '../http.js';
import type { DataSetVersionView, DataSetView } from '../schemas.js';
import {
  findLatestLiveVersion,
  findLatestLiveVersions,
  PUBLIC_VERSION_STATUSES,
  resolveDataSet,
  resolveDataSetVersion,
  type DataSetRow,
  type DataSetVersionRow,
} from '../versions/access.js';
import { latestVersionView, loadVersionMetaSummaries, versionView } from '../versions/summaries.js';

/** Data sets and their versions. */

function dataSetView(dataSet: DataSetRow, live: DataSetVersionRow | undefined, summary: Parameters<typeof latestVersionView>[1] | undefined): DataSetView {
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
  publicationId: string,
  { page, pageSize }: PageQuery,
): Promise<{ paging: PagingViewModel; results: DataSetView[] }> {
  const visible = db
    .selectFrom('data_sets as d')
    .where('d.publication_id', '=', publicationId)
    .where('d.status', 'in', ['Published', 'Deprecated']);
  const [rows, total] = await Promise.all([
    visible
      .selectAll('d')
      .select((eb) =>
        eb
          .selectFrom('data_set_versions as v')
          .whereRef('v.data_set_id', '=', 'd.id')
          .where('v.status', 'in', PUBLIC_VERSION_STATUSES)
          .orderBy('v.major', 'desc')
          .orderBy('v.minor', 'desc')
          .orderBy('v.patch', 'desc')
          .limit(1)
          .select('v.published_at')
          .as('live_published_at'),
      )
      .orderBy(sql`live_published_at desc nulls last`)
      .orderBy('d.title')
      .orderBy('d.id')
      .limit(pageSize)
      .offset((page - 1) * pageSize)
      .execute(),
    visible.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  const live = await findLatestLiveVersions(db, rows.map((r) => r.id));
  const summaries = await loadVersionMetaSummaries(db, [...live.values()].map((v) => v.id));
  const results = rows.map((row) => {
    const { live_published_at: _ignored, ...dataSet } = row;
    const version = live.get(row.id);
    return dataSetView(dataSet, version, version ? summaries.get(version.id) : undefined);
  });
  return { paging: pagingOf(page, pageSize, Number(total.count)), results };
}

/** `GET /data-sets/{id}`: the summary with `latestVersion` (view-data-set policy). */
export async function getDataSet(db: Executor, dataSetId: string, previewToken?: string): Promise<DataSetView> {
  const { dataSet } = await resolveDataSet(db, { dataSetId, previewToken });
  const live = await findLatestLiveVersion(db, dataSet.id);
  const summaries = live ? await loadVersionMetaSummaries(db, [live.id]) : new Map();
  return dataSetView(dataSet, live, live ? summaries.get(live.id) : undefined);
}

/**
 * `GET /data-sets/{id}/versions`: the public versions (Published, Deprecated, Withdrawn), plus the latest draft when
 * the preview token is valid for it, newest first by major, minor and patch.
 */
export async function listVersions(
  db: Executor,
  dataSetId: string,
  { page, pageSize }: PageQuery,
  previewToken?: string,
): Promise<{ paging: PagingViewModel; results: DataSetVersionView[] }> {
  const { dataSet, previewDraft } = await resolveDataSet(db, { dataSetId, previewToken });
  const visible = db
    .selectFrom('data_set_versions')
    .where('data_set_id', '=', dataSet.id)
    .where((eb) =>
      previewDraft
        ? eb.or([eb('status', 'in', PUBLIC_VERSION_STATUSES), eb('id', '=', previewDraft.id)])
        : eb('status', 'in', PUBLIC_VERSION_STATUSES),
    );
  const [rows, total] = await Promise.all([
    visible
      .selectAll()
      .orderBy('major', 'desc')
      .orderBy('minor', 'desc')
      .orderBy('patch', 'desc')
      .limit(pageSize)
      .offset((page - 1) * pageSize)
      .execute(),
    visible.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  const summaries = await loadVersionMetaSummaries(db, rows.map((r) => r.id));
  return {
    paging: pagingOf(page, pageSize, Number(total.count)),
    results: rows.map((row) => versionView(row, summaries.get(row.id)!)),
  };
}

/** `GET /data-sets/{id}/versions/{v}`: exact or wildcard version (view-version policy). */
export async function getVersion(db: Executor, dataSetId: string, dataSetVersion: string, previewToken?: string): Promise<DataSetVersionView> {
  const { version } = await resolveDataSetVersion(db, { dataSetId, dataSetVersion, previewToken, source: 'path', policy: 'view' });
  const summaries = await loadVersionMetaSummaries(db, [version.id]);
  return versionView(version, summaries.get(version.id)!);
}
