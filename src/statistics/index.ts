import { admissionGroup } from '../plugins/load-shedding.js';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { installErrorHandling } from '../plugins/problem.js';
import {
  databaseDeadlinePlugin,
  jsonBodyPlugin,
  openCorsPlugin,
  requestTimeoutPlugin,
  scopeRateLimitPlugin,
  type ScopeRateLimitOptions,
} from '../plugins/api-scope.js';
import { statisticsErrorFormatter } from './errors.js';
import { publicationRoutes } from './publications/routes.js';
import { dataSetRoutes } from './data-sets/routes.js';
import { versionRoutes } from './versions/routes.js';
import { META_BODY_CACHE_BYTES, metaRoutes } from './meta/routes.js';
import { KeptBodies } from '../http/kept-bodies.js';
import { VersionSummaryCache } from './versions/summaries.js';
import { dataFileRoutes } from './data-file/routes.js';
import { parquetFileRoutes } from './parquet-file/routes.js';
import { VersionMetaCache, type QueryEngineChooser } from './query/engine/index.js';
import { ResolvedVersionCache } from './versions/resolved-version-cache.js';
import type { DataSetVersionRow } from './versions/access.js';
import { DataSetMetaViewCache } from './meta/service.js';
import { BoundedWindowStore } from '../plugins/rate-limit-store.js';
import { queryRoutes } from './query/http/routes.js';
import { registerStatisticsSchemas } from './schemas.js';
import { registerQuerySchemas } from './query/http/contract.js';
import { statisticsEventRoutes } from './events/routes.js';
import { nextTurn } from '../event-loop.js';

/** What the API's mounts are given; the configuration and databases come from the instance (`app.config`, `app.readDb`). */
export interface StatisticsApiOptions {
  /** Which query engine answers each query (the app's row indexes, stored columns or SQL). */
  engines: QueryEngineChooser;
  /** What the API's mounts share (one app serves it at several prefixes). */
  shared: StatisticsSharedState;
  /** An alias mount (`/v1.0`, `/api/v1`, `/api/v1.0`): same routes, left out of the OpenAPI document. */
  alias?: boolean;
}

/**
 * The prefixes the statistics API answers at: the reference routes `v{version}` with `v1` and `v1.0` the same
 * version, and its public deployment puts them under `/api/` (DfE's R client calls `/api/v1.0/...`). `/v1` is the
 * canonical one the OpenAPI document shows.
 */
export const STATISTICS_PREFIXES = ['/v1', '/v1.0', '/api/v1', '/api/v1.0'] as const;

/**
 * State the statistics API keeps between requests, made once per app and shared by all its prefixes, so that an
 * alias neither multiplies memory nor gives a client a second rate-limit allowance.
 */
export interface StatisticsSharedState {
  versionMetas: VersionMetaCache;
  /** Resolved public versions of queries and meta, reused for QUERY_VERSION_CACHE_MS (a status change shows within that time). */
  resolvedVersions: ResolvedVersionCache<DataSetVersionRow>;
  /** The meta endpoint's views of versions (a version's metadata never changes). */
  metaViews: DataSetMetaViewCache;
  /** The meta endpoint's answers, serialized and compressed, per version and sections asked for. */
  metaBodies: KeptBodies;
  /** The summaries of versions that catalogue answers show (a version's metadata never changes). */
  versionSummaries: VersionSummaryCache;
  /** The in-memory rate-limit counters (without REDIS_URL). */
  rateLimits: BoundedWindowStore;
}

export function createStatisticsSharedState(config: Config): StatisticsSharedState {
  return {
    versionMetas: new VersionMetaCache(),
    resolvedVersions: new ResolvedVersionCache<DataSetVersionRow>(config.QUERY_VERSION_CACHE_MS),
    metaViews: new DataSetMetaViewCache(),
    metaBodies: new KeptBodies(META_BODY_CACHE_BYTES),
    versionSummaries: new VersionSummaryCache(),
    rateLimits: new BoundedWindowStore(),
  };
}

