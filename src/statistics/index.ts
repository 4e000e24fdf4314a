import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { installErrorHandling } from '../plugins/problem.js';
import { jsonBodyPlugin, openCorsPlugin, requestTimeoutPlugin, scopeRateLimitPlugin } from '../plugins/api-scope.js';
import { statisticsErrorFormatter } from './errors.js';
import { catalogueRoutes } from './routes/catalogue.js';
import type { RowIndexStore } from './query/row-index.js';
import { queryRoutes } from './routes/query.js';
import { registerStatisticsSchemas } from './schemas.js';

export interface StatisticsApiOptions {
  config: Config;
  /** Where statistics reads go (the read replica when configured). */
  db: Db;
  /** The primary, for the rare statistics writes. */
  writeDb: Db;
  /** The app's in-memory row indexes of the query engine. */
  rowIndexes: RowIndexStore;
}

/** Lower-cases a path's letters but not its percent-escapes (`%2A` stays `%2A`: it names the same character). */
function lowerCasePath(path: string): string {
  return path.replace(/%[0-9A-Fa-f]{2}|[^%]+|%/g, (part) => (part.length === 3 && part[0] === '%' ? part : part.toLowerCase()));
}

/**
 * Paths with capital letters are not part of the contract: like the reference service, answer them with
 * 308 Permanent Redirect to the lower-cased path, keeping the query string as it is. Percent-escapes are kept as
 * they are, so a client that normalises escapes to upper case is not sent round in a loop. Registered at the root
 * (see src/app.ts) so that `/V1/...` is redirected too, not only capitals after the prefix.
 */
export async function redirectCapitalisedPath(request: FastifyRequest, reply: FastifyReply) {
  const queryStart = request.url.indexOf('?');
  const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
  const lower = lowerCasePath(path);
  if (path === lower || !(lower === '/v1' || lower.startsWith('/v1/'))) return;
  const query = queryStart === -1 ? '' : request.url.slice(queryStart);
  return reply.code(308).header('location', `${lower}${query}`).header('cache-control', 'public, max-age=86400').send();
}

/** The public statistics data set API, mounted at `/v1`. */
export const statisticsApi: FastifyPluginAsync<StatisticsApiOptions> = async (app, options) => {
  const { config } = options;
  // This scope's own protection, so that it covers exactly the routes the router gives it (a percent-encoded
  // `/%761/…` included). CORS first: a 429 or 504 must still be readable by the browser that caused it.
  await app.register(openCorsPlugin, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['Content-Type', 'Accept', 'preview-token', 'If-None-Match', 'X-Request-Id'],
    exposedHeaders: ['ETag', 'Content-Disposition', 'X-Request-Id', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    maxAge: 86400,
  });
  await app.register(scopeRateLimitPlugin, {
    max: config.RATE_LIMIT_STATISTICS_MAX,
    windowMs: config.RATE_LIMIT_STATISTICS_WINDOW_MS,
    key: (request) => `statistics:ip:${request.ip}`,
  });
  await app.register(requestTimeoutPlugin, { timeoutMs: config.REQUEST_TIMEOUT_MS });
  await app.register(jsonBodyPlugin);
  // The reference reports its API versions on every response (Asp.Versioning `ReportApiVersions`).
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('api-supported-versions', '1.0');
  });
  installErrorHandling(app, statisticsErrorFormatter);
  registerStatisticsSchemas(app);
  // Only our own options: passing `options` on would pass its `prefix` too, and the routes would sit at /v1/v1.
  const routeOptions: StatisticsApiOptions = { config: options.config, db: options.db, writeDb: options.writeDb, rowIndexes: options.rowIndexes };
  await app.register(catalogueRoutes, routeOptions);
  await app.register(queryRoutes, routeOptions);
};
