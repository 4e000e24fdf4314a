/** What every API's `GET …/events` route declares alike: its query parameters and how its stream form reads. */
import { Type } from '@sinclair/typebox';
import { FEED_PAGE_DEFAULT, FEED_PAGE_MAX } from './feed.js';

export const STREAM_DESCRIPTION =
  'With `Accept: text/event-stream` the same URL is a Server-Sent Events stream instead: each event is sent as ' +
  '`id: <cursor>`, `event: <type>`, `data: <event JSON>`; a reconnecting client sends `Last-Event-ID` (browsers do) ' +
  'and gets every event after it (a cursor beyond the newest event answers 400); a comment line is sent when idle (heartbeat). Without a cursor the stream starts ' +
  'at the newest event. Streams count against the per-client limits (429 beyond `EVENTS_STREAM_MAX_PER_CLIENT`; an ' +
  "IPv6 client by its /64) and the total (503; a share is kept for providers' authenticated streams), " +
  'and a client that stops reading is disconnected. A cursor older than the retention period answers 410: re-read ' +
  'the current state, then follow the feed again from its start.';

/** The feed's query string: `types` are the API's event types, `resource` says what its `resource` filter names. */
export function feedQuery(types: readonly string[], resource: string) {
  return Type.Object(
    {
      after: Type.Optional(
        Type.String({
          description:
            "The cursor to continue after (an event's `cursor`, or the page's next cursor). Omitted: from the oldest event kept.",
        }),
      ),
      type: Type.Optional(
        Type.String({ description: `Only these event types, comma-separated: ${types.join(', ')}.` }),
      ),
      resource: Type.Optional(Type.String({ description: resource })),
      limit: Type.Optional(
        Type.Integer({
          minimum: 1,
          maximum: FEED_PAGE_MAX,
          default: FEED_PAGE_DEFAULT,
          description: 'Events per page.',
        }),
      ),
    },
    { additionalProperties: false },
  );
}
