import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { StatisticsApiOptions } from '../index.js';
import { sendCacheable } from '../cache-headers.js';
import { pagingParameters } from '../paging.js';
import { statisticsRequestHook } from '../request-binding.js';
import {
  errorResponses,
  okResponse,
  PublicationPaginatedListViewModel,
  PublicationSummaryViewModel,
} from '../schemas.js';
import { NoQuery, notModified, PublicationIdParams } from '../route-params.js';
import { getPublication, listPublications } from './service.js';

const PublicationListQuery = Type.Object(
  {
    search: Type.Optional(
      Type.String({
        minLength: 3,
        description: 'Words to search publication titles and summaries for (at least 3 characters).',
      }),
    ),
    ...pagingParameters(20, 40),
  },
  { additionalProperties: false },
);

export const publicationRoutes: FastifyPluginAsync<StatisticsApiOptions> = async (plugin) => {
  const db = plugin.readDb;
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const uuidPublication = statisticsRequestHook({ uuidParams: ['publicationId'] });
  const queryOnly = statisticsRequestHook();

  app.get(
    '/publications',
    {
      preValidation: queryOnly,
      schema: {
        tags: ['Publications'],
        operationId: 'ListPublications',
        summary: 'List publications',
        description:
          'Publications that have at least one published data set. With `search`, ranked by relevance (full text over title and summary); without, by title.',
        querystring: PublicationListQuery,
        response: {
          200: okResponse(PublicationPaginatedListViewModel, 'A page of publication summaries.'),
          ...notModified,
          ...errorResponses([400]),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const body = await listPublications(db, {
        search: query.search,
        page: query.page ?? 1,
        pageSize: query.pageSize ?? 20,
      });
      return sendCacheable(request, reply, body);
    },
  );

  app.get(
    '/publications/:publicationId',
    {
      preValidation: uuidPublication,
      schema: {
        tags: ['Publications'],
        operationId: 'GetPublication',
        summary: 'Get a publication',
        description: 'The summary of one publication. 404 when it has no published data set.',
        params: PublicationIdParams,
        querystring: NoQuery,
        response: {
          200: okResponse(PublicationSummaryViewModel, 'The publication summary.'),
          ...notModified,
          ...errorResponses([400, 404]),
        },
      },
    },
    async (request, reply) => sendCacheable(request, reply, await getPublication(db, request.params.publicationId)),
  );
};
