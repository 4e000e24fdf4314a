import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import Fastify, {
  LogController,
  type FastifyHttpOptions,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { openPoolConnections, type Db } from './db/database.js';
import type { ReadRouter } from './db/read-routing.js';
import { nextTurn, whileBusy } from './event-loop.js';
import { withStatisticsExamples } from './statistics/openapi-examples.js';
import { openApiPlugin, SERVICE_OPENAPI_DOCUMENT, type OpenApiDocument } from './plugins/openapi.js';
import { hardeningPlugin } from './plugins/hardening.js';
import { boundedLoggerOptions } from './plugins/log-bounds.js';
import { deferredSchemaCompilers } from './plugins/deferred-schemas.js';
import { metricsPlugin } from './plugins/metrics.js';
import { loadSheddingPlugin } from './plugins/load-shedding.js';
import { streamingPlugin } from './plugins/streaming.js';
import type pg from 'pg';
import { healthRoutes } from './plugins/health.js';
import {
  defaultProblemFormatter,
  installErrorHandling,
  ProblemSchema,
  sendError,
  toAppError,
} from './plugins/problem.js';
import {
  createStatisticsSharedState,
  redirectCapitalisedPath,
  STATISTICS_PREFIXES,
  statisticsApi,
} from './statistics/index.js';
import { readRunningImports } from './statistics/import/repository.js';
import {
  loadQueryVersionMeta,
  RowIndexStore,
  StandardEngineChooser,
  type QueryEngineChooser,
} from './statistics/query/engine/index.js';
import { registerApi } from './register/index.js';
import { loadRegisterReferenceData } from './register/warm-up.js';
import { REGISTER_OPENAPI_DOCUMENTS } from './register/openapi/index.js';
import type { ExplorerAssets } from './explorer/build.js';
import { explorerPlugin } from './explorer/plugin.js';
import { mcpPlugin } from './mcp/plugin.js';
import { eventsPlugin } from './events/plugin.js';
import type { NetworkDeps } from './events/webhook-sender.js';
import { registerEventApi } from './register/events/service.js';
import { statisticsEventApi } from './statistics/events/service.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The validated configuration (decorated once by buildApp). */
    config: Config;
    /** The primary database: every write, and the register's reads. */
    db: Db;
    /** Where statistics reads go: the read replica when configured, else the primary. */
    readDb: Db;
    /**
     * Compiles the route schemas (validators, serializers) no request has used yet: they are compiled on first
     * use, not at start (src/plugins/deferred-schemas.ts). A test runs it on the whole app.
     */
    compileDeferredSchemas: () => Promise<number>;
    /**
     * The first step of a graceful stop (src/server.ts): from now on `/health/ready` answers 503 so the balancer
     * sends no new requests, while every request that still comes is served as usual.
     */
    beginDrain: () => void;
    /** Settles when `/health/ready` may answer 200: at once, or after the start's warm-up (`warmUpBeforeReady`). */
    warmedUp: Promise<void>;
  }
}

export interface AppDeps {
  /** The primary database: every write, and the register API. */
  db: Db;
  /** Optional read replica for the statistics API (DATABASE_READ_URL); defaults to `db`. */
  readDb?: Db;
  /** With a replica: where statistics reads go now, reported by /health/ready. */
  readRouting?: ReadRouter;
  /** Databases `/health/ready` probes, on pools of their own (see src/runtime.ts); default `db` and `readDb`. */
  healthDbs?: Db[];
  /** The pools behind `db`/`readDb`, for pool metrics. */
  pools?: Record<string, pg.Pool>;
  /** Logger options or `false`; tests pass false. */
  logger?: FastifyServerOptions['logger'];
  /** How webhooks resolve names and connect (tests stub both); default the system's. */
  webhookNetwork?: NetworkDeps;
  /** Run the webhook delivery worker in this app (default true). */
  webhookWorker?: boolean;
  /**
   * Before saying ready (after the row index warm-up): serialize the OpenAPI document, compile every route schema, load
   * the register's code lists and open the pools' connections, so that a balancer's first requests to a new instance
   * pay for none of them (the server sets it; tests, which build many apps, do not).
   */
  warmUpBeforeReady?: boolean;
  /** The statistics query engine's row indexes; by default a store under QUERY_INDEX_MEMORY_MB. */
  rowIndexes?: RowIndexStore;
  /** Which engine answers each statistics query; by default the row index, stored columns or SQL (engine/choose.ts). */
  queryEngines?: QueryEngineChooser;
  /** The explorer built ahead (the bundled server reads `dist/explorer/`); by default built in memory. */
  explorerAssets?: ExplorerAssets;
  /**
   * Check each request schema against the JSON Schema meta-schema as it compiles (a test of every route does). Off
   * by default: Ajv would compile that meta-schema once per schema scope, on the first request of each.
   */
  checkRouteSchemas?: boolean;
}

