/**
 * `GET /events` in each API's scope: `/v1/events` (public statistics events) and `/api/v{version}/events` (the
 * token's provider's register events in this instance's environment, in the version's field names).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { RegisterRouteOptions } from '../register/context.js';
import { errorResponses } from '../statistics/schemas.js';
import { statisticsRequestHook } from '../statistics/http.js';
import { FEED_PAGE_DEFAULT, FEED_PAGE_MAX, serveFeed } from './feed.js';
import { REGISTER_EVENT_TYPES, registerEventBody } from './register-events.js';
import { STATISTICS_EVENT_TYPES, statisticsEventBody } from './statistics-events.js';

const STREAM_DESCRIPTION =
  'With `Accept: text/event-stream` the same URL is a Server-Sent Events stream instead: each event is sent as ' +
  '`id: <cursor>`, `event: <type>`, `data: <event JSON>`; a reconnecting client sends `Last-Event-ID` (browsers do) ' +
  'and gets every event after it; a comment line is sent when idle (heartbeat). Without a cursor the stream starts ' +
  'at the newest event. Streams count against the per-client limits (429 beyond `EVENTS_STREAM_MAX_PER_CLIENT`), ' +
  'and a client that stops reading is disconnected. A cursor older than the retention period answers 410: re-read ' +
  'the current state, then follow the feed again from its start.';

function feedQuery(types: readonly string[], casing: 'camel' | 'snake') {
  return Type.Object(
    {
      after: Type.Optional(Type.String({ description: 'The cursor to continue after (an event\'s `cursor`, or the page\'s next cursor). Omitted: from the oldest event kept.' })),
      type: Type.Optional(Type.String({ description: `Only these event types, comma-separated: ${types.join(', ')}.` })),
      resource: Type.Optional(
        Type.String({ description: casing === 'camel' ? 'Only events of this data set (its id) or data set version (`<dataSetId>@<version>`).' : 'Only events of this trainee (its id; its placements and degrees included), placement or degree.' }),
      ),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FEED_PAGE_MAX, default: FEED_PAGE_DEFAULT, description: 'Events per page.' })),
    },
    { additionalProperties: false },
  );
}

const StatisticsEvent = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The event id (the `webhook-id` of its deliveries): de-duplicate on it.' }),
    cursor: Type.String({ description: 'Opaque; strictly increasing in commit order.' }),
    type: Type.Union(STATISTICS_EVENT_TYPES.map((t) => Type.Literal(t))),
    occurredAt: Type.String({ format: 'date-time' }),
    resource: Type.Object({ type: Type.String(), id: Type.String(), dataSetId: Type.Optional(Type.String()) }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'Version events: `dataSetId`, `dataSetTitle`, `version` (number, type Major/Minor/Patch, status, dates, notes), `changes` (as `GET …/versions/{v}/changes`) and `links` (meta, changes, csv, query).',
    }),
  },
  { $id: 'StatisticsEventViewModel' },
);

const StatisticsEventPage = Type.Object(
  {
    events: Type.Array(Type.Ref('StatisticsEventViewModel')),
    nextCursor: Type.String({ description: 'Pass as `after` for the next page (also when `events` is empty).' }),
    hasMore: Type.Boolean({ description: 'More events (possibly filtered out) follow now.' }),
  },
  { $id: 'StatisticsEventPageViewModel' },
);

const goneStatistics = {
  410: { description: 'Gone: the cursor is older than the retention period.', content: { 'application/problem+json': { schema: Type.Ref('ProblemDetailsViewModel') } } },
};

export const statisticsEventRoutes: FastifyPluginAsync = async (plugin) => {
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  app.addSchema(StatisticsEvent);
  app.addSchema(StatisticsEventPage);
  const query = feedQuery(STATISTICS_EVENT_TYPES, 'camel');
  app.get(
    '/events',
    {
      preValidation: statisticsRequestHook(),
      schema: {
        tags: ['Events'],
        operationId: 'ListEvents',
        summary: 'Follow changes to data sets',
        description: `Data set and version events in commit order: a page after the cursor, with the next cursor. ${STREAM_DESCRIPTION}`,
        querystring: query,
        response: {
          200: {
            description: 'A page of events (JSON), or the event stream (`text/event-stream`).',
            content: { 'application/json': { schema: Type.Ref('StatisticsEventPageViewModel') }, 'text/event-stream': { schema: Type.String() } },
          },
          ...goneStatistics,
          ...errorResponses([400]),
        },
      },
    },
    async (request, reply) =>
      serveFeed(request, reply, request.query, {
        scope: { api: 'statistics' },
        types: STATISTICS_EVENT_TYPES,
        render: statisticsEventBody,
        page: (events, nextCursor, hasMore) => ({ events, nextCursor, hasMore }),
        client: `statistics:ip:${request.ip}`,
      }, app.events),
  );
};

export const registerEventRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (plugin, options) => {
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const { version } = options;
  app.get(
    '/events',
    { schema: { hide: true, querystring: feedQuery(REGISTER_EVENT_TYPES, 'snake') } },
    async (request, reply) => {
      const { provider, environment } = request.registerContext;
      return serveFeed(request, reply, request.query, {
        scope: { api: 'register', providerId: provider.id, environment },
        types: REGISTER_EVENT_TYPES,
        render: (event, cursor) => registerEventBody(event, version, cursor),
        page: (data, next_cursor, has_more) => ({ data, meta: { next_cursor, has_more } }),
        client: `register:provider:${provider.id}`,
      }, app.events);
    },
  );
};
