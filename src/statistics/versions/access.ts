import type { Executor } from '../../db/database.js';
import { ForbiddenError, NotFoundError } from '../../errors.js';
import type { DataSetStatus, VersionStatus } from '../tables.js';
import { isUuid } from '../../validators.js';
import { formatVersionNumber } from '../standard/version-numbers.js';
import {
  activePreviewTokenExists,
  findDataSet,
  findHighestPublishedMatching,
  findHighestVersion,
  findHighestVersions,
  findVersionByNumber,
  type DataSetRow,
  type DataSetVersionRow,
} from './repository.js';

/**
 * Which data set version a request means, and whether the caller may see it.
 *
 * - omitted `dataSetVersion` (or exactly `*` in the query string): the data set's latest live version, i.e. the
 *   highest-numbered version that has been published (status Published, Deprecated or Withdrawn);
 * - an exact version (`1`, `1.1`, `v2.0`, `2.1.3`; missing parts are 0 and must match exactly);
 * - a wildcard (`2.*`, `1.2.*`, `*` in a path): the highest **Published** version in that range;
 * - anything unparseable (white space included), or no match: 404. Then the access policy: 403.
 */

export type { DataSetRow, DataSetVersionRow };

export interface ResolvedVersion {
  dataSet: DataSetRow;
  version: DataSetVersionRow;
  /** The public version number: `major.minor`, plus `.patch` when patch > 0. */
  versionNumber: string;
  /** True when access was granted by a preview token (the version is a Draft). */
  viaPreviewToken: boolean;
}

/** View a version (meta, CSV, version summary, changes) or query its data (Withdrawn versions cannot be queried). */
export type VersionPolicy = 'view' | 'query';

export interface ResolveVersionOptions {
  dataSetId: string;
  dataSetVersion?: string;
  /** The `preview-token` request header. A value that is not a uuid is ignored. */
  previewToken?: string;
  /** Default 'view'. */
  policy?: VersionPolicy;
  /**
   * Where the version selector came from. In the query string (default) a bare `*` means "latest live version";
   * in the `/versions/{dataSetVersion}` path it is a wildcard over Published versions.
   */
  source?: 'query' | 'path';
}

export const PUBLIC_VERSION_STATUSES: readonly VersionStatus[] = ['Published', 'Deprecated', 'Withdrawn'];
const QUERYABLE_VERSION_STATUSES: readonly VersionStatus[] = ['Published', 'Deprecated'];
const VIEWABLE_DATA_SET_STATUSES: readonly DataSetStatus[] = ['Published', 'Deprecated'];

export interface ExactVersion {
  kind: 'exact';
  major: number;
  minor: number;
  patch: number;
}

/** A wildcard: the given leading parts are fixed, the rest are `*`. */
export interface WildcardVersion {
  kind: 'wildcard';
  major?: number;
  minor?: number;
}

const MAX_PART = 2147483647;

/** Parses a version selector; undefined when it is not a valid version (→ 404). */
export function parseVersionSelector(input: string): ExactVersion | WildcardVersion | undefined {
  // White space anywhere (` 1.0`, `1.0\n`) is not a version: echoed into a client's code it breaks it
  // (docs/compatibility.md).
  if (/\s/.test(input)) return undefined;
  if (input.includes('*')) {
    const trimmed = input.replace(/^[ v]+|[ v]+$/g, '');
    const parts = trimmed.split('.');
    if (parts.length > 3) return undefined;
    const fixed: number[] = [];
    let wild = false;
    for (const part of parts) {
      if (part === '*') {
        wild = true;
        continue;
      }
      if (wild || !/^\d+$/.test(part) || Number(part) > MAX_PART) return undefined;
      fixed.push(Number(part));
    }
    if (!wild) return undefined;
    // `1.2.*` fixes major and minor; the patch part is the only free one, which is what the wildcard selects.
    return { kind: 'wildcard', major: fixed[0], minor: fixed[1] };
  }
  const match = /^v?(\d+)(?:\.(\d+)(?:\.(\d+))?)?$/.exec(input.trim());
  if (!match) return undefined;
  const [major, minor, patch] = [match[1], match[2] ?? '0', match[3] ?? '0'].map(Number) as [number, number, number];
  if (major > MAX_PART || minor > MAX_PART || patch > MAX_PART) return undefined;
  return { kind: 'exact', major, minor, patch };
}

/** The data set row, or 404 (a non-uuid id is a 404 too). */
export async function findDataSetOrThrow(db: Executor, dataSetId: string): Promise<DataSetRow> {
  if (!isUuid(dataSetId)) throw new NotFoundError(`No data set ${dataSetId}.`);
  const dataSet = await findDataSet(db, dataSetId);
  if (!dataSet) throw new NotFoundError(`No data set ${dataSetId}.`);
  return dataSet;
}

/** The latest live version: the highest-numbered version that has been published (whatever happened to it since). */
export async function findLatestLiveVersion(db: Executor, dataSetId: string): Promise<DataSetVersionRow | undefined> {
  return findHighestVersion(db, dataSetId, PUBLIC_VERSION_STATUSES);
}