/** Every OpenAPI document the service serves; committed copies under openapi/ are kept in sync by a test. */
export const OPENAPI_DOCUMENTS: OpenApiDocument[] = [SERVICE_OPENAPI_DOCUMENT, ...REGISTER_OPENAPI_DOCUMENTS];

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** A client's next request usually follows its last answer within this (the start's warm-up waits for it). */
const REQUESTS_QUIET_MS = 100;

/** The client's request id when it is usable as ours: 1–128 of `A-Z a-z 0-9 . _ : -`. */
export function acceptedRequestId(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && REQUEST_ID.test(header) ? header : undefined;
}

export const REDACTED_HEADERS = ['req.headers.authorization', 'req.headers["preview-token"]', 'req.headers.cookie'];

/** The Fastify instance's options: logging, request ids, timeouts, routing and Ajv's settings. */
function serverOptions(
  config: Config,
  deps: AppDeps,
  schemas: ReturnType<typeof deferredSchemaCompilers>,
): FastifyHttpOptions<Server> {
  return {
    schemaController: { compilersFactory: schemas.compilersFactory },
    logger:
      deps.logger === undefined
        ? boundedLoggerOptions({ level: config.LOG_LEVEL, redact: REDACTED_HEADERS })
        : deps.logger,
    // One line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    // A client's X-Request-Id is kept (and echoed) only when it is a short token of safe characters; anything else
    // gets an id of our own, so log lines and the echoed header never carry what a client chose to inject.
    requestIdHeader: false,
    genReqId: (raw) => acceptedRequestId(raw.headers['x-request-id']) ?? randomUUID(),
    bodyLimit: config.BODY_LIMIT_BYTES,
    // Node's own socket timeouts, so slow or idle clients cannot hold connections forever. Node checks the headers
    // and request timeouts every `connectionsCheckingInterval` (30 s by default, which made a 15 s headers timeout
    // fire after up to 45 s): checked every second, a slow-header client gets its 408 within a second of the timeout.
    requestTimeout: config.REQUEST_TIMEOUT_MS + 5000,
    keepAliveTimeout: 5000,
    http: {
      headersTimeout: config.HEADERS_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(1000, config.HEADERS_TIMEOUT_MS),
    },
    trustProxy: config.TRUST_PROXY,
    // Repeated slashes count as one (`/api/v2026.1//trainees`), as the register's real router treats them.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 500 },
    // Errors the router raises before any route scope (over-long path parameter → 414, malformed URL → 400) as
    // problem details instead of Fastify's own body.
    frameworkErrors: (error, request, reply) => {
      const appError = toAppError(error);
      void sendError(reply, defaultProblemFormatter(appError, request));
    },
    ajv: {
      customOptions: {
        // Unknown members are errors, not silently dropped; every problem of a request is reported at once.
        removeAdditional: false,
        allErrors: true,
        coerceTypes: 'array',
        useDefaults: true,
        // No optimisation pass over the generated code: validators compile in a third of the time and validate as
        // fast, which shortens a fresh instance's first query (it compiles its own; docs/performance.md).
        code: { optimize: false },
        validateSchema: deps.checkRouteSchemas ?? false,
      },
    },
  };
}

/**
 * Until the start-up warm-up is over, the requests being answered (until their response is done or their connection
 * gone) and when the last one ended: the warm-up compiles route schemas and opens connections between them, not
 * during them.
 */
class StartupTraffic {
  warm: boolean;
  private inFlight = 0;
  private lastEnded = 0;

  constructor(warmUpBeforeReady: boolean) {
    this.warm = !warmUpBeforeReady;
  }

  /**
   * Counts a request while the instance warms up. Not a probe: polled often enough (the tests' every 20 ms), it would
   * keep the warm-up waiting for its whole 5 s.
   */
  track(request: FastifyRequest, reply: FastifyReply): void {
    if (this.warm || request.routeOptions.config?.probe) return;
    this.inFlight++;
    reply.raw.once('close', () => {
      this.inFlight--;
      this.lastEnded = Date.now();
    });
  }

