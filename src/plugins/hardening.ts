import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import compress from '@fastify/compress';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';
import {
  BROTLI_OPTIONS,
  COMPRESS_ON_LOOP_MAX_BYTES,
  COMPRESS_THRESHOLD_BYTES,
  ZLIB_OPTIONS,
} from '../http/compression.js';

export interface HardeningOptions {
  config: Config;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The shared rate-limit counters (REDIS_URL), or undefined for in-memory counters per API scope. */
    rateLimitRedis: Redis | undefined;
  }
}

/**
 * What every response gets, whichever part of the service answers it: security headers and compression, plus the
 * Redis connection that the API scopes' rate limits share. Everything that differs between the APIs (CORS, rate
 * limits, the request timeout, body parsing) is registered inside each API's own scope: see ./api-scope.ts.
 */
export const hardeningPlugin = fp<HardeningOptions>(
  async (app: FastifyInstance, { config }) => {
    // JSON APIs need no CSP of their own; swagger-ui sets a strict one on /docs, the explorer its own.
    await app.register(helmet, { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'cross-origin' } });
    await app.register(compress, {
      global: true,
      threshold: COMPRESS_THRESHOLD_BYTES,
      encodings: ['br', 'gzip', 'deflate'],
      zlibOptions: ZLIB_OPTIONS,
      // In one call on the loop up to this size; larger ones in a stream (CSV downloads), so the loop is never held
      // long, or in one call off the loop where a route sends them with sendBody (query pages of up to 10,000 rows).
      syncThreshold: COMPRESS_ON_LOOP_MAX_BYTES,
      brotliOptions: BROTLI_OPTIONS,
    });

    // Loaded only when used: the client library alone takes 0.1 s to load.
    const redis = config.REDIS_URL
      ? new (await import('ioredis')).Redis(config.REDIS_URL, {
          connectTimeout: 1000,
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          lazyConnect: false,
        })
      : undefined;
    if (redis) {
      redis.on('error', (error) => app.log.warn({ err: error.message }, 'rate-limit store error'));
      app.addHook('onClose', async () => {
        redis.disconnect();
      });
    }
    app.decorate('rateLimitRedis', redis);
  },
  { name: 'hardening' },
);
