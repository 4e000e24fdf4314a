/**
 * HTTP details every register route shares, written once: the `data` member of a write, the error format a client
 * asked for, and how a write is answered (conditional requests: src/http/conditional.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BeforeCommit, TraineeWrite, WriteRequest } from './context.js';
import { missingData } from './errors.js';
import { answerOnCommit, type WriteAnswer } from './idempotency.js';
import { traineeEtag } from './trainees/serialize.js';
import type { TraineeResult } from './trainees/service.js';

/** The `data` object of a write; missing, not an object, or empty → 422 "Param is missing…" (Rails' `params.expect`). */
export function requestData(body: unknown): Record<string, unknown> {
  const data =
    body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).data : undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data) || Object.keys(data).length === 0) throw missingData();
  return data as Record<string, unknown>;
}

/** `Enhanced-Errors: true`: trainee validation messages keyed by attribute instead of a list. */
export function wantsEnhancedErrors(request: FastifyRequest): boolean {
  return request.headers['enhanced-errors'] === 'true';
}

/** The write this request asks for (its `data` read when the service asks for it). */
export function writeRequestOf(request: FastifyRequest, beforeCommit?: BeforeCommit): WriteRequest {
  return { data: () => requestData(request.body), enhancedErrors: wantsEnhancedErrors(request), beforeCommit };
}

/** The write this request asks for on its trainee (its `data` read only once the trainee is found, matched and unlocked). */
export function traineeWriteOf(
  request: FastifyRequest<{ Params: { trainee_id: string } }>,
  beforeCommit?: BeforeCommit,
): TraineeWrite {
  return {
    ...writeRequestOf(request, beforeCommit),
    traineeId: request.params.trainee_id,
    ifMatch: request.headers['if-match'],
  };
}

/**
 * Runs a write and sends `answer` of its result. `run` passes the hook it is given to the service, whose transaction
 * stores the answer under the request's Idempotency-Key before it commits (src/register/idempotency.ts).
 */
export async function answerWrite<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  run: (beforeCommit: BeforeCommit | undefined) => Promise<T>,
  answer: (result: T) => WriteAnswer,
): Promise<FastifyReply> {
  const { status, headers, payload } = answer(await run(answerOnCommit(request, reply, answer)));
  return reply.code(status).headers(headers).send(payload);
}

/** The answer of a write that answers with the trainee as it is after: `status`, its ETag, `{ data: trainee }`. */
export function traineeAnswer(result: TraineeResult, status: number): WriteAnswer {
  return { status, headers: { etag: traineeEtag(result.row) }, payload: { data: result.body } };
}
