/**
 * The HTTP shape placements and degrees share — list, add, get, change (PUT and PATCH alike) and delete under
 * `/trainees/{trainee_id}/{collection}` — written once; each module passes its schemas and its service.
 * Params and responses are declared schemas (validated and serialized); bodies are checked by the services with
 * the real messages and described in the per-version OpenAPI documents.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import type { RegisterContext, TraineeTarget, TraineeWrite } from './context.js';
import { answerWrite, traineeAnswer, traineeWriteOf } from './http.js';
import { TraineeParams, TraineeSchema } from './schemas.js';
import type { TraineeResult } from './trainees/service.js';

export interface NestedRecordService<T> {
  list(db: Db, context: RegisterContext, traineeId: string): Promise<T[]>;
  get(db: Db, context: RegisterContext, traineeId: string, id: string): Promise<T>;
  create(db: Db, context: RegisterContext, write: TraineeWrite): Promise<T>;
  change(db: Db, context: RegisterContext, id: string, write: TraineeWrite): Promise<T>;
  remove(db: Db, context: RegisterContext, id: string, target: TraineeTarget): Promise<TraineeResult>;
}

export interface NestedRecordRoutes<T> {
  collection: 'placements' | 'degrees';
  idParam: 'placement_id' | 'degree_id';
  /** The params schema of one record's path (trainee id and record id). */
  params: TSchema;
  /** The record as a response serializes it. */
  record: TSchema;
  service: NestedRecordService<T>;
}

type RecordRequest = FastifyRequest<{ Params: Record<string, string> & { trainee_id: string } }>;

export function registerNestedRecordRoutes<T>(app: FastifyInstance, db: Db, routes: NestedRecordRoutes<T>): void {
  const { collection, idParam, params, record, service } = routes;
  // The params schema requires the record's id segment.
  const recordIdOf = (request: RecordRequest): string => request.params[idParam]!;
  const many = `/trainees/:trainee_id/${collection}`;
  const one = `${many}/:${idParam}`;
  const single = Type.Object({ data: record });

  app.get(
    many,
    { schema: { hide: true, params: TraineeParams, response: { 200: Type.Object({ data: Type.Array(record) }) } } },
    async (request) => {
      const { trainee_id: traineeId } = (request as RecordRequest).params;
      return { data: await service.list(db, request.registerContext, traineeId) };
    },
  );

  app.post(many, { schema: { hide: true, params: TraineeParams, response: { 201: single } } }, async (request, reply) =>
    answerWrite(
      request,
      reply,
      (beforeCommit) =>
        service.create(db, request.registerContext, traineeWriteOf(request as RecordRequest, beforeCommit)),
      (created) => ({ status: 201, headers: {}, payload: { data: created } }),
    ),
  );

  app.get(one, { schema: { hide: true, params, response: { 200: single } } }, async (request) => {
    const { trainee_id: traineeId } = (request as RecordRequest).params;
    const id = recordIdOf(request as RecordRequest);
    return { data: await service.get(db, request.registerContext, traineeId, id) };
  });

  const change = async (request: FastifyRequest, reply: FastifyReply) => {
    const typed = request as RecordRequest;
    return answerWrite(
      request,
      reply,
      (beforeCommit) =>
        service.change(db, request.registerContext, recordIdOf(typed), traineeWriteOf(typed, beforeCommit)),
      (changed) => ({ status: 200, headers: {}, payload: { data: changed } }),
    );
  };
  app.put(one, { schema: { hide: true, params, response: { 200: single } } }, change);
  app.patch(one, { schema: { hide: true, params, response: { 200: single } } }, change);

  app.delete(
    one,
    { schema: { hide: true, params, response: { 200: Type.Object({ data: TraineeSchema }) } } },
    async (request, reply) => {
      const typed = request as RecordRequest;
      return answerWrite(
        request,
        reply,
        (beforeCommit) =>
          service.remove(db, request.registerContext, recordIdOf(typed), traineeWriteOf(typed, beforeCommit)),
        (result) => traineeAnswer(result, 200),
      );
    },
  );
}
