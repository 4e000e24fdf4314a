import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import stripJsonComments from 'strip-json-comments';
import { databaseAnswersProbe, withRequestDeadline, type Db } from '../db/database.js';
import { HEALTH_TIMEOUT_MS } from './health.js';
import { AppError, GatewayTimeoutError, ValidationError } from '../errors.js';
import { BoundedWindowStore } from './rate-limit-store.js';

/**
 * Plugins an API registers inside its own scope (Fastify encapsulation), so that they apply to exactly the routes the
 * router gives that scope — also when the path was written percent-encoded (`/%761/…` is routed as `/v1/…`) — and
 * never by tests on the raw URL. Each is wrapped by fastify-plugin so that it applies to the scope registering it.
 */

/** Deepest JSON nesting accepted in a request body; deeper bodies are refused before parsing. */
export const MAX_JSON_DEPTH = 100;

/**
 * The most items one JSON array (or members one object) of a request body may hold; a body with more is refused
 * before it is parsed, so a wide body costs a scan, not a parse and a validation of every item (no valid body of
 * either API comes near it; see docs/compatibility.md).
 */
export const MAX_JSON_ITEMS = 10_000;

/**
 * What is wrong with a JSON text's shape, found in one pass over its brackets and commas outside strings without
 * parsing it: nested deeper than `maxDepth`, or an array or object with more than `maxItems` items. Stops at the
 * first problem. (Hand-written: no JSON library bounds these before building the whole value.)
 */
export function jsonShapeProblem(text: string, maxDepth: number, maxItems = Infinity): 'depth' | 'items' | undefined {
  let depth = 0;
  let inString = false;
  // Commas seen at each open level: a level with n commas holds n + 1 items.
  const commas: number[] = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxDepth) return 'depth';
      commas[depth] = 0;
    } else if (c === 125 || c === 93) depth--;
    else if (c === 44 /* , */ && depth > 0 && ++commas[depth]! >= maxItems) return 'items';
  }
  return undefined;
}

/** Nesting depth of a JSON text, counting brackets outside strings; stops counting once past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  return jsonShapeProblem(text, limit) === 'depth';
}

/**
 * JSON bodies: Fastify's own parser (with `__proto__` and `constructor.prototype` keys removed), behind a depth
 * limit and an item limit (MAX_JSON_ITEMS), with an empty body read as "no body" (the statistics POST query accepts one) and any parse failure reported
 * as the API's validation error. With `comments`, `//` and `/* *\/` comments are skipped first (trailing commas
 * stay errors), as the statistics API's reference reads its bodies.
 */
export const jsonBodyPlugin = fp<{ comments?: boolean }>(
  async (app: FastifyInstance, options) => {
    const parse = app.getDefaultJsonParser('remove', 'remove');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      // Every comment starts with `/`: a body without one is not copied (a large body costs only its parse).
      const text =
        options.comments && (body as string).includes('/') ? stripJsonComments(body as string) : (body as string);
      if (text.trim() === '') return done(null, undefined);
      const shape = jsonShapeProblem(text, MAX_JSON_DEPTH, MAX_JSON_ITEMS);
      if (shape === 'depth') {
        return done(
          new ValidationError([
            {
              path: 'body',
              message: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
              code: 'MaximumDepth',
            },
          ]),
          undefined,
        );
      }
      if (shape === 'items') {
        return done(
          new ValidationError([
            {
              path: 'body',
              message: `A list or object in the JSON body has more than ${MAX_JSON_ITEMS} items.`,
              code: 'MaximumItems',
            },
          ]),
          undefined,
        );
      }
      // Fastify's default JSON parser is the callback form: it answers through `done`, never a promise.
      void parse(request, text, (error, value) => {
        if (error)
          return done(
            new ValidationError([
              { path: 'body', message: 'The request body is not valid JSON.', code: 'InvalidJson' },
            ]),
            undefined,
          );
        done(null, value);
      });
    });
  },
  { name: 'json-body' },
);