/** The statistics rate limit: one counter per client IP, shared by every scope that serves statistics (`/v1`, `/mcp`). */
export function statisticsRateLimit(config: Config, shared: StatisticsSharedState): ScopeRateLimitOptions {
  return {
    store: shared.rateLimits,
    max: config.RATE_LIMIT_STATISTICS_MAX,
    windowMs: config.RATE_LIMIT_STATISTICS_WINDOW_MS,
    key: (request) => `statistics:ip:${request.ip}`,
  };
}

/** A path under one of STATISTICS_PREFIXES. */
const STATISTICS_PATH = /^\/(api\/)?v1(\.0)?(\/|$)/;

/** Lower-cases a path's letters but not its percent-escapes (`%2A` stays `%2A`: it names the same character). */
function lowerCasePath(path: string): string {
  return path.replace(/%[0-9A-Fa-f]{2}|[^%]+|%/g, (part) =>
    part.length === 3 && part[0] === '%' ? part : part.toLowerCase(),
  );
}

/**
 * Paths with capital letters are not part of the contract: like the reference service, answer them with
 * 308 Permanent Redirect to the lower-cased path, keeping the query string as it is. Percent-escapes are kept as
 * they are, so a client that normalises escapes to upper case is not sent round in a loop. Registered at the root
 * (see src/app.ts) so that `/V1/...` and `/API/V1.0/...` are redirected too, not only capitals after the prefix.
 */
export async function redirectCapitalisedPath(request: FastifyRequest, reply: FastifyReply) {
  const queryStart = request.url.indexOf('?');
  const path = queryStart === -1 ? request.url : request.url.slice(0, queryStart);
  const lower = lowerCasePath(path);
  if (path === lower || !STATISTICS_PATH.test(lower)) return;
  const query = queryStart === -1 ? '' : request.url.slice(queryStart);
  return reply.code(308).header('location', `${lower}${query}`).header('cache-control', 'public, max-age=86400').send();
}

/** The public statistics data set API, mounted at each of STATISTICS_PREFIXES. */
export const statisticsApi: FastifyPluginAsync<StatisticsApiOptions> = async (app, options) => {
  const { config } = app;
  // Its requests have their own load-shedding bounds (src/plugins/load-shedding.ts).
  app.addHook('onRoute', admissionGroup('statistics'));
  // This scope's own protection, so that it covers exactly the routes the router gives it (a percent-encoded
  // `/%761/…` included). CORS first: a 429 or 504 must still be readable by the browser that caused it.
  await app.register(openCorsPlugin, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST'],
    allowedHeaders: ['Content-Type', 'Accept', 'preview-token', 'If-None-Match', 'X-Request-Id', 'Last-Event-ID'],
    exposedHeaders: [
      'ETag',
      'Content-Disposition',
      'X-Request-Id',
      'Retry-After',
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
    ],
    maxAge: 86400,
  });
  if (options.alias) {
    app.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
  }
  await app.register(scopeRateLimitPlugin, statisticsRateLimit(config, options.shared));
  await app.register(requestTimeoutPlugin, { timeoutMs: config.REQUEST_TIMEOUT_MS });
  await app.register(databaseDeadlinePlugin, { deadlineMs: config.DATABASE_STATISTICS_DEADLINE_MS, db: app.readDb });
  await app.register(jsonBodyPlugin, { comments: true });
  // The reference reports its API versions on every response (Asp.Versioning `ReportApiVersions`).
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('api-supported-versions', '1.0');
  });
  installErrorHandling(app, statisticsErrorFormatter);
  registerStatisticsSchemas(app);
  registerQuerySchemas(app);
  // Only our own options: passing `options` on would pass its `prefix` too, and the routes would sit at /v1/v1.
  const routeOptions: StatisticsApiOptions = { engines: options.engines, shared: options.shared };
  // In this order: the OpenAPI document lists paths in the order their routes are added.
  for (const routes of [
    publicationRoutes,
    dataSetRoutes,
    versionRoutes,
    metaRoutes,
    dataFileRoutes,
    parquetFileRoutes,
  ]) {
    await app.register(routes, routeOptions);
    // The start's other work goes on meanwhile (src/app.ts).
    await nextTurn();
  }
  await app.register(queryRoutes, routeOptions);
  await app.register(statisticsEventRoutes);
};
