/**
 * `/mcp`: the Model Context Protocol endpoint (Streamable HTTP, stateless: each POST is answered on its own, as JSON),
 * so that an assistant can search the statistics catalogue, read metadata and run queries (src/mcp/tools.ts). It sits
 * in a scope of its own with the statistics API's protection: the same rate-limit counter per client (one allowance
 * for both), the request timeout and the database deadline; read-only.
 */
import type { FastifyPluginAsync } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  databaseDeadlinePlugin,
  jsonBodyPlugin,
  openCorsPlugin,
  requestTimeoutPlugin,
  scopeRateLimitPlugin,
} from '../plugins/api-scope.js';
import { installErrorHandling } from '../plugins/problem.js';
import { statisticsRateLimit, type StatisticsApiOptions } from '../statistics/index.js';
import { QueryService } from '../statistics/query/service.js';
import { createMcpServer } from './tools.js';

export const mcpPlugin: FastifyPluginAsync<Pick<StatisticsApiOptions, 'engines' | 'shared'>> = async (app, options) => {
  const { config } = app;
  await app.register(openCorsPlugin, {
    origin: '*',
    methods: ['POST'],
    allowedHeaders: ['Content-Type', 'Accept', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'],
    exposedHeaders: ['Mcp-Session-Id', 'X-Request-Id', 'Retry-After'],
    maxAge: 86400,
  });
  await app.register(scopeRateLimitPlugin, statisticsRateLimit(config, options.shared));
  await app.register(requestTimeoutPlugin, { timeoutMs: config.REQUEST_TIMEOUT_MS });
  await app.register(databaseDeadlinePlugin, { deadlineMs: config.DATABASE_STATISTICS_DEADLINE_MS, db: app.readDb });
  await app.register(jsonBodyPlugin);
  installErrorHandling(app);

  const queries = new QueryService({
    db: app.readDb,
    versionMetas: options.shared.versionMetas,
    resolvedVersions: options.shared.resolvedVersions,
    engines: options.engines,
  });

  app.post('/', { schema: { hide: true } }, async (request, reply) => {
    const server = createMcpServer({
      db: app.readDb,
      queries,
      caches: options.shared,
      origin: `${request.protocol}://${request.host}`,
      // Inside the request's own timeout, so that the answer is a tool error rather than a cut connection.
      timeoutMs: Math.max(1000, config.REQUEST_TIMEOUT_MS - 1000),
      log: request.log,
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // The headers this scope's hooks set (CORS, rate limit, request id) go out with the transport's response.
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  // Stateless: no server-sent event stream to open and no session to end.
  const notAllowed = async (_request: unknown, reply: import('fastify').FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send({
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: 'Method not allowed: this MCP endpoint is stateless; send requests with POST.',
        },
        id: null,
      });
  app.get('/', { schema: { hide: true } }, notAllowed);
  app.delete('/', { schema: { hide: true } }, notAllowed);
};
