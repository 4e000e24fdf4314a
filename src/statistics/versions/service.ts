import type { Executor } from '../../db/database.js';
import { ForbiddenError } from '../../errors.js';
import { pagingOf, type PagingViewModel } from '../paging.js';
import type { ChangeSetView, DataSetVersionChangesView, DataSetVersionView } from '../schemas.js';
import {
  previewTokenGrants,
  PUBLIC_VERSION_STATUSES,
  resolveDataSet,
  resolveDataSetVersion,
  versionIsPublicFor,
  type DataSetVersionRow,
} from './access.js';
import { formatVersionNumber } from '../standard/version-numbers.js';
import { findEarlierPatches, findVersionChanges, findVersionsPage } from './repository.js';
import { versionView, type VersionSummaryCache } from './summaries.js';

/** Versions: the list, one version, and the changes of a version. */

/**
 * The changes a version made relative to the version before it. The importer stores one row per
 * change in `version_changes` (kind major|minor, list, change as JSON), in the order the lists show them.
 *
 * Filter-option and location-option changes are shown grouped under their filter / level, as the reference groups
 * them: by the parent's public id, column and label (a filter) or code (a level), each group where its first change
 * stands. Stored rows carry the parent one option per row (`{filter, previousState?, currentState?}`) or already
 * grouped (`{filter, options: [...]}`).
 */

const LISTS = [
  'filters',
  'filterOptions',
  'geographicLevels',
  'indicators',
  'locationGroups',
  'locationOptions',
  'timePeriods',
] as const;
type ListName = (typeof LISTS)[number];

type Json = Record<string, unknown>;

function stateOnly(change: Json): Json {
  const out: Json = {};
  if (change.previousState !== undefined && change.previousState !== null) out.previousState = change.previousState;
  if (change.currentState !== undefined && change.currentState !== null) out.currentState = change.currentState;
  return out;
}

/**
 * A group's parent and its key. The reference builds a group's filter from its id, column and label only, so its
 * `hint` is always `""` there.
 */
function groupParent(parent: unknown, parentField: 'filter' | 'level'): { key: string; view: unknown } {
  if (parentField === 'level') {
    const level = (parent ?? {}) as Json;
    return { key: JSON.stringify(level.code ?? null), view: parent };
  }
  const filter = (parent ?? {}) as Json;
  const view = { id: filter.id, column: filter.column, label: filter.label, hint: '' };
  return { key: JSON.stringify([view.id, view.column, view.label]), view };
}

function groupOptionChanges(changes: Json[], parentField: 'filter' | 'level'): Json[] {
  const groups = new Map<string, Json>();
  for (const change of changes) {
    const { key, view } = groupParent(change[parentField], parentField);
    const options = Array.isArray(change.options) ? (change.options as Json[]).map(stateOnly) : [stateOnly(change)];
    const group = groups.get(key);
    if (group) (group.options as Json[]).push(...options);
    else groups.set(key, { [parentField]: view, options });
  }
  return [...groups.values()];
}

function buildChangeSet(rows: Array<{ list: string; change: unknown }>): ChangeSetView {
  const byList = new Map<ListName, Json[]>();
  for (const row of rows) {
    if (!(LISTS as readonly string[]).includes(row.list)) continue;
    const change = (typeof row.change === 'string' ? JSON.parse(row.change) : row.change) as Json;
    const list = byList.get(row.list as ListName) ?? [];
    list.push(change);
    byList.set(row.list as ListName, list);
  }
  const set: Record<string, Json[]> = {};
  for (const name of LISTS) {
    const changes = byList.get(name);
    if (!changes || changes.length === 0) continue;
    if (name === 'filterOptions') set[name] = groupOptionChanges(changes, 'filter');
    else if (name === 'locationOptions') set[name] = groupOptionChanges(changes, 'level');
    else set[name] = changes.map(stateOnly);
  }
  return set;
}

