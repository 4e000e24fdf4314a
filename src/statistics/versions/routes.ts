import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { StatisticsApiOptions } from '../index.js';
import { sendCacheable } from '../cache-headers.js';
import { previewTokenOf } from '../preview-token.js';
import { statisticsRequestHook } from '../request-binding.js';
import {
  DataSetVersionChangesViewModel,
  DataSetVersionPaginatedListViewModel,
  DataSetVersionViewModel,
  errorResponses,
  okResponse,
} from '../schemas.js';
import {
  DataSetIdParams,
  DataSetVersionParams,
  NoQuery,
  notModified,
  PagedQuery,
  PreviewTokenHeaders,
} from '../route-params.js';
import { getVersion, getVersionChanges, listVersions } from './service.js';

const ChangesQuery = Type.Object(
  {
    includePatchHistory: Type.Optional(
      Type.Boolean({
        default: false,
        description: 'Also list the changes of the earlier patches of this minor version.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const versionRoutes: FastifyPluginAsync<StatisticsApiOptions> = async (plugin, options) => {
  const db = plugin.readDb;
  const summaries = options.shared.versionSummaries;
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const uuidDataSet = statisticsRequestHook({ uuidParams: ['dataSetId'] });

  app.get(
    '/data-sets/:dataSetId/versions',
    {
      preValidation: uuidDataSet,
      schema: {
        tags: ['Data sets'],
        operationId: 'ListDataSetVersions',
        summary: "List a data set's versions",
        description:
          'The Published, Deprecated and Withdrawn versions of a data set (and its draft, with a valid preview token), newest first.',
        params: DataSetIdParams,
        headers: PreviewTokenHeaders,
        querystring: PagedQuery,
        response: {
          200: okResponse(DataSetVersionPaginatedListViewModel, 'A page of version summaries.'),
          ...notModified,
          ...errorResponses([400, 403, 404]),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const body = await listVersions(
        db,
        summaries,
        request.params.dataSetId,
        { page: query.page ?? 1, pageSize: query.pageSize ?? 10 },
        previewTokenOf(request.headers),
      );
      return sendCacheable(request, reply, body);
    },
  );

  app.get(
    '/data-sets/:dataSetId/versions/:dataSetVersion',
    {
      preValidation: uuidDataSet,
      schema: {
        tags: ['Data sets'],
        operationId: 'GetDataSetVersion',
        summary: 'Get a data set version',
        description: 'One version, exact (`1.1`) or by wildcard (`1.*`: the latest Published version of major 1).',
        params: DataSetVersionParams,
        headers: PreviewTokenHeaders,
        querystring: NoQuery,
        response: {
          200: okResponse(DataSetVersionViewModel, 'The version summary.'),
          ...notModified,
          ...errorResponses([400, 403, 404]),
        },
      },
    },
    async (request, reply) => {
      const { dataSetId, dataSetVersion } = request.params;
      const body = await getVersion(db, summaries, dataSetId, dataSetVersion, previewTokenOf(request.headers));
      return sendCacheable(request, reply, body);
    },
  );

  app.get(
    '/data-sets/:dataSetId/versions/:dataSetVersion/changes',
    {
      preValidation: uuidDataSet,
      schema: {
        tags: ['Data sets'],
        operationId: 'GetDataSetVersionChanges',
        summary: "Get a data set version's changes",
        description:
          'The major and minor changes of a version relative to the version before it, optionally with its patch history.',
        params: DataSetVersionParams,
        headers: PreviewTokenHeaders,
        querystring: ChangesQuery,
        response: {
          200: okResponse(DataSetVersionChangesViewModel, 'The changes of the version.'),
          ...notModified,
          ...errorResponses([400, 403, 404]),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const body = await getVersionChanges(db, {
        dataSetId: request.params.dataSetId,
        dataSetVersion: request.params.dataSetVersion,
        includePatchHistory: query.includePatchHistory ?? false,
        previewToken: previewTokenOf(request.headers),
      });
      return sendCacheable(request, reply, body);
    },
  );
};
