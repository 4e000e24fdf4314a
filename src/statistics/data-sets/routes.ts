import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { StatisticsApiOptions } from '../index.js';
import { sendCacheable } from '../cache-headers.js';
import { previewTokenOf } from '../preview-token.js';
import { statisticsRequestHook } from '../request-binding.js';
import { DataSetPaginatedListViewModel, DataSetViewModel, errorResponses, okResponse } from '../schemas.js';
import {
  DataSetIdParams,
  NoQuery,
  notModified,
  PagedQuery,
  PreviewTokenHeaders,
  PublicationIdParams,
} from '../route-params.js';
import { getDataSet, listPublicationDataSets } from './service.js';

export const dataSetRoutes: FastifyPluginAsync<StatisticsApiOptions> = async (plugin, options) => {
  const db = plugin.readDb;
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const uuidPublication = statisticsRequestHook({ uuidParams: ['publicationId'] });
  const uuidDataSet = statisticsRequestHook({ uuidParams: ['dataSetId'] });

  app.get(
    '/publications/:publicationId/data-sets',
    {
      preValidation: uuidPublication,
      schema: {
        tags: ['Publications'],
        operationId: 'ListPublicationDataSets',
        summary: "List a publication's data sets",
        description:
          'The Published and Deprecated data sets of a publication, most recently published first (an unknown publication has none).',
        params: PublicationIdParams,
        querystring: PagedQuery,
        response: {
          200: okResponse(DataSetPaginatedListViewModel, 'A page of data set summaries.'),
          ...notModified,
          ...errorResponses([400, 404]),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const body = await listPublicationDataSets(db, options.shared.versionSummaries, request.params.publicationId, {
        page: query.page ?? 1,
        pageSize: query.pageSize ?? 10,
      });
      return sendCacheable(request, reply, body);
    },
  );

  app.get(
    '/data-sets/:dataSetId',
    {
      preValidation: uuidDataSet,
      schema: {
        tags: ['Data sets'],
        operationId: 'GetDataSet',
        summary: 'Get a data set',
        description:
          'The summary of a data set with its latest published version. 403 for Draft and Withdrawn data sets without a valid preview token.',
        params: DataSetIdParams,
        headers: PreviewTokenHeaders,
        querystring: NoQuery,
        response: {
          200: okResponse(DataSetViewModel, 'The data set summary.'),
          ...notModified,
          ...errorResponses([400, 403, 404]),
        },
      },
    },
    async (request, reply) =>
      sendCacheable(
        request,
        reply,
        await getDataSet(
          db,
          options.shared.versionSummaries,
          request.params.dataSetId,
          previewTokenOf(request.headers),
        ),
      ),
  );
};
