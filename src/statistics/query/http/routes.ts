import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import Negotiator from 'negotiator';
import { AppError, NotFoundError, ValidationError } from '../../../errors.js';
import { holdExportSlot } from '../../../plugins/streaming.js';
import { sendBody } from '../../../http/compression.js';
import type { StatisticsApiOptions } from '../../index.js';
import { isUuid } from '../../../validators.js';
import { cacheControlFor } from '../../cache-headers.js';
import { previewTokenOf } from '../../preview-token.js';
import type { QueryRequest } from '../engine/index.js';
import { ValidationMessages } from '../../errors.js';
import { parseGetQuery, type RawQuery } from './parse-get.js';
import { canonicalMemberNames, parsePostQuery } from './parse-post.js';
import { ARROW_STREAM_MEDIA_TYPE, PARQUET_MEDIA_TYPE, streamQueryColumnar } from './columnar-output.js';
import { DataSetQueryPaginatedList, DataSetQueryRequest, dataSetQueryParameters } from './contract.js';
import { errorResponses, okResponse, ref } from '../../schemas.js';
import { QueryService } from '../service.js';
import { sendQueryCsv } from './csv-response.js';

const ParamsSchema = Type.Object({ dataSetId: Type.String({ description: 'The data set id (a uuid).' }) });

const EXPORTS = `Every matching row (not one page), with labels: \`Accept: text/csv\` as CSV, \`Accept: ${PARQUET_MEDIA_TYPE}\` as a Parquet
file, \`Accept: ${ARROW_STREAM_MEDIA_TYPE}\` as an Arrow IPC stream (typed columns; see the guides). Any other \`Accept\` is a 406.`;

const DESCRIPTION_GET = `Queries a data set version. Criteria as query parameters: \`filters.eq|notEq|in|notIn\` (filter option ids),
\`geographicLevels.*\` (level codes), \`locations.*\` (\`{level}|{property}|{value}\`), \`timePeriods.eq|notEq|in|notIn|gt|gte|lt|lte\`
(\`{period}|{code}\`), \`indicators\`, \`sorts\` (\`{field}|{direction}\`), \`debug\`, \`page\`, \`pageSize\` (1–10000, default 1000),
\`dataSetVersion\`, \`labels\` (\`true\`: the label of every id in the page). Lists as repeated keys, \`key[0]=\` or comma-separated.
${EXPORTS}`;

const DESCRIPTION_POST = `Queries a data set version with a JSON body \`{criteria, indicators, sorts, debug, page, pageSize}\`; criteria nest
\`and\`, \`or\` and \`not\` (at most 32 levels and 1000 conditions). No body (or \`null\`) returns unfiltered results with all
indicators; \`"labels": true\` adds the label of every id in the page. ${EXPORTS}`;

/** What the query endpoints answer in, JSON first (what a wildcard `Accept`, or none, gets). */
const QUERY_MEDIA_TYPES = ['application/json', 'text/csv', PARQUET_MEDIA_TYPE, ARROW_STREAM_MEDIA_TYPE] as const;
type QueryMediaType = (typeof QUERY_MEDIA_TYPES)[number];

/**
 * The media type `Accept` prefers by its q-values (then by specificity and order); JSON without `Accept`. An `Accept`
 * that allows none of them is a 406 naming them.
 */
function negotiate(request: FastifyRequest): QueryMediaType {
  if (!request.headers.accept?.trim()) return 'application/json';
  const chosen = new Negotiator(request).mediaType([...QUERY_MEDIA_TYPES]) as QueryMediaType | undefined;
  if (!chosen) {
    throw new AppError(
      406,
      'Not Acceptable',
      `The query endpoints answer in ${QUERY_MEDIA_TYPES.join(', ')}; the Accept header allows none of them.`,
      {
        accepted: [...QUERY_MEDIA_TYPES],
      },
    );
  }
  return chosen;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The query as the reference's binding rules read it (set by the query routes' preValidation). */
    dataSetQuery: { dataSetVersion?: string; query: QueryRequest; labels: boolean } | null;
  }
}

/** Answers a query (bound by the route's preValidation) in the media type `Accept` asks for. */
async function answer(
  queries: QueryService,
  request: FastifyRequest,
  reply: FastifyReply,
  dataSetId: string,
  dataSetVersion: string | undefined,
) {
  const { query, labels } = request.dataSetQuery!;
  const mediaType = negotiate(request);
  const target = { dataSetId, dataSetVersion, previewToken: previewTokenOf(request.headers) };
  // An export's slot is taken before the first await and given back when the response closes, whenever that is.
  if (mediaType !== 'application/json') holdExportSlot(reply);
  reply.header('cache-control', cacheControlFor(request));
  if (mediaType === 'text/csv') return sendQueryCsv(reply, (csvOptions) => queries.csv(target, query, csvOptions));
  if (mediaType === PARQUET_MEDIA_TYPE)
    return streamQueryColumnar(reply, 'parquet', (exportOptions) => queries.exportRows(target, query, exportOptions));
  if (mediaType === ARROW_STREAM_MEDIA_TYPE)
    return streamQueryColumnar(reply, 'arrow', (exportOptions) => queries.exportRows(target, query, exportOptions));
  const { json, engine } = await queries.page(target, query, { labels });
  return sendBody(request, reply.header('x-query-engine', engine).type('application/json; charset=utf-8'), json);
}

