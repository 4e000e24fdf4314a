/**
 * `Idempotency-Key` on register writes (POST, PUT, PATCH, DELETE: creates, updates, deletes and state changes), as
 * the IETF draft (draft-ietf-httpapi-idempotency-key-header) and payment APIs have it. The first request with a key
 * runs and its response (status, body, the headers that matter) is stored per provider and environment for
 * IDEMPOTENCY_KEY_TTL_S; a retry with the same key and the same request gets that response again, marked
 * `Idempotent-Replayed: true`, without running. The store is the primary database, so a retry that reaches another
 * instance is answered the same way. While the first request runs, a retry gets 409 (with Retry-After); the same
 * key with another method, path or body gets 422. A response worth retrying (5xx, 429) is not kept: the key is
 * given up and the next request with it runs.
 *
 * A plugin of the `/api` scope: every write route registered in it gets it, unless its route config says
 * `idempotency: false`.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { withCallDeadline } from '../db/database.js';
import {
  idempotencyKeyInProgress,
  idempotencyKeyReused,
  invalidIdempotencyKey,
  tooManyIdempotencyKeys,
} from './errors.js';
import {
  claimKey,
  countKeys,
  findKey,
  releaseKey,
  storeResponse,
  type KeyId,
  type StoredResponse,
} from './idempotency-repository.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: a write route that does not take an Idempotency-Key (src/register/idempotency.ts). */
    idempotency?: boolean;
  }
}

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** The longest key accepted (a UUID is 36). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Printable ASCII; the draft's form is a Structured Field string (`"…"`), a bare token is accepted too. */
const KEY = /^[\x21-\x7e]+$/;
/** The response headers a replay repeats. */
const KEPT_HEADERS = ['content-type', 'etag', 'location', 'last-modified'];

/** The key a request carries: undefined without one; throws 400 for a malformed one. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers[IDEMPOTENCY_KEY_HEADER];
  if (header === undefined) return undefined;
  if (typeof header !== 'string') throw invalidIdempotencyKey(MAX_IDEMPOTENCY_KEY_LENGTH);
  const quoted = header.length >= 2 && header.startsWith('"') && header.endsWith('"');
  const key = quoted ? header.slice(1, -1) : header;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY.test(key) || (quoted && key.includes('"'))) {
    throw invalidIdempotencyKey(MAX_IDEMPOTENCY_KEY_LENGTH);
  }
  return key;
}

/** What makes two requests the same request: method, path with query, and the body as parsed. */
function fingerprintOf(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n`)
    .update(JSON.stringify(request.body ?? null) ?? '')
    .digest('base64url');
}

interface HeldKey {
  id: KeyId;
  owner: string;
}

function replay(reply: FastifyReply, stored: StoredResponse): FastifyReply {
  reply.code(stored.status).headers(stored.headers).header(REPLAYED_HEADER, 'true');
  return reply.send(stored.body === '' ? undefined : stored.body);
}

export const idempotencyPlugin = fp(
  async (app: FastifyInstance) => {
    const { db, config } = app;
    const deadline = <T>(fn: () => Promise<T>) => withCallDeadline(config.DATABASE_SHORT_QUERY_TIMEOUT_MS, fn);
    const held = new WeakMap<FastifyRequest, HeldKey>();

    // After authentication (onRequest) and the scope's input checks (preValidation): the key is the provider's.
    app.addHook('preHandler', async (request, reply) => {
      if (!WRITE_METHODS.has(request.method) || request.routeOptions.config?.idempotency === false) return;
      const key = idempotencyKeyOf(request);
      if (key === undefined || !request.registerContext) return;
      const id: KeyId = {
        providerId: request.registerContext.provider.id,
        environment: request.registerContext.environment,
        key,
      };
      const fingerprint = fingerprintOf(request);
      const owner = randomUUID();
      const claim = {
        fingerprint,
        owner,
        lockMs: config.IDEMPOTENCY_LOCK_MS,
        ttlSeconds: config.IDEMPOTENCY_KEY_TTL_S,
      };
      const outcome = await deadline(async () => {
        const existing = await findKey(db, id);
        if (!existing) {
          if (
            (await countKeys(db, id.providerId, id.environment, config.IDEMPOTENCY_MAX_KEYS_PER_PROVIDER)) >=
            config.IDEMPOTENCY_MAX_KEYS_PER_PROVIDER
          ) {
            throw tooManyIdempotencyKeys(config.IDEMPOTENCY_MAX_KEYS_PER_PROVIDER);
          }
        } else if (existing.fingerprint !== fingerprint) {
          throw idempotencyKeyReused();
        } else if (existing.response) {
          return existing.response;
        }
        if (await claimKey(db, id, claim)) return 'claimed' as const;
        // Another request took it since: the first of two at once, or its response was stored meanwhile.
        const now = await findKey(db, id);
        if (now && now.fingerprint !== fingerprint) throw idempotencyKeyReused();
        if (now?.response) return now.response;
        return 'in progress' as const;
      });
      if (outcome === 'claimed') {
        held.set(request, { id, owner });
        return;
      }
      if (outcome === 'in progress') {
        reply.header('retry-after', '1');
        throw idempotencyKeyInProgress();
      }
      return replay(reply, outcome);
    });

    // The first request's response, stored before it is sent: a client that got it and retries gets it again.
    app.addHook('onSend', async (request, reply, payload) => {
      const key = held.get(request);
      if (!key) return payload;
      held.delete(request);
      const status = reply.statusCode;
      try {
        if (
          status >= 500 ||
          status === 429 ||
          (typeof payload !== 'string' && payload !== null && payload !== undefined && !Buffer.isBuffer(payload))
        ) {
          await deadline(() => releaseKey(db, key.id, key.owner));
          return payload;
        }
        const headers: Record<string, string> = {};
        for (const name of KEPT_HEADERS) {
          const value = reply.getHeader(name);
          if (value !== undefined) headers[name] = String(value);
        }
        const body = payload === null || payload === undefined ? '' : payload.toString();
        await deadline(() => storeResponse(db, key.id, key.owner, { status, headers, body }));
      } catch (error) {
        // The response goes out anyway; a retry gets 409 until the lock runs out, then runs again.
        request.log.warn({ err: error }, 'could not store the response of an Idempotency-Key');
      }
      return payload;
    });

    // A request that ended without a response (its client went away first) gives its key up.
    app.addHook('onResponse', async (request) => {
      const key = held.get(request);
      if (!key) return;
      held.delete(request);
      await deadline(() => releaseKey(db, key.id, key.owner)).catch((error: unknown) =>
        request.log.warn({ err: error }, 'could not release an Idempotency-Key'),
      );
    });
  },
  { name: 'register-idempotency' },
);
