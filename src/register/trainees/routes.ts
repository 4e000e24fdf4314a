/**
 * `GET/POST /trainees`, `GET/PUT/PATCH /trainees/{trainee_id}` of one version scope: HTTP only (read the request,
 * call the service, send). Requests are validated by the service, not by route schemas and Ajv, because the
 * register's 422 bodies have the real service's shapes; the routes are described in the per-version OpenAPI
 * documents (src/register/openapi).
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { RegisterRouteOptions } from '../context.js';
import { ifNoneMatchMatches } from '../../http/conditional.js';
import { answerWrite, traineeAnswer, traineeWriteOf, wantsEnhancedErrors, writeRequestOf } from '../http.js';
import { adapterFor } from '../versions/index.js';
import { batchRows, createTraineeBatch } from './batch.js';
import { todayUtc } from '../values.js';
import { parseTraineeListQuery } from './list-query.js';
import { traineeEtag } from './serialize.js';
import { createTrainee } from './create.js';
import { getTrainee, listTraineesJson, updateTrainee } from './service.js';

type TraineeRequest = FastifyRequest<{ Params: { trainee_id: string } }>;

export const traineeRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (app, { bodyCache, version }) => {
  const { db } = app;
  // Documented in the per-version OpenAPI documents, not the service-wide one.
  const schema = { hide: true };

  app.get<{ Querystring: Record<string, unknown> }>('/trainees', { schema }, async (request, reply) => {
    const query = parseTraineeListQuery(request.query, todayUtc());
    const json = await listTraineesJson(db, request.registerContext, query, bodyCache);
    return reply.type('application/json; charset=utf-8').send(json);
  });

  app.get<{ Params: { trainee_id: string } }>('/trainees/:trainee_id', { schema }, async (request, reply) => {
    const { row, body } = await getTrainee(db, request.registerContext, request.params.trainee_id);
    const etag = traineeEtag(row);
    reply.header('etag', etag);
    // A syncing client that already holds this version of the trainee gets 304 and no body.
    if (ifNoneMatchMatches(request, etag)) return reply.code(304).send();
    return body;
  });

  app.post('/trainees', { schema }, async (request, reply) =>
    answerWrite(
      request,
      reply,
      (beforeCommit) => createTrainee(db, request.registerContext, writeRequestOf(request, beforeCommit)),
      (result) => traineeAnswer(result, 201),
    ),
  );

  if (adapterFor(version).extensions.batchCreate) {
    app.post('/trainees/batch', { schema }, async (request) => {
      const rows = batchRows(request.body);
      const { rows: answers, created } = await createTraineeBatch(
        db,
        request.registerContext,
        rows,
        wantsEnhancedErrors(request),
      );
      return { data: answers, meta: { rows: answers.length, created, failed: answers.length - created } };
    });
  }

  const update = async (request: TraineeRequest, reply: FastifyReply) =>
    answerWrite(
      request,
      reply,
      (beforeCommit) => updateTrainee(db, request.registerContext, traineeWriteOf(request, beforeCommit)),
      (result) => traineeAnswer(result, 200),
    );
  app.put<{ Params: { trainee_id: string } }>('/trainees/:trainee_id', { schema }, update);
  app.patch<{ Params: { trainee_id: string } }>('/trainees/:trainee_id', { schema }, update);
};
