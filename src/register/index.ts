import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { withCallDeadline, type Db } from '../db/database.js';
import { installErrorHandler, methodNotAllowed, sendError } from '../plugins/problem.js';
import { jsonBodyPlugin, scopeRateLimitPlugin } from '../plugins/api-scope.js';
import { BoundedWindowStore } from '../plugins/rate-limit-store.js';
import type { RegisterContext, RegisterRouteOptions } from './context.js';
import { degreeRoutes } from './degrees/routes.js';
import {
  malformedJson,
  notFound,
  registerErrorFormatter,
  resourceNotFound,
  traineeNotFound,
  unauthorized,
} from './errors.js';
import { FormBodyError, parseRailsForm } from './form-body.js';
import { idempotencyPlugin } from './idempotency.js';
import { servedRegisterOpenApiDocument } from './openapi/index.js';
import { sendPrecompressed } from '../http/precompressed.js';
import { placementRoutes } from './placements/routes.js';
import { allReferenceData, referenceDataPayload } from './reference-data.js';
import { TokenCache, tokenFromHeader, tokenSecret, touchToken } from './tokens.js';
import { TraineeBodyCache } from './trainees/body-cache.js';
import { traineeRoutes } from './trainees/routes.js';
import { transitionRoutes } from './transitions/routes.js';
import { sandboxSchedule } from './sandbox/scenarios.js';
import { SandboxSimulator } from './sandbox/simulator.js';
import { sandboxRoutes } from './sandbox/routes.js';
import { registerEventRoutes } from './events/routes.js';
import { registerWebhookRoutes } from './events/webhook-routes.js';
import { LATEST_VERSION, VERSION_ADAPTERS, VERSION_LABELS, VERSION_SEGMENT } from './versions/index.js';
import { nextTurn } from '../event-loop.js';
import { admissionGroup } from '../plugins/load-shedding.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the register API's authentication hook on every authenticated route. */
    registerContext: RegisterContext;
    /** The provider whose token authenticated the request, if any: its requests share one rate-limit counter. */
    registerProviderId: number | null;
  }
  interface FastifyContextConfig {
    /** Register routes that need no token (reference data, the OpenAPI documents). */
    registerPublic?: boolean;
  }
}

export { tokenSecret };

/** The provider behind the request's token (and its use recorded), or undefined. Short statements: a short deadline. */
async function authenticate(request: FastifyRequest, db: Db, config: Config, tokens: TokenCache) {
  const token = tokenFromHeader(request.headers.authorization);
  if (!token) return undefined;
  return withCallDeadline(config.DATABASE_SHORT_QUERY_TIMEOUT_MS, async () => {
    const found = await tokens.authenticate(db, token, config.REGISTER_ENVIRONMENT, tokenSecret(config));
    if (found) await touchToken(db, found);
    return found;
  });
}

/** The path (`data.first_names`, `data.reasons[0]`) of the first string or key holding U+0000, or undefined. */
function nulPath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulPath(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const childPath = path ? `${path}.${key}` : key;
      if (key.includes('\u0000')) return childPath;
      const found = nulPath(child, childPath);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

const versionScope: FastifyPluginAsync<RegisterRouteOptions> = async (app, options) => {
  const { db, config } = app;
  const { version, label, bodyCache, tokens } = options;
  const sandbox = sandboxSchedule(config);
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.config?.registerPublic) return app.scopeRateLimit(request, reply);
    const found = await authenticate(request, db, config, tokens);
    request.registerProviderId = found?.provider.id ?? null;
    // Counted after authentication: per provider with a valid token, per IP without one (failed logins included).
    await app.scopeRateLimit(request, reply);
    if (!found) throw unauthorized();
    request.registerContext = {
      provider: found.provider,
      tokenId: found.tokenId,
      version,
      environment: config.REGISTER_ENVIRONMENT,
      sandbox,
    };
  });

  // Every register call is a short statement: its handler's database calls get the short deadline (a frozen
  // database answers 503 within seconds). Callback style, so the handler runs inside the deadline's context.
  app.addHook('preHandler', (_request, _reply, done) => withCallDeadline(config.DATABASE_SHORT_QUERY_TIMEOUT_MS, done));

  // PostgreSQL text cannot hold U+0000, so such input would fail in the database (a 500): refuse it here instead.
  // No id contains it (404); a body field that does is named in a 400.
  app.addHook('preValidation', async (request) => {
    const param = nulPath(request.params, '');
    if (param !== undefined) throw param === 'trainee_id' ? traineeNotFound() : notFound();
    const field = nulPath(request.body, '');
    if (field !== undefined) throw malformedJson(`${field || 'body'} must not contain the NUL character (\\u0000)`);
  });

  app.get('/info', { schema: { hide: true } }, async () => ({
    status: 'ok',
    version: { requested: label, latest: LATEST_VERSION },
  }));

  app.get<{ Querystring: { field?: string } }>(
    '/reference-data',
    { schema: { hide: true }, config: { registerPublic: true } },
    async (request) => {
      if (!VERSION_ADAPTERS[version].referenceData)
        throw notFound(`Reference data is not available for version '${label}'`);
      const field = typeof request.query.field === 'string' ? request.query.field : '';
      if (field === '') return allReferenceData();
      const payload = referenceDataPayload(field);
      if (payload === undefined) throw notFound(`Reference data field '${field}' not found`);
      return payload;
    },
  );

  app.get('/openapi.json', { schema: { hide: true }, config: { registerPublic: true } }, async (request, reply) =>
    sendPrecompressed(request, reply, await servedRegisterOpenApiDocument(version)),
  );

  // Not `options` itself: it carries this scope's prefix, which the children would add a second time.
  const routeOptions: RegisterRouteOptions = { version, label, bodyCache, tokens };
  await app.register(traineeRoutes, routeOptions);
  await app.register(placementRoutes, routeOptions);
  await app.register(degreeRoutes, routeOptions);
  await app.register(transitionRoutes, routeOptions);
  await app.register(registerEventRoutes, routeOptions);
  await app.register(registerWebhookRoutes, routeOptions);
  await app.register(sandboxRoutes, routeOptions);
};

