/**
 * `POST /trainees/{trainee_id}/defer`, `/withdraw`, `/update-qts-or-eyts-status` and the deprecated
 * `/recommend-for-qts`: HTTP only. Params and responses are declared schemas; bodies are checked by the service
 * with the real messages and described in the per-version OpenAPI documents.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/database.js';
import type { RegisterContext, RegisterRouteOptions, TraineeWrite } from '../context.js';
import type { TraineeResult } from '../trainees/service.js';
import { answerWrite, traineeAnswer, traineeWriteOf } from '../http.js';
import { TraineeParams, TraineeSchema } from '../schemas.js';
import { deferTrainee, recommendForAward, withdrawTrainee } from './service.js';

/** When the deprecated QTS path was superseded by update-qts-or-eyts-status (v2026.1 release, 2026-03-20). */
const RECOMMEND_FOR_QTS_DEPRECATED_AT = '@1773964800';

type TraineeRequest = FastifyRequest<{ Params: { trainee_id: string } }>;
type StateChange = (db: Db, context: RegisterContext, write: TraineeWrite) => Promise<TraineeResult>;

export const transitionRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (app) => {
  const { db } = app;
  const schema = (status: number) => ({
    hide: true,
    params: TraineeParams,
    response: { [status]: Type.Object({ data: TraineeSchema }) },
  });
  /** A state change answered with the trainee as it is after, with `status` (stored with the change under a key). */
  const answerStateChange = (request: TraineeRequest, reply: FastifyReply, change: StateChange, status: number) =>
    answerWrite(
      request,
      reply,
      (beforeCommit) => change(db, request.registerContext, traineeWriteOf(request, beforeCommit)),
      (result) => traineeAnswer(result, status),
    );

  app.post<{ Params: { trainee_id: string } }>(
    '/trainees/:trainee_id/defer',
    { schema: schema(200) },
    async (request, reply) => answerStateChange(request, reply, deferTrainee, 200),
  );

  app.post<{ Params: { trainee_id: string } }>(
    '/trainees/:trainee_id/withdraw',
    { schema: schema(200) },
    async (request, reply) => answerStateChange(request, reply, withdrawTrainee, 200),
  );

  app.post<{ Params: { trainee_id: string } }>(
    '/trainees/:trainee_id/update-qts-or-eyts-status',
    { schema: schema(202) },
    async (request, reply) => answerStateChange(request, reply, recommendForAward, 202),
  );

  app.post<{ Params: { trainee_id: string } }>(
    '/trainees/:trainee_id/recommend-for-qts',
    { schema: schema(202) },
    async (request, reply) => {
      const successor = request.url.split('?')[0]!.replace(/recommend-for-qts\/?$/, 'update-qts-or-eyts-status');
      reply.header('deprecation', RECOMMEND_FOR_QTS_DEPRECATED_AT);
      reply.header('link', `<${successor}>; rel="successor-version"`);
      return answerStateChange(request, reply, recommendForAward, 202);
    },
  );
};
