/**
 * The sandbox tools, an extension of this service (docs/compatibility.md), served only by a sandbox instance (a live
 * one does not register them: 404) and only by the versions whose adapter has `extensions.sandboxTools`:
 * `POST /sandbox/trainees` generates trainees, `DELETE /sandbox/data` clears the provider's sandbox data. Each call
 * writes up to hundreds of rows, so each provider may make only RATE_LIMIT_REGISTER_SANDBOX_TOOLS_MAX of them a window,
 * besides the register's own limit. HTTP only; the work is in service.ts.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { RegisterRouteOptions } from '../context.js';
import { AppError } from '../../errors.js';
import { unprocessableEntries } from '../errors.js';
import { requestData } from '../http.js';
import { adapterFor } from '../versions/index.js';
import { clearSandboxData, generateTrainees, MAX_GENERATED_TRAINEES } from './service.js';

/** `count` of a generate request: a whole number from 1 to MAX_GENERATED_TRAINEES (a numeric string too). */
function generateCount(body: unknown): number {
  const raw = requestData(body).count;
  const count = typeof raw === 'string' && /^\d{1,4}$/.test(raw.trim()) ? Number(raw) : raw;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_GENERATED_TRAINEES) {
    throw unprocessableEntries([`count must be a whole number from 1 to ${MAX_GENERATED_TRAINEES}`]);
  }
  return count;
}

export const sandboxRoutes: FastifyPluginAsync<RegisterRouteOptions> = async (app, { version }) => {
  const { db, config } = app;
  if (config.REGISTER_ENVIRONMENT !== 'sandbox' || !adapterFor(version).extensions.sandboxTools) return;
  // A counter of its own in the register's rate-limit store (Redis when configured), next to the provider's request
  // count: the library's hooks run once per request, and the scope's hook has run already.
  const count = app.createRateLimit({
    max: config.RATE_LIMIT_REGISTER_SANDBOX_TOOLS_MAX,
    timeWindow: config.RATE_LIMIT_REGISTER_SANDBOX_TOOLS_WINDOW_MS,
    keyGenerator: (request: FastifyRequest) => `register:sandbox-tools:${request.registerProviderId}`,
  });
  const limit = async (request: FastifyRequest, reply: FastifyReply) => {
    const result = await count(request);
    if (!result.isAllowed && result.isExceeded) {
      reply.header('retry-after', String(result.ttlInSeconds));
      throw new AppError(
        429,
        'Too Many Requests',
        `At most ${result.max} sandbox tool calls per ${Math.round(result.timeWindow / 1000)} s`,
      );
    }
  };
  // Documented in the per-version OpenAPI documents, not the service-wide one.
  const options = { schema: { hide: true }, preHandler: limit };

  app.post('/sandbox/trainees', options, async (request, reply) => {
    const count = generateCount(request.body);
    const generated = await generateTrainees(db, request.registerContext, count);
    return reply.code(201).send({ data: generated });
  });

  app.delete('/sandbox/data', options, async (request) => {
    const cleared = await clearSandboxData(db, request.registerContext);
    return { data: { trainees: cleared.trainees, events: cleared.events, webhook_deliveries: cleared.deliveries } };
  });
};
