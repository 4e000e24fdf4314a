import type { Migration } from 'kysely';
import * as statistics from './2026-11-23T1000-statistics.js';
import * as register from './2026-11-23T1100-register.js';
import * as registerActions from './2026-11-23T1200-register-actions.js';
import * as traineeListIndex from './2026-11-23T1300-trainee-list-index.js';
import * as traineeListCounts from './2026-11-23T1400-trainee-list-counts.js';
import * as events from './2026-11-25T1000-events.js';
import * as webhooks from './2026-11-25T1100-webhooks.js';
import * as rowIndexSnapshots from './2026-11-25T1200-row-index-snapshots.js';
import * as rowIndexParts from './2026-11-27T1000-row-index-parts.js';
import * as webhookDataSet from './2026-11-27T1100-webhook-data-set.js';
import * as eventInbox from './2026-11-27T1900-event-inbox.js';
import * as rowIndexPieces from './2026-11-28T0300-row-index-pieces.js';
import * as btreeGin from './2026-11-28T1230-btree-gin.js';
import * as versionFileDeferred from './2026-11-28T1240-version-file-deferred.js';
import * as versionLocationLevels from './2026-11-28T2000-version-location-levels.js';
import * as sandboxDue from './2026-11-29T0800-sandbox-due.js';
import * as listCountShard from './2026-11-29T0810-list-count-shard.js';
import * as idempotencyKeys from './2026-11-29T1000-idempotency-keys.js';
import * as versionParquet from './2026-11-29T1000-version-parquet.js';
import * as traineeDuplicateCandidates from './2026-11-30T1800-trainee-duplicate-candidates.js';
import * as listCountAddPlpgsql from './2026-11-30T2030-list-count-add-plpgsql.js';
import * as eventsPurgeByPosition from './2026-12-01T0200-events-purge-by-position.js';

/**
 * Every migration, by name, in the order they run. A static list (not a folder scan) so that migrations run the
 * same under tsx, vitest and compiled JavaScript. Names sort in the order given: keep the timestamp prefix.
 */
export const migrations: Record<string, Migration> = {
  '2026-11-23T1000-statistics': statistics,
  '2026-11-23T1100-register': register,
  '2026-11-23T1200-register-actions': registerActions,
  '2026-11-23T1300-trainee-list-index': traineeListIndex,
  '2026-11-23T1400-trainee-list-counts': traineeListCounts,
  '2026-11-25T1000-events': events,
  '2026-11-25T1100-webhooks': webhooks,
  '2026-11-25T1200-row-index-snapshots': rowIndexSnapshots,
  '2026-11-27T1000-row-index-parts': rowIndexParts,
  '2026-11-27T1100-webhook-data-set': webhookDataSet,
  '2026-11-27T1900-event-inbox': eventInbox,
  '2026-11-28T0300-row-index-pieces': rowIndexPieces,
  '2026-11-28T1230-btree-gin': btreeGin,
  '2026-11-28T1240-version-file-deferred': versionFileDeferred,
  '2026-11-28T2000-version-location-levels': versionLocationLevels,
  '2026-11-29T0800-sandbox-due': sandboxDue,
  '2026-11-29T0810-list-count-shard': listCountShard,
  '2026-11-29T1000-idempotency-keys': idempotencyKeys,
  '2026-11-29T1000-version-parquet': versionParquet,
  '2026-11-30T1800-trainee-duplicate-candidates': traineeDuplicateCandidates,
  '2026-11-30T2030-list-count-add-plpgsql': listCountAddPlpgsql,
  '2026-12-01T0200-events-purge-by-position': eventsPurgeByPosition,
};
