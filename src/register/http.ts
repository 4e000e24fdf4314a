/**
 * HTTP details every register route shares, written once: the `data` member of a write, conditional requests on a
 * trainee's ETag, and the error format a client asked for.
 */
import type { FastifyRequest } from 'fastify';
import { PreconditionFailedError } from '../errors.js';
import type { TraineeWrite } from './context.js';
import { missingData } from './errors.js';

/** The `data` object of a write; missing, not an object, or empty → 422 "Param is missing…" (Rails' `params.expect`). */
export function requestData(body: unknown): Record<string, unknown> {
  const data = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>).data : undefined;
  if (!data || typeof data !== 'object' || Array.isArray(data) || Object.keys(data).length === 0) throw missingData();
  return data as Record<string, unknown>;
}

/** The entity tags of an `If-Match` / `If-None-Match` header (weak tags compare as strong). */
function tagsOf(header: string): string[] {
  return header.split(',').map((tag) => tag.trim().replace(/^W\//, ''));
}

/** `If-Match`, when sent, must name `etag` (or be `*`): 412 otherwise, before anything is written. */
export function assertIfMatch(header: string | undefined, etag: string): void {
  if (header === undefined) return;
  const tags = tagsOf(header);
  if (!tags.includes('*') && !tags.includes(etag)) throw new PreconditionFailedError();
}

/** Whether an `If-None-Match` names `etag` (or `*`): the client already holds this version (304). */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const tags = tagsOf(header);
  return tags.includes('*') || tags.includes(etag);
}

/** `Enhanced-Errors: true`: trainee validation messages keyed by attribute instead of a list. */
export function wantsEnhancedErrors(request: FastifyRequest): boolean {
  return request.headers['enhanced-errors'] === 'true';
}

/** The write this request asks for on its trainee (its `data` read only once the trainee is found, matched and unlocked). */
export function traineeWriteOf(request: FastifyRequest<{ Params: { trainee_id: string } }>): TraineeWrite {
  return { traineeId: request.params.trainee_id, ifMatch: request.headers['if-match'], data: () => requestData(request.body) };
}
