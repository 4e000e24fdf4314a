import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DataSetsTable, DataSetVersionsTable, VersionStatus } from '../tables.js';

/** Data sets, their versions, preview tokens and stored changes. Which statuses count is the caller's rule. */

export type DataSetRow = Selectable<DataSetsTable>;
export type DataSetVersionRow = Selectable<DataSetVersionsTable>;

/** `forUpdate`: locked for the rest of the caller's transaction (the publisher's writes). */
export interface LockOption {
  forUpdate?: boolean;
}

export async function findDataSet(
  db: Executor,
  dataSetId: string,
  { forUpdate = false }: LockOption = {},
): Promise<DataSetRow | undefined> {
  const query = db.selectFrom('data_sets').selectAll().where('id', '=', dataSetId);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** The highest-numbered version of a data set with one of `statuses`. */
export async function findHighestVersion(
  db: Executor,
  dataSetId: string,
  statuses: readonly VersionStatus[],
): Promise<DataSetVersionRow | undefined> {
  return db
    .selectFrom('data_set_versions')
    .selectAll()
    .where('data_set_id', '=', dataSetId)
    .where('status', 'in', statuses)
    .orderBy('major', 'desc')
    .orderBy('minor', 'desc')
    .orderBy('patch', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The highest-numbered version with one of `statuses` of each of several data sets, keyed by data set id. */
export async function findHighestVersions(
  db: Executor,
  dataSetIds: readonly string[],
  statuses: readonly VersionStatus[],
): Promise<Map<string, DataSetVersionRow>> {
  if (dataSetIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('data_set_versions')
    .selectAll()
    .distinctOn('data_set_id')
    .where('data_set_id', 'in', dataSetIds)
    .where('status', 'in', statuses)
    .orderBy('data_set_id')
    .orderBy('major', 'desc')
    .orderBy('minor', 'desc')
    .orderBy('patch', 'desc')
    .execute();
  return new Map(rows.map((row) => [row.data_set_id, row]));
}

/** Whether preview token `token` exists for the version and is active now (created_at <= now < expires_at). */
export async function activePreviewTokenExists(db: Executor, token: string, versionId: number): Promise<boolean> {
  const row = await db
    .selectFrom('preview_tokens')
    .select('id')
    .where('id', '=', token)
    .where('version_id', '=', versionId)
    .where('created_at', '<=', new Date())
    .where('expires_at', '>', new Date())
    .executeTakeFirst();
  return row !== undefined;
}

export async function findVersionByNumber(
  db: Executor,
  dataSetId: string,
  number: { major: number; minor: number; patch: number },
  { forUpdate = false }: LockOption = {},
): Promise<DataSetVersionRow | undefined> {
  const query = db
    .selectFrom('data_set_versions')
    .selectAll()
    .where('data_set_id', '=', dataSetId)
    .where('major', '=', number.major)
    .where('minor', '=', number.minor)
    .where('patch', '=', number.patch);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** The highest Published version whose leading parts are the given ones. */
export async function findHighestPublishedMatching(
  db: Executor,
  dataSetId: string,
  fixed: { major?: number; minor?: number },
): Promise<DataSetVersionRow | undefined> {
  let query = db
    .selectFrom('data_set_versions')
    .selectAll()
    .where('data_set_id', '=', dataSetId)
    .where('status', '=', 'Published');
  if (fixed.major !== undefined) query = query.where('major', '=', fixed.major);
  if (fixed.minor !== undefined) query = query.where('minor', '=', fixed.minor);
  return query.orderBy('major', 'desc').orderBy('minor', 'desc').orderBy('patch', 'desc').limit(1).executeTakeFirst();
}

/** The earlier patches of a version's minor version (`x.y.0` … `x.y.(p-1)`), oldest first. */
export async function findEarlierPatches(db: Executor, version: DataSetVersionRow): Promise<DataSetVersionRow[]> {
  return db
    .selectFrom('data_set_versions')
    .selectAll()
    .where('data_set_id', '=', version.data_set_id)
    .where('major', '=', version.major)
    .where('minor', '=', version.minor)
    .where('patch', '<', version.patch)
    .orderBy('patch')
    .execute();
}

/** A page of a data set's versions with one of `statuses` (or the id `alsoId`), newest first, and their number. */
export async function findVersionsPage(
  db: Executor,
  dataSetId: string,
  visibility: { statuses: readonly VersionStatus[]; alsoId?: number },
  { limit, offset }: { limit: number; offset: number },
): Promise<{ rows: DataSetVersionRow[]; total: number }> {
  const { statuses, alsoId } = visibility;
  const visible = db
    .selectFrom('data_set_versions')
    .where('data_set_id', '=', dataSetId)
    .where((eb) =>
      alsoId !== undefined
        ? eb.or([eb('status', 'in', statuses), eb('id', '=', alsoId)])
        : eb('status', 'in', statuses),
    );
  const [rows, total] = await Promise.all([
    visible
      .selectAll()
      .orderBy('major', 'desc')
      .orderBy('minor', 'desc')
      .orderBy('patch', 'desc')
      .limit(limit)
      .offset(offset)
      .execute(),
    visible.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}

/** The stored changes of versions, in stored order. */
export async function findVersionChanges(db: Executor, versionIds: readonly number[]) {
  if (versionIds.length === 0) return [];
  return db
    .selectFrom('version_changes')
    .select(['version_id', 'kind', 'list', 'change'])
    .where('version_id', 'in', [...versionIds])
    .orderBy('id')
    .execute();
}

/** What the version summaries list: filter and indicator labels, level codes, and time periods in id order. */
export async function findSummaryRows(db: Executor, versionIds: readonly number[]) {
  const ids = [...versionIds];
  const [filters, indicators, levels, periods] = await Promise.all([
    db.selectFrom('version_filters').select(['version_id', 'label']).where('version_id', 'in', ids).execute(),
    db.selectFrom('version_indicators').select(['version_id', 'label']).where('version_id', 'in', ids).execute(),
    db.selectFrom('version_geographic_levels').select(['version_id', 'code']).where('version_id', 'in', ids).execute(),
    // Time period ids are assigned chronologically (period, then identifier order), so first/last by id.
    db
      .selectFrom('version_time_periods')
      .select(['version_id', 'period', 'code', 'id'])
      .where('version_id', 'in', ids)
      .orderBy('version_id')
      .orderBy('id')
      .execute(),
  ]);
  return { filters, indicators, levels, periods };
}