/** The latest live version of each of several data sets, keyed by data set id. */
export async function findLatestLiveVersions(
  db: Executor,
  dataSetIds: readonly string[],
): Promise<Map<string, DataSetVersionRow>> {
  return findHighestVersions(db, dataSetIds, PUBLIC_VERSION_STATUSES);
}

/** The latest draft version of a data set (the one a data-set-level preview token must belong to). */
export async function findLatestDraftVersion(db: Executor, dataSetId: string): Promise<DataSetVersionRow | undefined> {
  return findHighestVersion(db, dataSetId, ['Draft']);
}

/**
 * Whether `previewToken` grants access to `version`: the token exists for that version, the version is a Draft,
 * and the token is active now (created_at <= now < expires_at).
 */
export async function previewTokenGrants(
  db: Executor,
  previewToken: string | undefined,
  version: Pick<DataSetVersionRow, 'id' | 'status'>,
): Promise<boolean> {
  if (!previewToken || !isUuid(previewToken) || version.status !== 'Draft') return false;
  return activePreviewTokenExists(db, previewToken, version.id);
}

export interface ResolvedDataSet {
  dataSet: DataSetRow;
  /** The latest draft version when the request's preview token is valid for it. */
  previewDraft?: DataSetVersionRow;
}

/**
 * The "view data set" policy of `GET /data-sets/{id}` and `/versions`: status Published or Deprecated, or a
 * preview token for the data set's latest draft version. 404 before 403.
 */
export async function resolveDataSet(
  db: Executor,
  options: { dataSetId: string; previewToken?: string },
): Promise<ResolvedDataSet> {
  const dataSet = await findDataSetOrThrow(db, options.dataSetId);
  let previewDraft: DataSetVersionRow | undefined;
  if (options.previewToken) {
    const draft = await findLatestDraftVersion(db, dataSet.id);
    if (draft && (await previewTokenGrants(db, options.previewToken, draft))) previewDraft = draft;
  }
  if (!VIEWABLE_DATA_SET_STATUSES.includes(dataSet.status) && !previewDraft) {
    throw new ForbiddenError(`Data set ${dataSet.id} is not available (status ${dataSet.status}).`);
  }
  return { dataSet, previewDraft };
}

async function findVersion(db: Executor, dataSetId: string, selector: string | undefined, source: 'query' | 'path') {
  // Blank is "not given" (ASP.NET binds it to null); a version with white space around it is refused below.
  if (selector === undefined || selector.trim() === '' || (source === 'query' && selector === '*')) {
    const live = await findLatestLiveVersion(db, dataSetId);
    if (!live) throw new NotFoundError(`Data set ${dataSetId} has no published version.`);
    return live;
  }
  const parsed = parseVersionSelector(selector);
  if (!parsed) {
    // A second `?` in a query string (a client that appends `?name=…` to a URL that has one: DfE's R client does
    // with a GET query and a version) leaves the rest of the query inside this value.
    const hint =
      source === 'query' && selector.includes('?') ? " Parameters after the first are joined with '&', not '?'." : '';
    throw new NotFoundError(`'${selector}' is not a data set version.${hint}`);
  }
  const version =
    parsed.kind === 'exact'
      ? await findVersionByNumber(db, dataSetId, parsed)
      : await findHighestPublishedMatching(db, dataSetId, { major: parsed.major, minor: parsed.minor });
  if (!version) {
    throw new NotFoundError(
      parsed.kind === 'wildcard'
        ? `Data set ${dataSetId} has no published version matching ${selector}.`
        : `Data set ${dataSetId} has no version ${selector}.`,
    );
  }
  return version;
}

/** Whether the version passes the endpoint's policy without a preview token. */
export function versionIsPublicFor(policy: VersionPolicy, status: VersionStatus): boolean {
  return (policy === 'query' ? QUERYABLE_VERSION_STATUSES : PUBLIC_VERSION_STATUSES).includes(status);
}

/** Resolves the version of a request and applies the access policy: 404 before 403. */
export async function resolveDataSetVersion(db: Executor, options: ResolveVersionOptions): Promise<ResolvedVersion> {
  const dataSet = await findDataSetOrThrow(db, options.dataSetId);
  const version = await findVersion(db, dataSet.id, options.dataSetVersion, options.source ?? 'query');
  const policy = options.policy ?? 'view';
  let viaPreviewToken = false;
  if (!versionIsPublicFor(policy, version.status)) {
    viaPreviewToken = await previewTokenGrants(db, options.previewToken, version);
    if (!viaPreviewToken) {
      throw new ForbiddenError(
        `Version ${formatVersionNumber(version)} of data set ${dataSet.id} is not available` +
          (policy === 'query' ? ` for querying (status ${version.status}).` : ` (status ${version.status}).`),
      );
    }
  }
  return { dataSet, version, versionNumber: formatVersionNumber(version), viaPreviewToken };
}
