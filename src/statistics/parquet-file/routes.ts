import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { StatisticsApiOptions } from '../index.js';
import { addVary } from '../../http/vary.js';
import { attachmentDisposition } from '../../http/downloads.js';
import { ifNoneMatchMatches } from '../../http/conditional.js';
import { cacheControlFor } from '../cache-headers.js';
import { previewTokenOf } from '../preview-token.js';
import { statisticsRequestHook } from '../request-binding.js';
import { errorResponses, ProblemDetailsViewModel } from '../schemas.js';
import { DataSetIdParams, DataSetVersionQueryParameter, notModified, PreviewTokenHeaders } from '../route-params.js';
import { RangeNotSatisfiableError } from '../../errors.js';
import { PARQUET_MEDIA_TYPE } from '../storage/parquet-copy.js';
import { openParquetDownload } from './service.js';

const ParquetQuery = Type.Object({ dataSetVersion: DataSetVersionQueryParameter }, { additionalProperties: false });
const ParquetHeaders = Type.Object({
  ...PreviewTokenHeaders.properties,
  range: Type.Optional(
    Type.String({
      description:
        'One byte range, `bytes=first-last`, `bytes=first-` or `bytes=-suffix` (answered 206). Several ranges are answered 200 with the whole file.',
    }),
  ),
  'if-range': Type.Optional(
    Type.String({
      description:
        "The file's ETag: the range is sent only while the file is still this one (else the whole file, 200).",
    }),
  ),
});

export const parquetFileRoutes: FastifyPluginAsync<StatisticsApiOptions> = async (plugin) => {
  const db = plugin.readDb;
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const uuidDataSet = statisticsRequestHook({ uuidParams: ['dataSetId'] });

  app.get(
    '/data-sets/:dataSetId/parquet',
    {
      preValidation: uuidDataSet,
      // Parquet is compressed already, and a range is of the stored bytes.
      compress: false,
      schema: {
        tags: ['Data sets'],
        operationId: 'DownloadDataSetParquet',
        summary: 'Download a data set version as Parquet',
        description:
          'Every row of a version as one Parquet file (snappy; copies written before 30 November 2026 zstd; row groups of 131,072 rows, column statistics), in the default result order: ' +
          '`row_id`, `time_period`, `time_identifier`, `geographic_level`, per location level `<level>_id` (public id), `<level>_name`, `<level>_code`, ' +
          'a column per filter (option labels) and two per indicator: the number (`DOUBLE`, null where the cell is not a number) and `<indicator>__text` ' +
          "(the cell as published where it is not exactly the number: `c`, `x`, `z`, `low`, `1.50`). Readers such as DuckDB, R's arrow and polars fetch " +
          'only the row groups and columns they need: the file is served with `Accept-Ranges: bytes` and answers one `Range` with 206. ' +
          'Not covered by the backward-compatibility guarantee of the JSON representations.',
        params: DataSetIdParams,
        headers: ParquetHeaders,
        querystring: ParquetQuery,
        produces: [PARQUET_MEDIA_TYPE],
        response: {
          200: {
            description:
              'The Parquet file (`Content-Disposition: attachment; filename={dataSetId}_v{version}.parquet`).',
            content: { [PARQUET_MEDIA_TYPE]: { schema: { type: 'string', format: 'binary' } } },
          },
          206: {
            description: 'Partial Content: the one byte range asked for (`Content-Range: bytes first-last/size`).',
            content: { [PARQUET_MEDIA_TYPE]: { schema: { type: 'string', format: 'binary' } } },
          },
          ...notModified,
          ...errorResponses([400, 403, 404]),
          416: {
            description:
              'Range Not Satisfiable: the range starts past the end of the file (`Content-Range: bytes */size`).',
            content: { 'application/problem+json': { schema: Type.Ref(ProblemDetailsViewModel.$id!) } },
          },
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const download = await openParquetDownload(db, {
        dataSetId: request.params.dataSetId,
        dataSetVersion: query.dataSetVersion,
        previewToken: previewTokenOf(request.headers),
      });
      reply
        .header('etag', download.etag)
        .header('cache-control', cacheControlFor(request))
        .header('accept-ranges', 'bytes')
        .header('x-robots-tag', 'noindex');
      addVary(reply, 'preview-token');
      if (ifNoneMatchMatches(request, download.etag)) return reply.code(304).send();
      const range = request.headers.range;
      const ifRange = request.headers['if-range'];
      let response;
      try {
        response = download.respond(range, ifRange);
      } catch (error) {
        if (error instanceof RangeNotSatisfiableError) reply.header('content-range', `bytes */${error.size}`);
        throw error;
      }
      reply
        .code(response.status)
        .type(PARQUET_MEDIA_TYPE)
        .header('content-disposition', attachmentDisposition(download.fileName))
        .header('content-length', response.length);
      if (response.contentRange) reply.header('content-range', response.contentRange);
      return reply.send(response.body());
    },
  );
};
