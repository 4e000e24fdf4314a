import type { Executor } from '../../db/database.js';
import { NotFoundError } from '../../errors.js';
import { pagingOf, type PagingViewModel } from '../paging.js';
import type { PublicationSummary } from '../schemas.js';
import { PUBLIC_VERSION_STATUSES } from '../versions/access.js';
import {
  findMatchingPublicationsPage,
  findPublication,
  findPublicationsPage,
  type PublicationRow,
} from './repository.js';

/**
 * Publications: only those with at least one data set whose status is Published are visible.
 * `lastPublished` is the latest publication time of any public version of the publication's data sets.
 */

function toSummary(row: PublicationRow): PublicationSummary {
  const lastPublished = row.last_published instanceof Date ? row.last_published : new Date(row.last_published);
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    summary: row.summary,
    lastPublished: lastPublished.toISOString(),
  };
}

/**
 * Words of a search text as a prefix-matching tsquery (`absence & school:*`-style: every word must match, the last
 * and every other word also as a prefix), or undefined when the text has no words.
 */
export function searchQueryText(search: string): string | undefined {
  const words = search.toLowerCase().match(/[\p{L}\p{N}]+/gu);
  if (!words || words.length === 0) return undefined;
  return words.map((w) => `${w}:*`).join(' & ');
}

export interface PublicationListQuery {
  search?: string;
  page: number;
  pageSize: number;
}

export async function listPublications(
  db: Executor,
  { search, page, pageSize }: PublicationListQuery,
): Promise<{ paging: PagingViewModel; results: PublicationSummary[] }> {
  const offset = (page - 1) * pageSize;
  let found: { rows: PublicationRow[]; total: number };
  if (search !== undefined) {
    const text = searchQueryText(search);
    if (!text) return { paging: pagingOf(page, pageSize, 0), results: [] };
    found = await findMatchingPublicationsPage(db, text, PUBLIC_VERSION_STATUSES, { limit: pageSize, offset });
  } else {
    found = await findPublicationsPage(db, PUBLIC_VERSION_STATUSES, { limit: pageSize, offset });
  }
  return { paging: pagingOf(page, pageSize, found.total), results: found.rows.map(toSummary) };
}

export async function getPublication(db: Executor, publicationId: string): Promise<PublicationSummary> {
  const row = await findPublication(db, publicationId, PUBLIC_VERSION_STATUSES);
  if (!row) throw new NotFoundError(`No publication ${publicationId} with published data sets.`);
  return toSummary(row);
}
