/** The `Vary` header (RFC 9110 §12.5.5), for both APIs. */
import type { FastifyReply } from 'fastify';

/** Adds names to the `Vary` header, keeping those already there (CORS adds `Origin`). */
export function addVary(reply: FastifyReply, ...names: string[]): void {
  const current = String(reply.getHeader('vary') ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const name of names) {
    if (!current.some((n) => n.toLowerCase() === name.toLowerCase())) current.push(name);
  }
  reply.header('vary', current.join(', '));
}
