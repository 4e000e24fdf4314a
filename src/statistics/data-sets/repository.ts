import { sql } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DataSetStatus, VersionStatus } from '../tables.js';
import type { DataSetRow } from '../versions/repository.js';

/**
 * A page of a publication's data sets with one of `statuses`, by the publication time of their latest version with
 * one of `versionStatuses` (newest first, none last), then title and id; and their number.
 */
export async function findPublicationDataSetsPage(
  db: Executor,
  publicationId: string,
  visibility: { statuses: readonly DataSetStatus[]; versionStatuses: readonly VersionStatus[] },
  { limit, offset }: { limit: number; offset: number },
): Promise<{ rows: DataSetRow[]; total: number }> {
  const visible = db
    .selectFrom('data_sets as d')
    .where('d.publication_id', '=', publicationId)
    .where('d.status', 'in', visibility.statuses);
  const [rows, total] = await Promise.all([
    visible
      .selectAll('d')
      .select((eb) =>
        eb
          .selectFrom('data_set_versions as v')
          .whereRef('v.data_set_id', '=', 'd.id')
          .where('v.status', 'in', visibility.versionStatuses)
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
      .limit(limit)
      .offset(offset)
      .execute(),
    visible.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map(({ live_published_at: _ignored, ...dataSet }) => dataSet), total: Number(total.count) };
}