  /** Whether a request is being answered or ended within the last REQUESTS_QUIET_MS. */
  get busy(): boolean {
    return this.inFlight > 0 || Date.now() - this.lastEnded < REQUESTS_QUIET_MS;
  }
}

/** The statistics query's row indexes, their warm-up started (by default; tests may pass their own store). */
async function rowIndexesOf(app: FastifyInstance, config: Config, deps: AppDeps): Promise<RowIndexStore> {
  // The statistics query's row indexes: loaded in the background under their own time bound, and an index built
  // from rows is stored on the primary for every other instance.
  const rowIndexes =
    deps.rowIndexes ??
    new RowIndexStore({
      memoryBudgetBytes: config.QUERY_INDEX_MEMORY_MB * 1024 * 1024,
      buildTimeoutMs: config.QUERY_INDEX_BUILD_TIMEOUT_MS,
      retryAfterMs: config.QUERY_INDEX_RETRY_MS,
      storedReadTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
      engineFormDb: deps.db,
      log: app.log.child({ component: 'row-index' }),
    });
  if (!deps.rowIndexes) {
    // Not ready until the row indexes of the versions in use are loaded (bounded by QUERY_INDEX_WARM_TIMEOUT_MS).
    // Started before the routes are registered: the loads (database reads, inflating in the thread pool) overlap them.
    const statisticsDb = deps.readDb ?? deps.db;
    await rowIndexes
      .startWarmUp(statisticsDb, (versionId, rowsTable) => loadQueryVersionMeta(statisticsDb, versionId, rowsTable), {
        versions: config.QUERY_INDEX_WARM_VERSIONS,
        timeoutMs: config.QUERY_INDEX_WARM_TIMEOUT_MS,
      })
      .catch((error: unknown) => app.log.warn({ err: error }, 'row index warm-up could not read the versions in use'));
  }
  return rowIndexes;
}

/** The app-wide plugins, the event system, both APIs and the explorer, in their order. */
async function registerModules(
  app: FastifyInstance,
  config: Config,
  deps: AppDeps,
  rowIndexes: RowIndexStore,
  traffic: StartupTraffic,
): Promise<void> {
  // Between the larger registrations below (and inside the statistics and register APIs), a turn of the event loop:
  // the warm-up's database reads go on while the routes are set up, instead of all waiting for the last route (so
  // the first row index is ready about when the server listens, not after).
  // Import progress read on the readiness pool (in the server): a scrape never queues behind API traffic.
  const importsDb = deps.healthDbs?.[0] ?? deps.db;
  await app.register(metricsPlugin, {
    pools: deps.pools,
    importProgress: () => readRunningImports(importsDb),
    rowIndexes,
  });
  // After the metrics' hooks, so that the requests it refuses are counted too.
  await app.register(loadSheddingPlugin, { config, pools: deps.pools });
  await app.register(hardeningPlugin, { config });
  await app.register(streamingPlugin, { config });
  await nextTurn();
  // The statistics API's groups, descriptions and recorded examples (src/statistics/openapi-examples.ts).
  await app.register(openApiPlugin, {
    documents: REGISTER_OPENAPI_DOCUMENTS,
    transformDocument: withStatisticsExamples,
  });
  await nextTurn();
  const lifecycle = { draining: false };
  app.decorate('beginDrain', () => {
    lifecycle.draining = true;
  });
  await app.register(healthRoutes, {
    db: deps.db,
    readDb: deps.readDb,
    probes: deps.healthDbs,
    readRouting: deps.readRouting,
    rowIndexes,
    warmUp: {
      get warm() {
        return traffic.warm;
      },
    },
    pressure: () => app.loadPressure(),
    lifecycle,
  });
  // One LISTEN connection per instance, with the primary pool's settings.
  const primaryPool = deps.pools?.register ?? deps.pools?.primary;
  await app.register(eventsPlugin, {
    apis: { statistics: statisticsEventApi, register: registerEventApi },
    listenConnection: config.DATABASE_URL ? { connectionString: config.DATABASE_URL } : primaryPool?.options,
    network: deps.webhookNetwork,
    webhookWorker: deps.webhookWorker,
  });
  const shared = createStatisticsSharedState(config);
  const engines = deps.queryEngines ?? new StandardEngineChooser(rowIndexes);
  for (const prefix of STATISTICS_PREFIXES) {
    await app.register(statisticsApi, { prefix, engines, shared, alias: prefix !== '/v1' });
    await nextTurn();
  }
  // The MCP endpoint answers from the statistics API's services, with its rate-limit counters and caches.
  await app.register(mcpPlugin, { prefix: '/mcp', engines, shared });
  await app.register(registerApi, { prefix: '/api' });
  await nextTurn();
  await app.register(explorerPlugin, { assets: deps.explorerAssets });
}

