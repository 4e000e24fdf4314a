import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { VersionStatus } from '../tables.js';

export interface PublicationRow {
  id: string;
  title: string;
  slug: string;
  summary: string;
  last_published: Date | string;
}

/**
 * Publications that own a Published data set, with their last publication time: the latest of their data sets'
 * versions with one of `versionStatuses`.
 */
function visiblePublications(db: Executor, versionStatuses: readonly VersionStatus[]) {
  return db
    .selectFrom('publications as p')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('data_sets as d')
          .select('d.id')
          .whereRef('d.publication_id', '=', 'p.id')
          .where('d.status', '=', 'Published'),
      ),
    )
    .select(['p.id', 'p.title', 'p.slug', 'p.summary'])
    .select((eb) =>
      eb.fn
        .coalesce(
          eb
            .selectFrom('data_set_versions as v')
            .innerJoin('data_sets as d', 'd.id', 'v.data_set_id')
            .whereRef('d.publication_id', '=', 'p.id')
            .where('v.status', 'in', versionStatuses)
            .select((inner) => inner.fn.max('v.published_at').as('published')),
          eb.ref('p.created_at'),
        )
        .as('last_published'),
    );
}

type Page = { limit: number; offset: number };

/** A page of the visible publications whose search vector matches the tsquery `text`, best first; and their number. */
export async function findMatchingPublicationsPage(
  db: Executor,
  text: string,
  versionStatuses: readonly VersionStatus[],
  { limit, offset }: Page,
): Promise<{ rows: PublicationRow[]; total: number }> {
  const tsquery = sql`to_tsquery('english', ${text})`;
  const matching = visiblePublications(db, versionStatuses)
    .where(sql<boolean>`p.search_vector @@ ${tsquery}`)
    .select(sql<number>`ts_rank(p.search_vector, ${tsquery})`.as('rank'));
  const [rows, total] = await Promise.all([
    db
      .selectFrom(matching.as('m'))
      .selectAll()
      .orderBy('rank', 'desc')
      .orderBy('title')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom(matching.as('m'))
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}

/** A page of the visible publications by title; and their number. */
export async function findPublicationsPage(
  db: Executor,
  versionStatuses: readonly VersionStatus[],
  { limit, offset }: Page,
): Promise<{ rows: PublicationRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    db
      .selectFrom(visiblePublications(db, versionStatuses).as('m'))
      .selectAll()
      .orderBy('title')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom(visiblePublications(db, versionStatuses).as('m'))
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}

export async function findPublication(
  db: Executor,
  publicationId: string,
  versionStatuses: readonly VersionStatus[],
): Promise<PublicationRow | undefined> {
  return db
    .selectFrom(visiblePublications(db, versionStatuses).as('m'))
    .selectAll()
    .where('id', '=', publicationId)
    .executeTakeFirst();
}
