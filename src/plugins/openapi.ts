import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { REGISTER_VERSIONS } from '../register/versions/index.js';

/** Every OpenAPI document the service serves, as [file under openapi/, URL]; committed copies are kept in sync by a test. */
export const OPENAPI_DOCUMENTS: Array<[string, string]> = [
  ['openapi.json', '/openapi.json'],
  // The register API: one document per version (src/register/openapi).
  ...REGISTER_VERSIONS.map((version): [string, string] => [`register-${version}.json`, `/api/${version}/openapi.json`]),
];

/** Where swagger-ui is served. */
const DOCS_PREFIX = '/docs';

/** The documents /docs offers in its selector (swagger-ui `urls`), the service-wide one first. */
const DOCS_URLS = OPENAPI_DOCUMENTS.map(([file, url]) => ({
  url,
  name: file === 'openapi.json' ? 'Service (statistics /v1)' : `Register API ${file.replace(/^register-|\.json$/g, '')}`,
}));

/**
 * OpenAPI 3.1 generated from the routes' TypeBox schemas (components named by `$id`), served at `/openapi.json`,
 * with swagger-ui at `/docs`. swagger-ui's assets come from node_modules, so the page works offline.
 */
export const openApiPlugin = fp(
  async (app: FastifyInstance) => {
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
            "publisher's own deployment and its R client eesyapi call it); this document shows the `/v1` paths.",
        },
        tags: [
          { name: 'Publications', description: 'Statistics publications with data available for querying' },
          { name: 'Data sets', description: 'Statistics data sets, their versions, changes, metadata and data' },
          { name: 'Register', description: 'Trainee teacher register (per provider, token-protected)' },
          { name: 'Health', description: 'Liveness and readiness' },
        ],
        components: {
          securitySchemes: {
            registerToken: { type: 'http', scheme: 'bearer', description: 'A provider token of the register API' },
          },
        },
      },
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
      },
    });
    await app.register(swaggerUi, {
      routePrefix: DOCS_PREFIX,
      uiConfig: { validatorUrl: null, docExpansion: 'list', deepLinking: true, urls: DOCS_URLS } as Record<string, unknown>,
      staticCSP: true,
      uiHooks: {
        // swagger-ui redirects `static/index.html` to the page by rewriting the URL's end, which a query string
        // defeats (`…/index.html?x` was sent to itself in a loop): answer it here, keeping the query.
        onRequest: async (request, reply) => {
          if (request.routeOptions.url !== `${DOCS_PREFIX}/static/index.html`) return;
          const queryStart = request.url.indexOf('?');
          return reply.redirect(`${DOCS_PREFIX}/${queryStart < 0 ? '' : request.url.slice(queryStart)}`);
        },
      },
    });
    app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  },
  { name: 'openapi' },
);
