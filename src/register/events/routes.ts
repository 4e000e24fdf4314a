/**
 * `GET /api/v{version}/events`: the token's provider's register events in this instance's environment, in the
 * version's field names (the feed and stream themselves: src/events/feed.ts).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { serveFeed } from '../../events/feed.js';
import { feedQuery } from '../../events/feed-schema.js';
import type { RegisterRouteOptions } from '../context.js';
import { REGISTER_EVENT_TYPES, registerEventBody } from './service.js';

const RESOURCE = 'Only events of this trainee (its id; its placements and degrees included), placement or degree.';

export const registerEventRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (plugin, options) => {
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const { version } = options;
  app.get(
    '/events',
    { schema: { hide: true, querystring: feedQuery(REGISTER_EVENT_TYPES, RESOURCE) } },
    async (request, reply) => {
      const { provider, environment } = request.registerContext;
      return serveFeed(
        request,
        reply,
        request.query,
        {
          scope: { api: 'register', providerId: provider.id, environment },
          types: REGISTER_EVENT_TYPES,
          render: (event, cursor) => registerEventBody(event, version, cursor),
          page: (data, next_cursor, has_more) => ({ data, meta: { next_cursor, has_more } }),
          client: { key: `provider:${provider.id}`, authenticated: true },
        },
        app.events,
      );
    },
  );
};
