import type { Db, Executor } from '../../db/database.js';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { formatVersionNumber, parseVersionNumber } from '../standard/version-numbers.js';
import { latestLiveVersionBelow, loadVersionMetaSnapshot, recordVersionChanges } from '../import/version-snapshot.js';
import type { DataSetStatus, VersionStatus } from '../tables.js';
import { findVersionNumbers } from '../import/repository.js';
import { findDataSet, findVersionByNumber } from '../versions/repository.js';
import {
  dataSetExists,
  deleteVersion,
  findAllVersions,
  findDataSets,
  insertDataSet,
  insertPreviewToken,
  insertPublication,
  newUuid,
  publicationExists,
  publishDraftDataSet,
  updateDataSet,
  updateVersion,
} from './repository.js';
import { isUuid } from '../../validators.js';
import { appendDataSetEvent, appendDataSetVersionEvent } from '../events/service.js';

/**
 * The publisher's lifecycle operations: publish a draft, withdraw or deprecate a version,
 * deprecate or withdraw a data set, set its superseding data set, and create preview tokens for drafts.
 * Each runs in one transaction and checks the current status first, so a wrong step changes nothing.
 */

async function lockDataSet(db: Executor, dataSetId: string) {
  if (!isUuid(dataSetId)) {
    throw new ValidationError([{ path: 'data-set', message: `"${dataSetId}" is not a data set id (a UUID).` }]);
  }
  const dataSet = await findDataSet(db, dataSetId, { forUpdate: true });
  if (!dataSet) throw new NotFoundError(`Data set ${dataSetId} does not exist.`);
  return dataSet;
}

async function lockVersion(db: Executor, dataSetId: string, version: string) {
  const number = parseVersionNumber(version);
  if (!number)
    throw new ValidationError([
      { path: 'version', message: `"${version}" is not a version number such as 1.0 or 2.1.3.` },
    ]);
  await lockDataSet(db, dataSetId);
  const row = await findVersionByNumber(db, dataSetId, number, { forUpdate: true });
  if (!row) throw new NotFoundError(`Data set ${dataSetId} has no version ${formatVersionNumber(number)}.`);
  return row;
}

function requireStatus(actual: string, allowed: readonly string[], what: string, action: string): void {
  if (!allowed.includes(actual)) {
    throw new ConflictError(`${what} is ${actual}; only ${allowed.join(' or ')} can be ${action}.`);
  }
}

export interface VersionChange {
  dataSetId: string;
  version: string;
  status: VersionStatus;
}

/**
 * Draft → Published now; the data set becomes Published if it was a Draft. The version's changes are computed again
 * against the latest live version below it now: another version may have been published since the draft's import.
 */
export async function publishVersion(
  db: Db,
  dataSetId: string,
  version: string,
  now = new Date(),
): Promise<VersionChange> {
  return db.transaction().execute(async (trx) => {
    const row = await lockVersion(trx, dataSetId, version);
    requireStatus(row.status, ['Draft'], `Version ${version}`, 'published');
    const versions = await findVersionNumbers(trx, dataSetId);
    const previous = latestLiveVersionBelow(versions, row);
    await recordVersionChanges(trx, row.id, previous ? await loadVersionMetaSnapshot(trx, previous.id) : undefined);
    await updateVersion(trx, row.id, { status: 'Published', published_at: now });
    // Its preview tokens stay (as a record) but grant nothing more: tokens only open Draft versions.
    if (await publishDraftDataSet(trx, dataSetId)) await appendDataSetEvent(trx, 'data_set.created', dataSetId);
    await appendDataSetVersionEvent(trx, 'data_set_version.published', row.id);
    return { dataSetId, version: formatVersionNumber(row), status: 'Published' as const };
  });
}

/** Published or Deprecated → Withdrawn (stays viewable, no longer queryable). */
export async function withdrawVersion(
  db: Db,
  dataSetId: string,
  version: string,
  now = new Date(),
): Promise<VersionChange> {
  return db.transaction().execute(async (trx) => {
    const row = await lockVersion(trx, dataSetId, version);
    requireStatus(row.status, ['Published', 'Deprecated'], `Version ${version}`, 'withdrawn');
    await updateVersion(trx, row.id, { status: 'Withdrawn', withdrawn_at: now });
    await appendDataSetVersionEvent(trx, 'data_set_version.withdrawn', row.id);
    return { dataSetId, version: formatVersionNumber(row), status: 'Withdrawn' as const };
  });
}

/** Published → Deprecated (still served, no longer updated). */
export async function deprecateVersion(db: Db, dataSetId: string, version: string): Promise<VersionChange> {
  return db.transaction().execute(async (trx) => {
    const row = await lockVersion(trx, dataSetId, version);
    requireStatus(row.status, ['Published'], `Version ${version}`, 'deprecated');
    await updateVersion(trx, row.id, { status: 'Deprecated' });
    await appendDataSetVersionEvent(trx, 'data_set_version.deprecated', row.id);
    return { dataSetId, version: formatVersionNumber(row), status: 'Deprecated' as const };
  });
}

export async function setDataSetStatus(
  db: Db,
  dataSetId: string,
  status: 'Deprecated' | 'Withdrawn',
): Promise<{ dataSetId: string; status: DataSetStatus }> {
  return db.transaction().execute(async (trx) => {
    const dataSet = await lockDataSet(trx, dataSetId);
    const allowed = status === 'Deprecated' ? ['Published'] : ['Published', 'Deprecated'];
    requireStatus(
      dataSet.status,
      allowed,
      `Data set ${dataSetId}`,
      status === 'Deprecated' ? 'deprecated' : 'withdrawn',
    );
    await updateDataSet(trx, dataSetId, { status });
    await appendDataSetEvent(trx, status === 'Deprecated' ? 'data_set.deprecated' : 'data_set.withdrawn', dataSetId);
    return { dataSetId, status };
  });
}

