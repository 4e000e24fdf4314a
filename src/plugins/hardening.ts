import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import helmet from '@fastify/helmet';
import cors from '@fastify/cors';
import compress from '@fastify/compress';
import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import type { Config } from '../config.js';
import { AppError, GatewayTimeoutError, ValidationError } from '../errors.js';

export interface HardeningOptions {
  config: Config;
}

/** Deepest JSON nesting accepted in a request body; deeper bodies are refused before parsing. */
export const MAX_JSON_DEPTH = 100;

const isStatistics = (url: string) => url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?');
const isRegister = (url: string) => url.startsWith('/api/');

/** Nesting depth of a JSON text, counting brackets outside strings; stops counting once past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** The rate-limit bucket of a request: per token on the register API (per IP without one), per IP elsewhere. */
export function rateLimitKey(request: FastifyRequest): string {
  if (isRegister(request.url)) {
    const auth = request.headers.authorization;
    if (auth) return `register:token:${createHash('sha256').update(auth.replace(/^Bearer\s+/i, '').trim()).digest('hex').slice(0, 32)}`;
    return `register:ip:${request.ip}`;
  }
  return `statistics:ip:${request.ip}`;
}

/**
 * Cross-cutting protection: security headers, CORS (open for the public statistics API, closed on the register API),
 * compression, rate limits (Redis-backed when REDIS_URL is set), a JSON body parser with a depth limit, and the
 * statistics request timeout (504).
 */
export const hardeningPlugin = fp<HardeningOptions>(
  async (app: FastifyInstance, { config }) => {
    // JSON APIs need no CSP of their own; swagger-ui sets a strict one on /docs.
    await app.register(helmet, { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'cross-origin' } });

    await app.register(cors, {
      delegator: (request, callback) => {
        const url = request.url ?? '';
        if (isStatistics(url)) {
          callback(null, {
            origin: '*',
            methods: ['GET', 'HEAD', 'POST'],
            allowedHeaders: ['Content-Type', 'Accept', 'preview-token', 'If-None-Match', 'X-Request-Id'],
            exposedHeaders: ['ETag', 'Content-Disposition', 'X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
            maxAge: 86400,
          });
        } else {
          callback(null, { origin: false });
        }
      },
    });

    await app.register(compress, { global: true, threshold: 1024, encodings: ['br', 'gzip', 'deflate'] });

    const redis = config.REDIS_URL
      ? new Redis(config.REDIS_URL, { connectTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
      : undefined;
    if (redis) {
      redis.on('error', (error) => app.log.warn({ err: error.message }, 'rate-limit store error'));
      app.addHook('onClose', async () => {
        redis.disconnect();
      });
    }
    await app.register(rateLimit, {
      // Applied below as a root-level hook, so it runs before any API's own hooks (authentication included).
      global: false,
      redis,
      nameSpace: 'education-api-rl:',
      // A broken rate-limit store must not take the API down with it.
      skipOnError: true,
      enableDraftSpec: true,
      keyGenerator: rateLimitKey,
      allowList: (request) => !isRegister(request.url) && !isStatistics(request.url),
      max: (_request, key) => (key.startsWith('register:') ? config.RATE_LIMIT_REGISTER_MAX : config.RATE_LIMIT_STATISTICS_MAX),
      timeWindow: (_request, key) =>
        key.startsWith('register:') ? config.RATE_LIMIT_REGISTER_WINDOW_MS : config.RATE_LIMIT_STATISTICS_WINDOW_MS,
      errorResponseBuilder: (_request, context) =>
        new AppError(429, 'Too Many Requests', `Rate limit of ${context.max} requests per ${Math.round(context.ttl / 1000)} s exceeded; retry after ${context.after}.`),
    });
    app.addHook('onRequest', app.rateLimit());

    // The default JSON parser, plus a depth limit (deeply nested bodies are refused before JSON.parse walks them)
    // and an empty body read as "no body" (the statistics POST query accepts one).
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
      const text = body as string;
      if (text.trim() === '') return done(null, undefined);
      if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
        return done(new ValidationError([{ path: 'body', message: `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, code: 'MaximumDepth' }]), undefined);
      }
      try {
        done(null, JSON.parse(text, (key, value) => (key === '__proto__' ? undefined : value)));
      } catch {
        done(new ValidationError([{ path: 'body', message: 'The request body is not valid JSON.', code: 'InvalidJson' }]), undefined);
      }
    });

    // Statistics requests that run longer than REQUEST_TIMEOUT_MS answer 504 (the statement_timeout stops the query).
    app.addHook('onRequest', async (request, reply) => {
      if (!isStatistics(request.url)) return;
      const timer = setTimeout(() => {
        if (reply.sent || reply.raw.headersSent) return;
        request.log.warn({ timeoutMs: config.REQUEST_TIMEOUT_MS }, 'request timed out');
        reply.send(new GatewayTimeoutError(`The request did not complete within ${config.REQUEST_TIMEOUT_MS} ms.`));
      }, config.REQUEST_TIMEOUT_MS);
      timer.unref();
      reply.raw.once('close', () => clearTimeout(timer));
      reply.raw.once('finish', () => clearTimeout(timer));
    });
  },
  { name: 'hardening' },
);
