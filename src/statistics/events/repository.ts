/** What the statistics events read from the statistics tables (the event log itself: src/events/outbox-repository.ts). */
import type { Executor } from '../../db/database.js';

/** A version with its data set's title, as a version event describes it. */
export async function findVersionForEvent(db: Executor, versionId: number) {
  return db
    .selectFrom('data_set_versions')
    .innerJoin('data_sets', 'data_sets.id', 'data_set_versions.data_set_id')
    .select([
      'data_set_versions.id',
      'data_set_id',
      'major',
      'minor',
      'patch',
      'data_set_versions.status',
      'notes',
      'published_at',
      'withdrawn_at',
      'data_sets.title',
    ])
    .where('data_set_versions.id', '=', versionId)
    .executeTakeFirstOrThrow();
}

/** A data set as a data set event describes it. */
export async function findDataSetForEvent(db: Executor, dataSetId: string) {
  return db
    .selectFrom('data_sets')
    .select(['id', 'title', 'summary', 'status', 'publication_id', 'superseding_data_set_id'])
    .where('id', '=', dataSetId)
    .executeTakeFirstOrThrow();
}