export async function changeSetsOf(db: Executor, versionIds: readonly number[]) {
  const rows = await findVersionChanges(db, versionIds);
  const result = new Map<number, { majorChanges: ChangeSetView; minorChanges: ChangeSetView }>();
  for (const id of versionIds) {
    const own = rows.filter((r) => r.version_id === id);
    result.set(id, {
      majorChanges: buildChangeSet(own.filter((r) => r.kind === 'major')),
      minorChanges: buildChangeSet(own.filter((r) => r.kind === 'minor')),
    });
  }
  return result;
}

export interface ChangesQuery {
  dataSetId: string;
  dataSetVersion: string;
  includePatchHistory: boolean;
  previewToken?: string;
}

/**
 * `GET /data-sets/{id}/versions/{v}/changes`. With includePatchHistory on a patch `x.y.p`, the changes of
 * `x.y.0` … `x.y.(p-1)` too, oldest first; every one must be viewable (else 403). On a non-patch version the
 * history is `[]` (the reference fails with a 500 there).
 */
export async function getVersionChanges(db: Executor, query: ChangesQuery): Promise<DataSetVersionChangesView> {
  const { version } = await resolveDataSetVersion(db, {
    dataSetId: query.dataSetId,
    dataSetVersion: query.dataSetVersion,
    previewToken: query.previewToken,
    source: 'path',
    policy: 'view',
  });
  let patches: DataSetVersionRow[] = [];
  if (query.includePatchHistory && version.patch > 0) {
    patches = await findEarlierPatches(db, version);
    for (const patch of patches) {
      if (!versionIsPublicFor('view', patch.status) && !(await previewTokenGrants(db, query.previewToken, patch))) {
        throw new ForbiddenError(
          `Version ${formatVersionNumber(patch)} in the patch history is not available (status ${patch.status}).`,
        );
      }
    }
  }
  const sets = await changeSetsOf(db, [version.id, ...patches.map((p) => p.id)]);
  const own = sets.get(version.id)!;
  return {
    versionNumber: formatVersionNumber(version),
    notes: version.notes,
    majorChanges: own.majorChanges,
    minorChanges: own.minorChanges,
    patchHistory: patches.map((patch) => ({
      versionNumber: formatVersionNumber(patch),
      notes: patch.notes,
      majorChanges: sets.get(patch.id)!.majorChanges,
      minorChanges: sets.get(patch.id)!.minorChanges,
    })),
  };
}

/**
 * `GET /data-sets/{id}/versions`: the public versions (Published, Deprecated, Withdrawn), plus the latest draft when
 * the preview token is valid for it, newest first by major, minor and patch.
 */
export async function listVersions(
  db: Executor,
  summaryCache: VersionSummaryCache,
  dataSetId: string,
  { page, pageSize }: { page: number; pageSize: number },
  previewToken?: string,
): Promise<{ paging: PagingViewModel; results: DataSetVersionView[] }> {
  const { dataSet, previewDraft } = await resolveDataSet(db, { dataSetId, previewToken });
  const { rows, total } = await findVersionsPage(
    db,
    dataSet.id,
    { statuses: PUBLIC_VERSION_STATUSES, alsoId: previewDraft?.id },
    { limit: pageSize, offset: (page - 1) * pageSize },
  );
  const summaries = await summaryCache.load(
    db,
    rows.map((r) => r.id),
  );
  return {
    paging: pagingOf(page, pageSize, total),
    results: rows.map((row) => versionView(row, summaries.get(row.id)!)),
  };
}

/** `GET /data-sets/{id}/versions/{v}`: exact or wildcard version (view-version policy). */
export async function getVersion(
  db: Executor,
  summaryCache: VersionSummaryCache,
  dataSetId: string,
  dataSetVersion: string,
  previewToken?: string,
): Promise<DataSetVersionView> {
  const { version } = await resolveDataSetVersion(db, {
    dataSetId,
    dataSetVersion,
    previewToken,
    source: 'path',
    policy: 'view',
  });
  const summaries = await summaryCache.load(db, [version.id]);
  return versionView(version, summaries.get(version.id)!);
}
