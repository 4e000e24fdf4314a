import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import { NotFoundError } from '../../errors.js';
import { pagingOf, type PagingViewModel } from '../http.js';
import type { PublicationSummary } from '../schemas.js';
import { PUBLIC_VERSION_STATUSES } from '../versions/access.js';

/**
 * Publications: only those with at least one data set whose status is Published are visible.
 * `lastPublished` is the latest publication time of any public version of the publication's data sets.
 */

interface PublicationRow {
  id: string;
  title: string;
  slug: string;
  summary: string;
  last_published: Date | string;
}

/** Publications that own a Published data set, with their last publication time. */
function visiblePublications(db: Executor) {
  return db
    .selectFrom('publications as p')
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('data_sets as d').select('d.id').whereRef('d.publication_id', '=', 'p.id').where('d.status', '=', 'Published')),
    )
    .select(['p.id', 'p.title', 'p.slug', 'p.summary'])
    .select((eb) =>
      eb.fn
        .coalesce(
          eb
            .selectFrom('data_set_versions as v')
            .innerJoin('data_sets as d', 'd.id', 'v.data_set_id')
            .whereRef('d.publication_id', '=', 'p.id')
            .where('v.status', 'in', PUBLIC_VERSION_STATUSES)
            .select((inner) => inner.fn.max('v.published_at').as('published')),
          eb.ref('p.created_at'),
        )
        .as('last_published'),
    );
}

function toSummary(row: PublicationRow): PublicationSummary {
  const lastPublished = row.last_published instanceof Date ? row.last_published : new Date(row.last_published);
  return { id: row.id, title: row.title, slug: row.slug, summary: row.summary, lastPublished: lastPublished.toISOString() };
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
  if (search !== undefined) {
    const text = searchQueryText(search);
    if (!text) return { paging: pagingOf(page, pageSize, 0), results: [] };
    const tsquery = sql`to_tsquery('english', ${text})`;
    const matching = visiblePublications(db)
      .where(sql<boolean>`p.search_vector @@ ${tsquery}`)
      .select(sql<number>`ts_rank(p.search_vector, ${tsquery})`.as('rank'));
    const [rows, total] = await Promise.all([
      db
        .selectFrom(matching.as('m'))
        .selectAll()
        .orderBy('rank', 'desc')
        .orderBy('title')
        .orderBy('id')
        .limit(pageSize)
        .offset(offset)
        .execute(),
      db.selectFrom(matching.as('m')).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
    ]);
    return { paging: pagingOf(page, pageSize, Number(total.count)), results: rows.map(toSummary) };
  }
  const [rows, total] = await Promise.all([
    db.selectFrom(visiblePublications(db).as('m')).selectAll().orderBy('title').orderBy('id').limit(pageSize).offset(offset).execute(),
    db.selectFrom(visiblePublications(db).as('m')).select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { paging: pagingOf(page, pageSize, Number(total.count)), results: rows.map(toSummary) };
}

export async function getPublication(db: Executor, publicationId: string): Promise<PublicationSummary> {
  const row = await db.selectFrom(visiblePublications(db).as('m')).selectAll().where('id', '=', publicationId).executeTakeFirst();
  if (!row) throw new NotFoundError(`No publication ${publicationId} with published data sets.`);
  return toSummary(row);
}