/** The trainee teacher register API, mounted at `/api` (versions below it: `/api/v2026.1/...`). */
export const registerApi: FastifyPluginAsync = async (app: FastifyInstance) => {
  const { config, db } = app;
  // Refuses to start production with the public development key.
  tokenSecret(config);
  const tokens = new TokenCache(config.REGISTER_TOKEN_CACHE_MS);
  // Its requests have their own load-shedding bounds (src/plugins/load-shedding.ts).
  app.addHook('onRoute', admissionGroup('register'));
  app.decorateRequest('registerContext', null as unknown as RegisterContext);
  app.decorateRequest('registerProviderId', null);
  await app.register(jsonBodyPlugin);
  // The hook is called by the version scopes' authentication (and the not-found handler), not on its own.
  await app.register(scopeRateLimitPlugin, {
    hook: false,
    store: new BoundedWindowStore(),
    max: config.RATE_LIMIT_REGISTER_MAX,
    windowMs: config.RATE_LIMIT_REGISTER_WINDOW_MS,
    key: (request) =>
      request.registerProviderId === null
        ? `register:ip:${request.ip}`
        : `register:provider:${request.registerProviderId}`,
  });

  installErrorHandler(app, registerErrorFormatter);

  // The real catch-all under a well-formed version runs authentication first: 401 without a valid token, else
  // 404 "Not found" (unknown version or path), or 405 with `Allow` for a known path with another method. Paths whose version segment is malformed: "Resource not found".
  app.setNotFoundHandler(async (request: FastifyRequest, reply: FastifyReply) => {
    const segment = request.url.split('?')[0]!.split('/')[2] ?? '';
    const found = VERSION_SEGMENT.test(segment) ? await authenticate(request, db, config, tokens) : undefined;
    request.registerProviderId = found?.provider.id ?? null;
    await app.scopeRateLimit(request, reply);
    const error = !VERSION_SEGMENT.test(segment)
      ? resourceNotFound()
      : found
        ? (methodNotAllowed(app, request, reply) ?? notFound())
        : unauthorized();
    return sendError(reply, registerErrorFormatter(error, request));
  });

  // Bodies that are not JSON are not parsed (the real service then reports `data` as missing), except form bodies
  // with Rails-style keys (`data[itt_start_date]=…`), which the real service reads like JSON. Register scope only.
  app.addContentTypeParser('*', { parseAs: 'string' }, (_request, _body, done) => done(null, undefined));
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseRailsForm(body as string));
    } catch (error) {
      done(error instanceof FormBodyError ? malformedJson(error.message) : (error as Error), undefined);
    }
  });

  // The sandbox's simulated TRNs and awards; a live instance has none (and schedules none: its context has no schedule).
  if (sandboxSchedule(config)) {
    const simulator = new SandboxSimulator(db, { config, log: app.log });
    app.addHook('onReady', async () => simulator.start());
    app.addHook('onClose', async () => simulator.close());
  }
  // Every write route of the versions below takes an Idempotency-Key (src/register/idempotency.ts).
  await app.register(idempotencyPlugin);

  const bodyCache = new TraineeBodyCache();
  for (const [label, version] of Object.entries(VERSION_LABELS)) {
    await app.register(versionScope, { prefix: `/${label}`, version, label, bodyCache, tokens });
    // The start's other work goes on meanwhile (src/app.ts).
    await nextTurn();
  }
};