/** Names the data set that replaces this one (or clears it with `null`). */
export async function setSupersedingDataSet(
  db: Db,
  dataSetId: string,
  supersedingId: string | null,
): Promise<{ dataSetId: string; supersedingDataSetId: string | null }> {
  return db.transaction().execute(async (trx) => {
    await lockDataSet(trx, dataSetId);
    if (supersedingId !== null) {
      if (supersedingId === dataSetId)
        throw new ValidationError([{ path: 'by', message: 'A data set cannot supersede itself.' }]);
      const successor = await lockDataSet(trx, supersedingId);
      if (successor.status === 'Withdrawn' || successor.status === 'Draft') {
        throw new ConflictError(
          `Data set ${supersedingId} is ${successor.status}; a superseding data set must be Published or Deprecated.`,
        );
      }
    }
    await updateDataSet(trx, dataSetId, { superseding_data_set_id: supersedingId });
    return { dataSetId, supersedingDataSetId: supersedingId };
  });
}

export const PREVIEW_TOKEN_MAX_HOURS = 24 * 7;

/** A preview token for a Draft version: send it as the `preview-token` header until it expires. */
export async function createPreviewToken(
  db: Db,
  dataSetId: string,
  version: string,
  options: { label?: string; expiresInHours?: number; now?: Date } = {},
): Promise<{ id: string; dataSetId: string; version: string; label: string; created: Date; expires: Date }> {
  const hours = options.expiresInHours ?? 24;
  if (!(hours > 0 && hours <= PREVIEW_TOKEN_MAX_HOURS)) {
    throw new ValidationError([
      { path: 'expires-in-hours', message: `Must be more than 0 and at most ${PREVIEW_TOKEN_MAX_HOURS} (7 days).` },
    ]);
  }
  return db.transaction().execute(async (trx) => {
    const row = await lockVersion(trx, dataSetId, version);
    requireStatus(row.status, ['Draft'], `Version ${version}`, 'previewed with a token');
    const now = options.now ?? new Date();
    const expires = new Date(now.getTime() + hours * 3600_000);
    const token = await insertPreviewToken(trx, {
      version_id: row.id,
      label: options.label ?? '',
      created_at: now,
      expires_at: expires,
    });
    return {
      id: token.id,
      dataSetId,
      version: formatVersionNumber(row),
      label: token.label,
      created: token.created_at,
      expires: token.expires_at,
    };
  });
}

/** Removes a Draft version entirely (its rows table too), e.g. after a wrong import. */
export async function deleteDraftVersion(db: Db, dataSetId: string, version: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await lockVersion(trx, dataSetId, version);
    requireStatus(row.status, ['Draft'], `Version ${version}`, 'deleted');
    await deleteVersion(trx, row);
  });
}

export async function addPublication(
  db: Db,
  publication: { id?: string; title: string; slug?: string; summary?: string },
): Promise<string> {
  if (!publication.title.trim()) throw new ValidationError([{ path: 'title', message: 'The title is empty.' }]);
  const id = publication.id ?? (await newUuid(db));
  const slug =
    publication.slug ??
    publication.title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
  if (await publicationExists(db, { id, slug }))
    throw new ConflictError(`A publication with id ${id} or slug "${slug}" exists already.`);
  await insertPublication(db, { id, title: publication.title, slug, summary: publication.summary ?? '' });
  return id;
}

export async function addDataSet(
  db: Db,
  dataSet: { id?: string; publicationId: string; title: string; summary?: string },
): Promise<string> {
  if (!dataSet.title.trim()) throw new ValidationError([{ path: 'title', message: 'The title is empty.' }]);
  if (!(await publicationExists(db, { id: dataSet.publicationId })))
    throw new NotFoundError(`Publication ${dataSet.publicationId} does not exist.`);
  const id = dataSet.id ?? (await newUuid(db));
  if (await dataSetExists(db, id)) throw new ConflictError(`Data set ${id} exists already.`);
  await insertDataSet(db, {
    id,
    publication_id: dataSet.publicationId,
    title: dataSet.title,
    summary: dataSet.summary ?? '',
    status: 'Draft',
    superseding_data_set_id: null,
  });
  return id;
}

export interface CatalogueListing {
  id: string;
  title: string;
  status: DataSetStatus;
  supersedingDataSetId: string | null;
  versions: Array<{
    version: string;
    status: VersionStatus;
    rows: number;
    published: Date | null;
    withdrawn: Date | null;
  }>;
}

export async function listCatalogue(db: Db, dataSetId?: string): Promise<CatalogueListing[]> {
  const dataSets = await findDataSets(db, dataSetId);
  const versions = await findAllVersions(db);
  return dataSets.map((d) => ({
    id: d.id,
    title: d.title,
    status: d.status,
    supersedingDataSetId: d.superseding_data_set_id,
    versions: versions
      .filter((v) => v.data_set_id === d.id)
      .map((v) => ({
        version: formatVersionNumber(v),
        status: v.status,
        rows: v.total_results,
        published: v.published_at,
        withdrawn: v.withdrawn_at,
      })),
  }));
}
