/** The `Vary` header (RFC 9110 §12.5.5), for both APIs. */
import type { FastifyReply } from 'fastify';

/**
 * Adds names to the `Vary` header, keeping those already there (CORS adds `Origin`). Written in lower case: the
 * compression plugin adds `accept-encoding` unless it finds that exact text, so `Accept-Encoding` was sent twice.
 */
export function addVary(reply: FastifyReply, ...names: string[]): void {
  const current = String(reply.getHeader('vary') ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const name of names) {
    if (!current.some((n) => n.toLowerCase() === name.toLowerCase())) current.push(name.toLowerCase());
  }
  reply.header('vary', current.join(', '));
}
