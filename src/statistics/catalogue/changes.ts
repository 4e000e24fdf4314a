import type { Executor } from '../../db/database.js';
import { ForbiddenError } from '../../errors.js';
import type { ChangeSetView, DataSetVersionChangesView } from '../schemas.js';
import {
  previewTokenGrants,
  publicVersionNumber,
  resolveDataSetVersion,
  versionIsPublicFor,
  type DataSetVersionRow,
} from '../versions.js';

/**
 * The changes a version made relative to the version before it. The importer stores one row per
 * change in `version_changes` (kind major|minor, list, change as JSON), in the order the lists show them.
 *
 * Filter-option and location-option changes are shown grouped under their filter / level. The importer may store
 * them already grouped (`{filter, options: [...]}`, `{level, options: [...]}`) or one option per row
 * (`{filter, previousState?, currentState?}`); both read the same: consecutive changes of the same parent form
 * one group, in stored order.
 */

const LISTS = ['filters', 'filterOptions', 'geographicLevels', 'indicators', 'locationGroups', 'locationOptions', 'timePeriods'] as const;
type ListName = (typeof LISTS)[number];

type Json = Record<string, unknown>;

function stateOnly(change: Json): Json {
  const out: Json = {};
  if (change.previousState !== undefined && change.previousState !== null) out.previousState = change.previousState;
  if (change.currentState !== undefined && change.currentState !== null) out.currentState = change.currentState;
  return out;
}

function parentKey(parent: unknown): string {
  return JSON.stringify(parent ?? null);
}

function groupOptionChanges(changes: Json[], parentField: 'filter' | 'level'): Json[] {
  const groups: Json[] = [];
  let current: { key: string; group: Json } | undefined;
  for (const change of changes) {
    const parent = change[parentField];
    const key = parentKey(parent);
    const options = Array.isArray(change.options) ? (change.options as Json[]).map(stateOnly) : [stateOnly(change)];
    if (current && current.key === key) {
      (current.group.options as Json[]).push(...options);
    } else {
      current = { key, group: { [parentField]: parent, options } };
      groups.push(current.group);
    }
  }
  return groups;
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
  return set as ChangeSetView;
}

export async function changeSetsOf(db: Executor, versionIds: readonly number[]) {
  const rows = versionIds.length
    ? await db
        .selectFrom('version_changes')
        .select(['version_id', 'kind', 'list', 'change'])
        .where('version_id', 'in', [...versionIds])
        .orderBy('id')
        .execute()
    : [];
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
    patches = await db
      .selectFrom('data_set_versions')
      .selectAll()
      .where('data_set_id', '=', version.data_set_id)
      .where('major', '=', version.major)
      .where('minor', '=', version.minor)
      .where('patch', '<', version.patch)
      .orderBy('patch')
      .execute();
    for (const patch of patches) {
      if (!versionIsPublicFor('view', patch.status) && !(await previewTokenGrants(db, query.previewToken, patch))) {
        throw new ForbiddenError(`Version ${publicVersionNumber(patch)} in the patch history is not available (status ${patch.status}).`);
      }
    }
  }
  const sets = await changeSetsOf(db, [version.id, ...patches.map((p) => p.id)]);
  const own = sets.get(version.id)!;
  return {
    versionNumber: publicVersionNumber(version),
    notes: version.notes,
    majorChanges: own.majorChanges,
    minorChanges: own.minorChanges,
    patchHistory: patches.map((patch) => ({
      versionNumber: publicVersionNumber(patch),
      notes: patch.notes,
      majorChanges: sets.get(patch.id)!.majorChanges,
      minorChanges: sets.get(patch.id)!.minorChanges,
    })),
  };
}