/**
 * After the app is ready, the rest of the start-up warm-up: the OpenAPI document serialized, route schemas compiled,
 * the register's code lists loaded, the source map decoded and the pools' connections opened, each step waiting
 * while the instance is busy; then it says warm.
 */
function warmUpAfterReady(
  app: FastifyInstance,
  deps: AppDeps,
  schemas: ReturnType<typeof deferredSchemaCompilers>,
  rowIndexes: RowIndexStore,
  traffic: StartupTraffic,
  warmUpOver: () => void,
): void {
  // After the row index warm-up, one step at a time, each waiting while a row index loads (compiling alongside
  // delays it) and, for its first 5 s, while requests are being answered or came within the last REQUESTS_QUIET_MS
  // (a schema compiled, or the pools' connections opened, between two turns of a request delay a fresh instance's
  // first answers); then regardless, so that steady traffic cannot keep the instance unready.
  const requestsFirstUntil = Date.now() + 5000;
  const busy = () => rowIndexes.buildsInProgress > 0 || (Date.now() < requestsFirstUntil && traffic.busy);
  void rowIndexes.warmUpOver
    .then(async () => {
      // The service's OpenAPI document first: /docs, where a newcomer starts, asks for it before anything else.
      await whileBusy(busy);
      const documentStarted = performance.now();
      await app
        .prepareOpenApiDocument()
        .then(() =>
          app.log.info(
            { seconds: Math.round(performance.now() - documentStarted) / 1000 },
            'OpenAPI document prepared',
          ),
        )
        .catch((error: unknown) => app.log.error({ err: error }, 'the OpenAPI document could not be prepared'));
      const started = performance.now();
      try {
        const count = await schemas.compileAll({ pauseWhile: busy });
        app.log.info({ count, seconds: Math.round(performance.now() - started) / 1000 }, 'route schemas compiled');
      } catch (error) {
        app.log.error({ err: error }, 'a route schema does not compile');
      }
      await whileBusy(busy);
      loadRegisterReferenceData();
      await whileBusy(busy);
      // Under --enable-source-maps (npm start) the first stack trace formatted makes Node decode the bundle's source
      // map on the main thread: here, rather than at the first logged error (in an outage, every instance at once).
      void new Error('warm-up').stack;
      await whileBusy(busy);
      await openPoolConnections(deps.pools ?? {});
    })
    // Whatever failed will fail again on the request that needs it, with its own error: the instance says ready.
    .catch((error: unknown) => app.log.error({ err: error }, 'warm-up failed'))
    .finally(() => {
      traffic.warm = true;
      warmUpOver();
    });
}

/**
 * Builds the whole service as one Fastify instance, ready for `inject` (tests) or `listen` (server.ts).
 * Nothing here listens on a port or starts a database: those are the caller's.
 */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const schemas = deferredSchemaCompilers();
  const app = Fastify(serverOptions(config, deps, schemas)).withTypeProvider<TypeBoxTypeProvider>();

  app.addSchema(ProblemSchema);
  installErrorHandling(app);

  const traffic = new StartupTraffic(deps.warmUpBeforeReady ?? false);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    traffic.track(request, reply);
  });
  // Root level, so `/V1/...` (outside the /v1 scope) is redirected like capitals after the prefix.
  app.addHook('onRequest', redirectCapitalisedPath);
  app.addHook('onResponse', async (request, reply) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        statusCode: reply.statusCode,
        responseTimeMs: Math.round(reply.elapsedTime * 100) / 100,
      },
      'request completed',
    );
  });

  // What every API reads from the instance instead of from its options: the configuration and the databases.
  app.decorate('config', config);
  app.decorate('db', deps.db);
  app.decorate('readDb', deps.readDb ?? deps.db);
  app.decorate('compileDeferredSchemas', schemas.compileAll);

  const rowIndexes = await rowIndexesOf(app, config, deps);
  await registerModules(app, config, deps, rowIndexes, traffic);
  let warmUpOver = () => {};
  app.decorate('warmedUp', new Promise<void>((resolve) => (warmUpOver = resolve)));
  await app.ready();
  if (traffic.warm) warmUpOver();
  else warmUpAfterReady(app, deps, schemas, rowIndexes, traffic, warmUpOver);
  return app;
}
