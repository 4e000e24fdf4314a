import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { StatisticsApiOptions } from '../index.js';
import { sendCacheable } from '../cache-headers.js';
import { previewTokenOf } from '../preview-token.js';
import { statisticsRequestHook } from '../request-binding.js';
import { DataSetMetaViewModel, errorResponses, okResponse } from '../schemas.js';
import { DataSetIdParams, DataSetVersionQueryParameter, notModified, PreviewTokenHeaders } from '../route-params.js';
import { getDataSetMeta, META_TYPES } from './service.js';

const MetaQuery = Type.Object(
  {
    types: Type.Optional(
      Type.Array(Type.Union(META_TYPES.map((t) => Type.Literal(t))), {
        description:
          'The sections of metadata to return (repeat the parameter or separate with commas). Omitted: all. Sections not asked for are empty arrays.',
      }),
    ),
    dataSetVersion: DataSetVersionQueryParameter,
  },
  { additionalProperties: false },
);

// The AllowedValue rule of the query hook reads `items.enum`; TypeBox writes a union of literals as anyOf.
(MetaQuery.properties.types as unknown as { items: Record<string, unknown> }).items.enum = [...META_TYPES];

export const metaRoutes: FastifyPluginAsync<StatisticsApiOptions> = async (plugin, options) => {
  const db = plugin.readDb;
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const uuidDataSet = statisticsRequestHook({ uuidParams: ['dataSetId'] });

  app.get(
    '/data-sets/:dataSetId/meta',
    {
      preValidation: uuidDataSet,
      schema: {
        tags: ['Data sets'],
        operationId: 'GetDataSetMeta',
        summary: "Get a data set version's metadata",
        description:
          'Filters, indicators, geographic levels, locations and time periods of a version: what a query can use.',
        params: DataSetIdParams,
        headers: PreviewTokenHeaders,
        querystring: MetaQuery,
        response: {
          200: okResponse(DataSetMetaViewModel, 'The metadata of the version.'),
          ...notModified,
          ...errorResponses([400, 403, 404]),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const body = await getDataSetMeta(db, options.shared, {
        dataSetId: request.params.dataSetId,
        dataSetVersion: query.dataSetVersion,
        previewToken: previewTokenOf(request.headers),
        types: query.types,
      });
      return sendCacheable(request, reply, body);
    },
  );
};
