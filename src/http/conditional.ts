/**
 * Entity tags and conditional requests (RFC 9110 §8.8.3, §13), for both APIs: `If-None-Match` on reads (304) and
 * `If-Match` on the register's writes (412). Tags compare weakly (a `W/` prefix is ignored on either side), because a
 * weak tag names the same entity whether it is sent compressed or not.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { PreconditionFailedError } from '../errors.js';

/** A weak entity tag of the parts (weak: the same entity may be sent gzip-compressed or not). */
export function weakEtag(...parts: Array<string | number>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(String(part)).update('\u0000');
  return `W/"${hash.digest('base64url').slice(0, 32)}"`;
}

/** A tag without its weakness prefix. */
function opaqueTag(tag: string): string {
  return tag.trim().replace(/^W\//, '');
}

/** Whether a header's list of tags names `etag`, or is `*`. */
function namesTag(header: string, etag: string): boolean {
  const wanted = opaqueTag(etag);
  return header.split(',').some((tag) => tag.trim() === '*' || opaqueTag(tag) === wanted);
}

/** Whether the request's `If-None-Match` names `etag`: the client already holds this version (answer 304). */
export function ifNoneMatchMatches(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  return header ? namesTag(header, etag) : false;
}

/** `If-Match`, when sent, must name `etag` (or be `*`): 412 otherwise, before anything is written. */
export function assertIfMatch(header: string | undefined, etag: string): void {
  if (header !== undefined && !namesTag(header, etag)) throw new PreconditionFailedError();
}
