/**
 * The statistics API's change events (public, like the API): a data set version published, deprecated or withdrawn,
 * a new data set, a data set deprecated or withdrawn. Each write path appends one with a single call in its
 * transaction, after the write. A version event carries the version, its change summary in the shape of the changes endpoint, and
 * links to the version's meta, changes, CSV and query.
 */
import type { Executor } from '../../db/database.js';
import type { EventApiAdapter } from '../../events/api-adapter.js';
import { appendEvent, type StoredEvent } from '../../events/outbox-repository.js';
import { changeSetsOf } from '../versions/service.js';
import { formatVersionNumber, versionType } from '../standard/version-numbers.js';
import { findDataSetForEvent, findVersionForEvent } from './repository.js';

export const STATISTICS_EVENT_TYPES = [
  'data_set.created',
  'data_set.deprecated',
  'data_set.withdrawn',
  'data_set_version.published',
  'data_set_version.deprecated',
  'data_set_version.withdrawn',
] as const;
export type StatisticsEventType = (typeof STATISTICS_EVENT_TYPES)[number];

/** Where the canonical statistics routes live; links in events are paths under it. */
const API = '/v1';

function link(href: string, method: 'GET' | 'POST' = 'GET') {
  return { href, method };
}

/** A version event: appended by publish (import or stats-admin), deprecate and withdraw. */
export async function appendDataSetVersionEvent(
  trx: Executor,
  type: Extract<StatisticsEventType, `data_set_version.${string}`>,
  versionId: number,
) {
  const version = await findVersionForEvent(trx, versionId);
  const number = formatVersionNumber(version);
  const sets = (await changeSetsOf(trx, [version.id])).get(version.id)!;
  const base = `${API}/data-sets/${version.data_set_id}`;
  const at = `dataSetVersion=${encodeURIComponent(number)}`;
  return appendEvent(trx, {
    api: 'statistics',
    type,
    resourceType: 'data_set_version',
    resourceId: `${version.data_set_id}@${number}`,
    parentId: version.data_set_id,
    payload: {
      dataSetId: version.data_set_id,
      dataSetTitle: version.title,
      version: {
        number,
        type: versionType(version),
        status: version.status,
        published: version.published_at?.toISOString() ?? null,
        withdrawn: version.withdrawn_at?.toISOString() ?? null,
        notes: version.notes,
      },
      changes: {
        versionNumber: number,
        notes: version.notes,
        majorChanges: sets.majorChanges,
        minorChanges: sets.minorChanges,
        patchHistory: [],
      },
      links: {
        meta: link(`${base}/meta?${at}`),
        changes: link(`${base}/versions/${encodeURIComponent(number)}/changes`),
        csv: link(`${base}/csv?${at}`),
        query: link(`${base}/query?${at}`, 'POST'),
      },
    },
  });
}

/** A data set event: it became public (its first published version), or it was deprecated or withdrawn. */
export async function appendDataSetEvent(
  trx: Executor,
  type: Extract<StatisticsEventType, `data_set.${string}`>,
  dataSetId: string,
) {
  const dataSet = await findDataSetForEvent(trx, dataSetId);
  return appendEvent(trx, {
    api: 'statistics',
    type,
    resourceType: 'data_set',
    resourceId: dataSet.id,
    payload: {
      dataSetId: dataSet.id,
      title: dataSet.title,
      summary: dataSet.summary,
      status: dataSet.status,
      publicationId: dataSet.publication_id,
      supersedingDataSetId: dataSet.superseding_data_set_id,
      links: {
        self: link(`${API}/data-sets/${dataSet.id}`),
        versions: link(`${API}/data-sets/${dataSet.id}/versions`),
      },
    },
  });
}

/** A statistics event as clients read it (feed, stream and webhook alike), in the API's camelCase. */
export function statisticsEventBody(event: StoredEvent, cursor: string): Record<string, unknown> {
  return {
    id: event.id,
    cursor,
    type: event.type,
    occurredAt: event.occurred_at.toISOString(),
    resource: {
      type: event.resource_type,
      id: event.resource_id,
      ...(event.parent_id ? { dataSetId: event.parent_id } : {}),
    },
    data: event.payload,
  };
}

/**
 * How the statistics events reach webhook subscribers (given to the event system by src/app.ts). A disabled
 * subscription appends no event: the statistics feed is public and would show the subscriber's URL.
 */
export const statisticsEventApi: EventApiAdapter = {
  webhookBody: (event, cursor) => statisticsEventBody(event, cursor),
};
