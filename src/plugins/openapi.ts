import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { once, precompress, sendPrecompressed } from '../http/precompressed.js';
import { SWAGGER_UI_PLUGINS } from './swagger-ui-plugins.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Serializes and compresses the service's OpenAPI document once (the start's warm-up calls it; else the first
     * request of `/openapi.json` does).
     */
    prepareOpenApiDocument: () => Promise<void>;
  }
}

/** One OpenAPI document the service serves: its committed copy under openapi/, its URL, its name in /docs. */
export interface OpenApiDocument {
  file: string;
  url: string;
  name: string;
}

/** Where swagger-ui is served. */
const DOCS_PREFIX = '/docs';

/** The service-wide document, generated from the route schemas by this plugin. */
export const SERVICE_OPENAPI_DOCUMENT: OpenApiDocument = {
  file: 'openapi.json',
  url: '/openapi.json',
  name: 'Service (statistics /v1)',
};

export interface OpenApiPluginOptions {
  /** The documents the APIs serve themselves (the register's per version), offered in /docs after the service's. */
  documents: OpenApiDocument[];
  /** Applied to the generated service document before it is served (groups, descriptions, examples). */
  transformDocument?: (document: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * OpenAPI 3.1 generated from the routes' TypeBox schemas (components named by `$id`), served at `/openapi.json`,
 * with swagger-ui at `/docs`. swagger-ui's assets come from node_modules, so the page works offline.
 */
export const openApiPlugin = fp(
  async (app: FastifyInstance, { documents, transformDocument = (document) => document }: OpenApiPluginOptions) => {
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Education statistics and trainee register API',
          version: '1.0.0',
          description:
            'Two public APIs in one service: the read-only statistics data set API under `/v1`, and the ' +
            'trainee teacher register API under `/api/v{version}` (token-protected, one provider per token). ' +
            'The statistics API answers identically at the aliases `/v1.0`, `/api/v1` and `/api/v1.0` (as the ' +
            "publisher's own deployment and its R client eesyapi call it); this document shows the `/v1` paths. " +
            'The register API has one document per version, `/api/{version}/openapi.json`, each in the selector of `/docs`.',
        },
        // The statistics API is open: no token.
        security: [],
        servers: [{ url: '/', description: 'This server' }],
      },
      transformObject: (document) =>
        transformDocument((document as { openapiObject: Record<string, unknown> }).openapiObject),
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
      },
    });
    await app.register(swaggerUi, {
      routePrefix: DOCS_PREFIX,
      uiConfig: {
        validatorUrl: null,
        docExpansion: 'list',
        defaultModelsExpandDepth: -1,
        deepLinking: true,
        plugins: SWAGGER_UI_PLUGINS,
        urls: [SERVICE_OPENAPI_DOCUMENT, ...documents].map(({ url, name }) => ({ url, name })),
      } as Record<string, unknown>,
      staticCSP: true,
      uiHooks: {
        // swagger-ui redirects `static/index.html` to the page by rewriting the URL's end, which a query string
        // defeats (`…/index.html?x` was sent to itself in a loop): answer it here, keeping the query.
        // eslint-disable-next-line @typescript-eslint/no-misused-promises -- swagger-ui types only the callback form; Fastify awaits an async hook
        onRequest: async (request, reply) => {
          if (request.routeOptions.url !== `${DOCS_PREFIX}/static/index.html`) return;
          const queryStart = request.url.indexOf('?');
          return reply.redirect(`${DOCS_PREFIX}/${queryStart < 0 ? '' : request.url.slice(queryStart)}`);
        },
      },
    });
    // The document is the same for the life of the process: made once, then sent as it is, with its tag (304).
    const serviceDocument = once(async () =>
      precompress(Buffer.from(JSON.stringify(app.swagger())), 'application/json; charset=utf-8'),
    );
    app.decorate('prepareOpenApiDocument', async () => {
      await serviceDocument();
    });
    app.get('/openapi.json', { schema: { hide: true } }, async (request, reply) =>
      sendPrecompressed(request, reply, await serviceDocument()),
    );
  },
  { name: 'openapi' },
);
