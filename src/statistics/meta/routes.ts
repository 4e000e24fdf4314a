import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { StatisticsApiOptions } from '../index.js';
import { cacheControlFor } from '../cache-headers.js';
import { sendPrecompressed } from '../../http/precompressed.js';
import { previewTokenOf } from '../preview-token.js';
import { statisticsRequestHook } from '../request-binding.js';
import { DataSetMetaViewModel, errorResponses, okResponse } from '../schemas.js';
import { DataSetIdParams, DataSetVersionQueryParameter, notModified, PreviewTokenHeaders } from '../route-params.js';
import { META_TYPES, resolveMetaVersion } from './service.js';

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

/** Memory budget of the meta answers kept serialized and compressed by one app (StatisticsSharedState.metaBodies). */
export const META_BODY_CACHE_BYTES = 32 * 1024 * 1024;

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
      const { types, dataSetVersion } = request.query;
      const { metaViews, metaBodies } = options.shared;
      const version = await resolveMetaVersion(db, options.shared, {
        dataSetId: request.params.dataSetId,
        dataSetVersion,
        previewToken: previewTokenOf(request.headers),
      });
      // A version's meta never changes: its body is made once per version and set of sections asked for.
      const sections = [...new Set(types ?? [])].sort().join(',');
      const body = await metaBodies.fetch(`${version.id}:${sections}`, async () =>
        reply.serialize(await metaViews.load(db, version.id, types)),
      );
      return sendPrecompressed(request, reply, body, {
        cacheControl: cacheControlFor(request),
        vary: ['preview-token'],
      });
    },
  );
};
