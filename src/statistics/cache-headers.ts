/**
 * How the statistics API's answers may be cached: `Cache-Control` (public unless a preview token is sent), `ETag`
 * and `304 Not Modified` (entity tags and conditional requests: src/http/conditional.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ifNoneMatchMatches, weakEtag } from '../http/conditional.js';
import { addVary } from '../http/vary.js';

/** Published responses change only when a new version is published, so shared caches may keep them a short while. */
export const PUBLIC_CACHE_CONTROL = 'public, max-age=300, must-revalidate';
/** Responses that depend on a preview token must not be cached by shared caches. */
export const PRIVATE_CACHE_CONTROL = 'private, no-cache';

export function cacheControlFor(request: FastifyRequest): string {
  return request.headers['preview-token'] ? PRIVATE_CACHE_CONTROL : PUBLIC_CACHE_CONTROL;
}

/**
 * Sends a JSON body with `ETag` and `Cache-Control`, or `304 Not Modified` when the client already has it.
 * The tag is a hash of the serialised body, so it changes exactly when the response would.
 */
export function sendCacheable<T>(request: FastifyRequest, reply: FastifyReply, body: T): T | FastifyReply {
  const etag = weakEtag(request.routeOptions.url ?? '', JSON.stringify(body));
  reply.header('etag', etag);
  reply.header('cache-control', cacheControlFor(request));
  addVary(reply, 'Accept-Encoding', 'preview-token');
  if (ifNoneMatchMatches(request, etag)) {
    return reply.code(304).send();
  }
  return body;
}