/** Refuses a request whose Content-Length is over `bodyLimit`: a ValidationError (400) naming the limit. */
function refuseBodyOver(bodyLimit: number, request: FastifyRequest): void {
  const length = Number(request.headers['content-length'] ?? 0);
  if (length > bodyLimit) {
    throw new ValidationError([
      {
        path: '',
        code: 'MaximumLength',
        message: ValidationMessages.bodyTooLarge(bodyLimit),
        detail: { maxLength: bodyLimit, totalLength: length },
      },
    ]);
  }
}

/**
 * The version a POST query names in its query string (`dataSetVersion`, in any case; the first if repeated, none if
 * blank), the only parameter it may have: any other is an UnknownField error.
 */
function postDataSetVersion(raw: RawQuery): string | undefined {
  const versionKey = Object.keys(raw).find((key) => key.toLowerCase() === 'datasetversion');
  const unknown = Object.keys(raw).filter((key) => key !== versionKey);
  if (unknown.length > 0) {
    throw new ValidationError(
      unknown.map((key) => ({ path: key, code: 'UnknownField', message: ValidationMessages.UnknownField })),
    );
  }
  const versionParam = versionKey === undefined ? undefined : raw[versionKey];
  const dataSetVersion = Array.isArray(versionParam) ? versionParam[0] : versionParam;
  return dataSetVersion?.trim() ? dataSetVersion : undefined;
}

/** Endpoints 9 and 10: GET and POST /data-sets/{dataSetId}/query. */
export const queryRoutes: FastifyPluginAsync<StatisticsApiOptions> = async (app, options) => {
  app.decorateRequest('dataSetQuery', null);
  const bodyLimit = app.config.BODY_LIMIT_BYTES;
  // Its caches are shared by every prefix the API is served at (see StatisticsSharedState).
  const queries = new QueryService({
    db: app.readDb,
    versionMetas: options.shared.versionMetas,
    resolvedVersions: options.shared.resolvedVersions,
    engines: options.engines,
  });

  const responses = {
    200: okResponse(
      DataSetQueryPaginatedList,
      'A page of results (or, by `Accept`, every matching row as CSV, Parquet or an Arrow IPC stream).',
    ),
    ...errorResponses([400, 403, 404, 406]),
  };

  app.get<{ Params: { dataSetId: string } }>(
    '/data-sets/:dataSetId/query',
    {
      // The reference's binding rules first (its error bodies); the declared schema then checks what they bound.
      preValidation: async (request) => {
        const parsed = parseGetQuery(request.query as RawQuery);
        request.dataSetQuery = { dataSetVersion: parsed.dataSetVersion, query: parsed.request, labels: parsed.labels };
        request.query = parsed.parameters;
      },
      schema: {
        summary: 'Query a data set (GET)',
        tags: ['Query'],
        operationId: 'QueryDataSetGet',
        description: DESCRIPTION_GET,
        params: ParamsSchema,
        querystring: dataSetQueryParameters(),
        response: responses,
      },
    },
    async (request, reply) => {
      const { dataSetId } = request.params;
      if (!isUuid(dataSetId)) throw new NotFoundError(`No data set ${dataSetId}.`);
      return answer(queries, request, reply, dataSetId, request.dataSetQuery!.dataSetVersion);
    },
  );

  app.post<{ Params: { dataSetId: string } }>(
    '/data-sets/:dataSetId/query',
    {
      bodyLimit,
      // A body over the limit is a clear 400 before it is read (the reference has no limit).
      onRequest: async (request) => refuseBodyOver(bodyLimit, request),
      // The reference's binding rules first (its error bodies); the declared schema then checks the canonical body.
      preValidation: async (request) => {
        const body = canonicalMemberNames(request.body);
        request.dataSetQuery = parsePostQuery(body);
        // No body (or `null`) is an unfiltered query.
        request.body = body ?? null;
      },
      schema: {
        summary: 'Query a data set (POST)',
        tags: ['Query'],
        operationId: 'QueryDataSetPost',
        description: DESCRIPTION_POST,
        params: ParamsSchema,
        body: Type.Union([ref(DataSetQueryRequest), Type.Null()]),
        response: responses,
      },
    },
    async (request, reply) => {
      const { dataSetId } = request.params;
      if (!isUuid(dataSetId)) throw new NotFoundError(`No data set ${dataSetId}.`);
      return answer(queries, request, reply, dataSetId, postDataSetVersion(request.query as RawQuery));
    },
  );
};
