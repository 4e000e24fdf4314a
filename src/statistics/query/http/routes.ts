import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import Negotiator from 'negotiator';
import { NotFoundError, ValidationError } from '../../../errors.js';
import { holdExportSlot } from '../../../plugins/streaming.js';
import type { StatisticsApiOptions } from '../../index.js';
import { isUuid } from '../../../validators.js';
import { cacheControlFor } from '../../cache-headers.js';
import { previewTokenOf } from '../../preview-token.js';
import type { QueryRequest } from '../engine/index.js';
import { ValidationMessages } from '../../errors.js';
import { parseGetQuery, type RawQuery } from './parse-get.js';
import { canonicalMemberNames, parsePostBody } from './parse-post.js';
import { DataSetQueryPaginatedList, DataSetQueryRequest, dataSetQueryParameters } from './contract.js';
import { errorResponses, okResponse, ref } from '../../schemas.js';
import { QueryService } from '../service.js';
import { sendQueryCsv } from './csv-response.js';

const ParamsSchema = Type.Object({ dataSetId: Type.String({ description: 'The data set id (a uuid).' }) });

const DESCRIPTION_GET = `Parameters: \`filters.eq|notEq|in|notIn\` (filter option ids),
\`geographicLevels.*\` (level codes), \`locations.*\` (\`{level}|{property}|{value}\`), \`timePeriods.eq|notEq|in|notIn|gt|gte|lt|lte\`
(\`{period}|{code}\`), \`indicators\`, \`sorts\` (\`{field}|{direction}\`), \`debug\`, \`page\`, \`pageSize\` (1–10000, default 1000),
\`dataSetVersion\`. Lists as repeated keys, \`key[0]=\` or comma-separated. A location matches every row that lies in it, at any
level (England: every row): add \`geographicLevels\` for one level's rows. \`Accept: text/csv\` streams every matching row as CSV.`;

const DESCRIPTION_POST = `The body: \`{criteria, indicators, sorts, debug, page, pageSize}\`; criteria nest
\`and\`, \`or\` and \`not\` (at most 32 levels and 1000 conditions). No body (or \`null\`) returns unfiltered results with all
indicators. \`Accept: text/csv\` streams every matching row as CSV.`;

/** CSV when `Accept` prefers it to JSON by its q-values (then by specificity and order); JSON otherwise. */
function wantsCsv(request: FastifyRequest): boolean {
  if (!request.headers.accept) return false;
  return new Negotiator(request).mediaType(['application/json', 'text/csv']) === 'text/csv';
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The query as the reference's binding rules read it (set by the query routes' preValidation). */
    dataSetQuery: { dataSetVersion?: string; query: QueryRequest } | null;
  }
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

  async function answer(request: FastifyRequest, reply: FastifyReply, dataSetId: string, dataSetVersion: string | undefined, query: QueryRequest) {
    const target = { dataSetId, dataSetVersion, previewToken: previewTokenOf(request.headers) };
    const csv = wantsCsv(request);
    // An export's slot is taken before the first await and given back when the response closes, whenever that is.
    if (csv) holdExportSlot(reply);
    reply.header('cache-control', cacheControlFor(request));
    if (csv) return sendQueryCsv(reply, (csvOptions) => queries.csv(target, query, csvOptions));
    const { json, engine } = await queries.page(target, query);
    return reply.header('x-query-engine', engine).type('application/json; charset=utf-8').send(json);
  }

  const responses = {
    200: okResponse(DataSetQueryPaginatedList, 'A page of results (or, with `Accept: text/csv`, every matching row as CSV).'),
    ...errorResponses([400, 403, 404]),
  };

  app.get<{ Params: { dataSetId: string } }>(
    '/data-sets/:dataSetId/query',
    {
      // The reference's binding rules first (its error bodies); the declared schema then checks what they bound.
      preValidation: async (request) => {
        const parsed = parseGetQuery(request.query as RawQuery);
        request.dataSetQuery = { dataSetVersion: parsed.dataSetVersion, query: parsed.request };
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
      const { dataSetVersion, query } = request.dataSetQuery!;
      return answer(request, reply, dataSetId, dataSetVersion, query);
    },
  );

  app.post<{ Params: { dataSetId: string } }>(
    '/data-sets/:dataSetId/query',
    {
      bodyLimit,
      // A body over the limit is a clear 400 before it is read (the reference has no limit).
      onRequest: async (request) => {
        const length = Number(request.headers['content-length'] ?? 0);
        if (length > bodyLimit) {
          throw new ValidationError([{ path: '', code: 'MaximumLength', message: ValidationMessages.bodyTooLarge(bodyLimit), detail: { maxLength: bodyLimit, totalLength: length } }]);
        }
      },
      // The reference's binding rules first (its error bodies); the declared schema then checks the canonical body.
      preValidation: async (request) => {
        const body = canonicalMemberNames(request.body);
        request.dataSetQuery = { query: parsePostBody(body) };
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
      const raw = request.query as RawQuery;
      const versionKey = Object.keys(raw).find((key) => key.toLowerCase() === 'datasetversion');
      const unknown = Object.keys(raw).filter((key) => key !== versionKey);
      if (unknown.length > 0) {
        throw new ValidationError(unknown.map((key) => ({ path: key, code: 'UnknownField', message: ValidationMessages.UnknownField })));
      }
      const versionParam = versionKey === undefined ? undefined : raw[versionKey];
      const dataSetVersion = Array.isArray(versionParam) ? versionParam[0] : versionParam;
      return answer(request, reply, dataSetId, dataSetVersion?.trim() ? dataSetVersion : undefined, request.dataSetQuery!.query);
    },
  );
};