export interface ScopeRateLimitOptions {
  /** The in-memory counters (without REDIS_URL), shared by every scope of one API (an API served at several prefixes). */
  store: BoundedWindowStore;
  max: number;
  windowMs: number;
  /** The counter a request belongs to (e.g. `statistics:ip:…`); the same key on every instance shares a count. */
  key: (request: FastifyRequest) => string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** This scope's rate limit as a hook: counts the request under its key, throws the 429 once past the limit. */
    scopeRateLimit: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  }
}

/**
 * A rate limit for one scope, counted in Redis when REDIS_URL is set (shared by every instance), else in memory
 * (BoundedWindowStore: a live window is never evicted). It runs as the scope's first onRequest hook unless the scope
 * calls `scopeRateLimit` itself (the register API does, after authentication, to count per provider).
 */
export const scopeRateLimitPlugin = fp<ScopeRateLimitOptions & { hook?: boolean }>(
  async (app: FastifyInstance, options) => {
    await app.register(rateLimit, {
      global: false,
      redis: app.rateLimitRedis,
      // The library takes a store class and makes one with `new`: a constructor that returns an object makes `new`
      // return that object, so every scope of the API counts in the one store it was given.
      store: app.rateLimitRedis ? undefined : storeClassOf(options.store),
      nameSpace: 'education-api-rl:',
      // A broken rate-limit store must not take the API down with it.
      skipOnError: true,
      enableDraftSpec: true,
      keyGenerator: options.key,
      max: options.max,
      timeWindow: options.windowMs,
      errorResponseBuilder: (_request, context) =>
        new AppError(
          429,
          'Too Many Requests',
          `Rate limit of ${context.max} requests per ${Math.round(context.ttl / 1000)} s exceeded; retry after ${context.after}.`,
        ),
    });
    const hook = app.rateLimit();
    app.decorate('scopeRateLimit', hook as (request: FastifyRequest, reply: FastifyReply) => Promise<void>);
    if (options.hook !== false) app.addHook('onRequest', hook);
  },
  { name: 'scope-rate-limit' },
);

function storeClassOf(store: BoundedWindowStore): typeof BoundedWindowStore {
  return function givenStore() {
    return store;
  } as unknown as typeof BoundedWindowStore;
}

/** Requests of this scope still running after `timeoutMs` answer 504 (the statement_timeout stops the query). */
export const requestTimeoutPlugin = fp<{ timeoutMs: number }>(
  async (app: FastifyInstance, { timeoutMs }) => {
    app.addHook('onRequest', async (request, reply) => {
      const timer = setTimeout(() => {
        if (reply.sent || reply.raw.headersSent) return;
        request.log.warn({ timeoutMs }, 'request timed out');
        reply.send(new GatewayTimeoutError(`The request did not complete within ${timeoutMs} ms.`));
      }, timeoutMs);
      timer.unref();
      reply.raw.once('close', () => clearTimeout(timer));
      reply.raw.once('finish', () => clearTimeout(timer));
    });
  },
  { name: 'request-timeout' },
);

/**
 * The database calls of this scope's requests (getting a connection, queries, cursor reads) must answer within
 * `deadlineMs` of the request's arrival, until the response starts (`withRequestDeadline`): a call past it fails with
 * a 503 when `db` does not answer a probe within HEALTH_TIMEOUT_MS either (a frozen database), and waits on under its
 * usual bounds when it does (a slow statement on a database that answers). Callback style, so the handler runs
 * inside the deadline's context.
 */
export const databaseDeadlinePlugin = fp<{ deadlineMs: number; db: Db }>(
  async (app: FastifyInstance, { deadlineMs, db }) => {
    const databaseAnswers = databaseAnswersProbe(db, HEALTH_TIMEOUT_MS);
    app.addHook('preHandler', (_request, reply, done) => {
      const until = Date.now() - reply.elapsedTime + deadlineMs;
      withRequestDeadline({ until, applies: () => !reply.raw.headersSent, databaseAnswers }, done);
    });
  },
  { name: 'database-deadline' },
);

/** CORS for a public API scope: any origin may read it from a browser. */
export const openCorsPlugin = fp<FastifyCorsOptions>(
  async (app: FastifyInstance, options) => {
    await app.register(cors, options);
  },
  { name: 'open-cors' },
);
