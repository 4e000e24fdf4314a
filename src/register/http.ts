/**
 * HTTP details every register route shares, written once: the `data` member of a write and the error format a client
 * asked for (conditional requests: src/http/conditional.ts).
 */
import type { FastifyRequest } from 'fastify';
import type { TraineeWrite, WriteRequest } from './context.js';
import { missingData } from './errors.js';

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
export function writeRequestOf(request: FastifyRequest): WriteRequest {
  return { data: () => requestData(request.body), enhancedErrors: wantsEnhancedErrors(request) };
}

/** The write this request asks for on its trainee (its `data` read only once the trainee is found, matched and unlocked). */
export function traineeWriteOf(request: FastifyRequest<{ Params: { trainee_id: string } }>): TraineeWrite {
  return { ...writeRequestOf(request), traineeId: request.params.trainee_id, ifMatch: request.headers['if-match'] };
}
