/** A data set's change events (`/v1/events?resource=<id>`) in words, for the data set page. */
export interface DataSetEvent {
  id: string;
  type: string;
  occurredAt: string;
  data: { version?: { number: string; type: string } };
}

/** One line per event, e.g. "Version 1.1 published (minor version)". */
export function eventInWords(event: DataSetEvent): string {
  const version = event.data.version;
  switch (event.type) {
    case 'data_set_version.published':
      return `Version ${version?.number} published (${version?.type.toLowerCase()} version)`;
    case 'data_set_version.deprecated':
      return `Version ${version?.number} deprecated`;
    case 'data_set_version.withdrawn':
      return `Version ${version?.number} withdrawn`;
    case 'data_set.created':
      return 'Data set published';
    case 'data_set.deprecated':
      return 'Data set deprecated';
    case 'data_set.withdrawn':
      return 'Data set withdrawn';
    default:
      return event.type;
  }
}

/**
 * A change-log line. The event's own date is when this service recorded it (for a seeded catalogue, the day it was
 * seeded), which is not the statistics' publication date: a version's line gives that date, and says which is which.
 */
export function eventLine(
  event: DataSetEvent,
  publishedOn: (version: string) => string | undefined,
  formatDate: (iso: string) => string,
): string {
  const published =
    event.type === 'data_set_version.published' && event.data.version
      ? publishedOn(event.data.version.number)
      : undefined;
  const recorded = `recorded in the event feed on ${formatDate(event.occurredAt)}`;
  return published
    ? `${eventInWords(event)} on ${formatDate(published)} (${recorded})`
    : `${eventInWords(event)} (${recorded})`;
}

/** The data set's events, newest first: follows the feed's pages (at most `maxPages`, each a bounded read). */
export async function dataSetEvents(
  get: <T>(path: string) => Promise<T>,
  dataSetId: string,
  maxPages = 10,
): Promise<DataSetEvent[]> {
  const events: DataSetEvent[] = [];
  let after = '';
  for (let page = 0; page < maxPages; page++) {
    const body = await get<{ events: DataSetEvent[]; nextCursor: string; hasMore: boolean }>(
      `/v1/events?resource=${encodeURIComponent(dataSetId)}&limit=500${after ? `&after=${encodeURIComponent(after)}` : ''}`,
    );
    events.push(...body.events);
    after = body.nextCursor;
    if (!body.hasMore) break;
  }
  return events.reverse();
}
