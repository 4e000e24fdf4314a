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
 * A write on trainees (`answerOnCommit`) stores its answer in its own transaction, just before it commits: a write
 * that committed always has its answer stored, so a retry after its instance died between the commit and the answer
 * gets a replay instead of running it again (a second placement, a second state change). Other writes store their
 * response as it is sent.
 *
 * A plugin of the `/api` scope: every write route registered in it gets it, unless its route config says
 * `idempotency: false`.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { withCallDeadline } from '../db/database.js';
import type { BeforeCommit } from './context.js';
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

/** The key each request holds while it runs (claimed by the plugin's preHandler). */
const held = new WeakMap<FastifyRequest, HeldKey>();

/** A write's answer: its status, its headers (those in KEPT_HEADERS are replayed), its body before serialization. */
export interface WriteAnswer {
  status: number;
  headers: Record<string, string>;
  payload: unknown;
}

/**
 * The hook that stores `answer(result)` under the request's key in the write's transaction (see above); undefined when
 * the request holds no key. The body is serialized as the route sends it (its response schema). When the key is no
 * longer the request's (it ran past IDEMPOTENCY_LOCK_MS and a retry took the key over), the write is refused with 409
 * and rolls back, so that the two never both commit.
 */
export function answerOnCommit<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: (result: T) => WriteAnswer,
): BeforeCommit | undefined {
  const key = held.get(request);
  if (!key) return undefined;
  return async (trx, result) => {
    const { status, headers, payload } = answer(result as T);
    reply.code(status);
    const kept: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
    for (const name of KEPT_HEADERS) if (headers[name] !== undefined) kept[name] = headers[name];
    const serialized = reply.serialize(payload);
    const body = typeof serialized === 'string' ? serialized : Buffer.from(serialized as Uint8Array).toString('utf8');
    if (!(await storeResponse(trx, key.id, key.owner, { status, headers: kept, body }))) {
      reply.header('retry-after', '1');
      throw idempotencyKeyInProgress();
    }
  };
}

function replay(reply: FastifyReply, stored: StoredResponse): FastifyReply {
  reply.code(stored.status).headers(stored.headers).header(REPLAYED_HEADER, 'true');
  return reply.send(stored.body === '' ? undefined : stored.body);
}

export const idempotencyPlugin = fp(
  async (app: FastifyInstance) => {
    const { db, config } = app;
    const deadline = <T>(fn: () => Promise<T>) => withCallDeadline(config.DATABASE_SHORT_QUERY_TIMEOUT_MS, fn);

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

    // The first request's response, stored before it is sent: a client that got it and retries gets it again. An
    // answer stored with its write (answerOnCommit) ended the owner's hold when the write committed, so neither this
    // store nor a release changes it; they act only when that transaction rolled back.
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
