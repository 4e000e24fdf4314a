import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import helmet from '@fastify/helmet';
import { constants as zlibConstants } from 'node:zlib';
import compress from '@fastify/compress';
import type { Redis } from 'ioredis';
import type { Config } from '../config.js';

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
    // Low levels for a CPU-bound service: gzip 3 and brotli 3 cost a third to a half of the defaults' CPU for a
    // response a few percent larger (docs/performance.md); whole-version CSV downloads gain the most.
    await app.register(compress, {
      global: true,
      threshold: 1024,
      encodings: ['br', 'gzip', 'deflate'],
      zlibOptions: { level: 3 },
      // A response in memory up to this size (a query page of the default 1,000 rows fits) is compressed in one call
      // on the event loop: a zlib stream per response (the plugin's path above its two-core default of 8 kB) costs
      // more in set-up, hand-offs and its pipeline's abort signal than compressing such a page does. Larger ones
      // (10,000-row pages) and CSV streams still go through a stream, so the loop is never held long.
      syncThreshold: 512 * 1024,
      brotliOptions: {
        params: {
          [zlibConstants.BROTLI_PARAM_QUALITY]: 3,
          [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
        },
      },
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
