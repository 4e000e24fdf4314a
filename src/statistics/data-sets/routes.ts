import { createGunzip } from 'node:zlib';
import { pipeline } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { StatisticsApiOptions } from '../index.js';
import {
  addVary,
  cacheControlFor,
  ifNoneMatchMatches,
  pagingParameters,
  sendCacheable,
  statisticsRequestHook,
  weakEtag,
} from '../http.js';
import {
  DataSetMetaViewModel,
  DataSetPaginatedListViewModel,
  DataSetVersionChangesViewModel,
  DataSetVersionPaginatedListViewModel,
  DataSetVersionViewModel,
  DataSetViewModel,
  errorResponses,
  PublicationPaginatedListViewModel,
  PublicationSummaryViewModel,
  okResponse,
} from '../schemas.js';
import { previewTokenOf, resolveDataSetVersion } from '../versions/access.js';
import { getPublication, listPublications } from '../publications/service.js';
import { getDataSet, getVersion, listPublicationDataSets, listVersions } from './service.js';
import { getVersionChanges } from '../versions/service.js';
import { loadDataSetMetaView, META_TYPES, type MetaType } from '../meta/service.js';
import { acceptsGzip, csvFileName, findStoredCsv, streamStoredCsvGzip } from '../data-file/service.js';

/** Endpoints 1–8 and 11: publications, data sets, versions, changes, meta, CSV download. */

const PublicationIdParams = Type.Object({
  publicationId: Type.String({ format: 'uuid', description: 'The id of the publication.' }),
});
const DataSetIdParams = Type.Object({
  dataSetId: Type.String({ format: 'uuid', description: 'The id of the data set.' }),
});
const DataSetVersionParams = Type.Object({
  dataSetId: Type.String({ format: 'uuid', description: 'The id of the data set.' }),
  dataSetVersion: Type.String({
    description:
      'A version number such as `1.0`, `1.1` or `2.1.1`, or a wildcard such as `2.*`, `1.2.*` or `*` (the latest Published version in that range).',
    examples: ['1.0', '2.*'],
  }),
});
const PreviewTokenHeaders = Type.Object({
  'preview-token': Type.Optional(
    Type.String({ description: 'A preview token (uuid) that grants access to a draft version while it is active.' }),
  ),
});
const NoQuery = Type.Object({}, { additionalProperties: false });

const DataSetVersionQueryParameter = Type.Optional(
  Type.String({
    description:
      'The version to use: a version number such as `1.0`, or a wildcard such as `2.*`. Omitted (or `*`): the latest published version.',
  }),
);

const PublicationListQuery = Type.Object(
  {
    search: Type.Optional(Type.String({ minLength: 3, description: 'Words to search publication titles and summaries for (at least 3 characters).' })),
    ...pagingParameters(20, 40),
  },
  { additionalProperties: false },
);
const PagedQuery = Type.Object({ ...pagingParameters(10, 20) }, { additionalProperties: false });
const ChangesQuery = Type.Object(
  {
    includePatchHistory: Type.Optional(
      Type.Boolean({ default: false, description: 'Also list the changes of the earlier patches of this minor version.' }),
    ),
  },
  { additionalProperties: false },
);
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
const CsvQuery = Type.Object({ dataSetVersion: DataSetVersionQueryParameter }, { additionalProperties: false });

// The AllowedValue rule of the query hook reads `items.enum`; TypeBox writes a union of literals as anyOf.
(MetaQuery.properties.types as unknown as { items: Record<string, unknown> }).items.enum = [...META_TYPES];

const notModified = { 304: Type.Null({ description: 'Not Modified: the `If-None-Match` ETag is current.' }) };

