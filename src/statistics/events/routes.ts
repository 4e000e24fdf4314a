/**
 * `GET /v1/events`: the public statistics events (the feed and stream themselves: src/events/feed.ts; the register's
 * `/events`: src/register/events/routes.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { serveFeed } from '../../events/feed.js';
import { anonymousClient } from '../../plugins/streaming.js';
import { feedQuery, STREAM_DESCRIPTION } from '../../events/feed-schema.js';
import { errorResponses } from '../schemas.js';
import { statisticsRequestHook } from '../request-binding.js';
import { STATISTICS_EVENT_TYPES, statisticsEventBody } from './service.js';

const RESOURCE = 'Only events of this data set (its id) or data set version (`<dataSetId>@<version>`).';

const StatisticsEvent = Type.Object(
  {
    id: Type.String({
      format: 'uuid',
      description: 'The event id (the `webhook-id` of its deliveries): de-duplicate on it.',
    }),
    cursor: Type.String({ description: 'Opaque; strictly increasing in commit order.' }),
    type: Type.Union(STATISTICS_EVENT_TYPES.map((t) => Type.Literal(t))),
    occurredAt: Type.String({ format: 'date-time' }),
    resource: Type.Object({ type: Type.String(), id: Type.String(), dataSetId: Type.Optional(Type.String()) }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Version events: `dataSetId`, `dataSetTitle`, `version` (number, type Major/Minor/Patch, status, dates, notes), `changes` (as `GET …/versions/{v}/changes`) and `links` (meta, changes, csv, query).',
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
  410: {
    description: 'Gone: the cursor is older than the retention period.',
    content: { 'application/problem+json': { schema: Type.Ref('ProblemDetailsViewModel') } },
  },
};

export const statisticsEventRoutes: FastifyPluginAsync = async (plugin) => {
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  app.addSchema(StatisticsEvent);
  app.addSchema(StatisticsEventPage);
  const query = feedQuery(STATISTICS_EVENT_TYPES, RESOURCE);
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
            content: {
              'application/json': { schema: Type.Ref('StatisticsEventPageViewModel') },
              'text/event-stream': { schema: Type.String() },
            },
          },
          ...goneStatistics,
          ...errorResponses([400]),
        },
      },
    },
    async (request, reply) =>
      serveFeed(
        request,
        reply,
        request.query,
        {
          scope: { api: 'statistics' },
          types: STATISTICS_EVENT_TYPES,
          render: statisticsEventBody,
          page: (events, nextCursor, hasMore) => ({ events, nextCursor, hasMore }),
          client: anonymousClient(request.ip),
        },
        app.events,
      ),
  );
};
