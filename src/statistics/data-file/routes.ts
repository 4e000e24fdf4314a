import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { StatisticsApiOptions } from '../index.js';
import { ifNoneMatchMatches } from '../../http/conditional.js';
import { acceptsGzip, attachmentDisposition } from '../../http/downloads.js';
import { addVary } from '../../http/vary.js';
import { cacheControlFor } from '../cache-headers.js';
import { previewTokenOf } from '../preview-token.js';
import { statisticsRequestHook } from '../request-binding.js';
import { errorResponses } from '../schemas.js';
import { DataSetIdParams, DataSetVersionQueryParameter, notModified, PreviewTokenHeaders } from '../route-params.js';
import { openDataFileDownload } from './service.js';

const CsvQuery = Type.Object({ dataSetVersion: DataSetVersionQueryParameter }, { additionalProperties: false });

export const dataFileRoutes: FastifyPluginAsync<StatisticsApiOptions> = async (plugin) => {
  const db = plugin.readDb;
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();
  const uuidDataSet = statisticsRequestHook({ uuidParams: ['dataSetId'] });

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
      const query = request.query;
      const download = await openDataFileDownload(db, {
        dataSetId: request.params.dataSetId,
        dataSetVersion: query.dataSetVersion,
        previewToken: previewTokenOf(request.headers),
      });
      reply
        .header('etag', download.etag)
        .header('cache-control', cacheControlFor(request))
        .header('x-robots-tag', 'noindex');
      addVary(reply, 'Accept-Encoding', 'preview-token');
      if (ifNoneMatchMatches(request, download.etag)) return reply.code(304).send();
      reply.type('text/csv; charset=utf-8').header('content-disposition', attachmentDisposition(download.fileName));
      if (acceptsGzip(request.headers['accept-encoding'])) {
        return reply
          .header('content-encoding', 'gzip')
          .header('content-length', download.gzipBytes)
          .send(download.gzip());
      }
      return reply.send(
        download.csv((error) => request.log.warn({ err: error.message }, 'CSV download stream ended early')),
      );
    },
  );
};