export const catalogueRoutes: FastifyPluginAsync<StatisticsApiOptions> = async (plugin) => {
  const db = plugin.readDb;
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const uuidPublication = statisticsRequestHook({ uuidParams: ['publicationId'] });
  const uuidDataSet = statisticsRequestHook({ uuidParams: ['dataSetId'] });
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
        response: { 200: okResponse(PublicationPaginatedListViewModel, 'A page of publication summaries.'), ...notModified, ...errorResponses([400]) },
      },
    },
    async (request, reply) => {
      const query = request.query as Static<typeof PublicationListQuery>;
      const body = await listPublications(db, { search: query.search, page: query.page ?? 1, pageSize: query.pageSize ?? 20 });
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
        response: { 200: okResponse(PublicationSummaryViewModel, 'The publication summary.'), ...notModified, ...errorResponses([400, 404]) },
      },
    },
    async (request, reply) => sendCacheable(request, reply, await getPublication(db, request.params.publicationId)),
  );

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
        response: { 200: okResponse(DataSetPaginatedListViewModel, 'A page of data set summaries.'), ...notModified, ...errorResponses([400, 404]) },
      },
    },
    async (request, reply) => {
      const query = request.query as Static<typeof PagedQuery>;
      const body = await listPublicationDataSets(db, request.params.publicationId, { page: query.page ?? 1, pageSize: query.pageSize ?? 10 });
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
        description: 'The summary of a data set with its latest published version. 403 for Draft and Withdrawn data sets without a valid preview token.',
        params: DataSetIdParams,
        headers: PreviewTokenHeaders,
        querystring: NoQuery,
        response: { 200: okResponse(DataSetViewModel, 'The data set summary.'), ...notModified, ...errorResponses([400, 403, 404]) },
      },
    },
    async (request, reply) =>
      sendCacheable(request, reply, await getDataSet(db, request.params.dataSetId, previewTokenOf(request.headers))),
  );

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
        response: { 200: okResponse(DataSetVersionPaginatedListViewModel, 'A page of version summaries.'), ...notModified, ...errorResponses([400, 403, 404]) },
      },
    },
    async (request, reply) => {
      const query = request.query as Static<typeof PagedQuery>;
      const body = await listVersions(
        db,
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
        response: { 200: okResponse(DataSetVersionViewModel, 'The version summary.'), ...notModified, ...errorResponses([400, 403, 404]) },
      },
    },
    async (request, reply) =>
      sendCacheable(
        request,
        reply,
        await getVersion(db, request.params.dataSetId, request.params.dataSetVersion, previewTokenOf(request.headers)),
      ),
  );

  app.get(
    '/data-sets/:dataSetId/versions/:dataSetVersion/changes',
    {
      preValidation: uuidDataSet,
      schema: {
        tags: ['Data sets'],
        operationId: 'GetDataSetVersionChanges',
        summary: "Get a data set version's changes",
        description: 'The major and minor changes of a version relative to the version before it, optionally with its patch history.',
        params: DataSetVersionParams,
        headers: PreviewTokenHeaders,
        querystring: ChangesQuery,
        response: { 200: okResponse(DataSetVersionChangesViewModel, 'The changes of the version.'), ...notModified, ...errorResponses([400, 403, 404]) },
      },
    },
    async (request, reply) => {
      const query = request.query as Static<typeof ChangesQuery>;
      const body = await getVersionChanges(db, {
        dataSetId: request.params.dataSetId,
        dataSetVersion: request.params.dataSetVersion,
        includePatchHistory: query.includePatchHistory ?? false,
        previewToken: previewTokenOf(request.headers),
      });
      return sendCacheable(request, reply, body);
    },
  );

  app.get(
    '/data-sets/:dataSetId/meta',
    {
      preValidation: uuidDataSet,
      schema: {
        tags: ['Data sets'],
        operationId: 'GetDataSetMeta',
        summary: "Get a data set version's metadata",
        description: 'Filters, indicators, geographic levels, locations and time periods of a version: what a query can use.',
        params: DataSetIdParams,
        headers: PreviewTokenHeaders,
        querystring: MetaQuery,
        response: { 200: okResponse(DataSetMetaViewModel, 'The metadata of the version.'), ...notModified, ...errorResponses([400, 403, 404]) },
      },
    },
    async (request, reply) => {
      const query = request.query as { types?: MetaType[]; dataSetVersion?: string };
      const { version } = await resolveDataSetVersion(db, {
        dataSetId: request.params.dataSetId,
        dataSetVersion: query.dataSetVersion,
        previewToken: previewTokenOf(request.headers),
        policy: 'view',
      });
      return sendCacheable(request, reply, await loadDataSetMetaView(db, version.id, query.types));
    },
  );

  app.get(
    '/data-sets/:dataSetId/csv',
    {
      preValidation: uuidDataSet,
      schema: {
        tags: ['Data sets'],
        operationId: 'DownloadDataSetCsv',
        summary: 'Download a data set version as CSV',
        description:
          'The data file of a version with human-readable labels (not ids), streamed; gzip-encoded when the client accepts gzip. ' +
          'The CSV is not covered by the backward-compatibility guarantee of the JSON representations.',
        params: DataSetIdParams,
        headers: PreviewTokenHeaders,
        querystring: CsvQuery,
        produces: ['text/csv'],
        response: {
          200: {
            description: 'The CSV file (`Content-Disposition: attachment; filename={dataSetId}_v{version}.csv`).',
            content: { 'text/csv': { schema: { type: 'string' } } },
          },
          ...notModified,
          ...errorResponses([400, 403, 404]),
        },
      },
    },
    async (request, reply) => {
      const query = request.query as Static<typeof CsvQuery>;
      const resolved = await resolveDataSetVersion(db, {
        dataSetId: request.params.dataSetId,
        dataSetVersion: query.dataSetVersion,
        previewToken: previewTokenOf(request.headers),
        policy: 'view',
      });
      const file = await findStoredCsv(db, resolved.version.id);
      const etag = weakEtag('csv', resolved.version.id, resolved.version.file_id, file.gzipBytes);
      const fileName = csvFileName(resolved.dataSet.id, resolved.versionNumber);
      reply
        .header('etag', etag)
        .header('cache-control', cacheControlFor(request))
        .header('x-robots-tag', 'noindex');
      addVary(reply, 'Accept-Encoding', 'preview-token');
      if (ifNoneMatchMatches(request, etag)) return reply.code(304).send();
      reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename=${fileName}; filename*=UTF-8''${encodeURIComponent(fileName)}`);
      const gzip = streamStoredCsvGzip(db, file);
      if (acceptsGzip(request.headers['accept-encoding'])) {
        return reply.header('content-encoding', 'gzip').header('content-length', file.gzipBytes).send(gzip);
      }
      const gunzip = createGunzip();
      pipeline(gzip, gunzip, (error) => {
        if (error) request.log.warn({ err: error.message }, 'CSV download stream ended early');
      });
      return reply.send(gunzip);
    },
  );
};
