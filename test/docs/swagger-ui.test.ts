import vm from 'node:vm';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPlugin } from '../../src/plugins/openapi.js';
import { chromiumAvailable, launchChromium, MISSING_CHROMIUM_MESSAGE } from '../explorer/browser.js';

/**
 * A document with a security scheme, as the register's are (the app's own, generated, has none): OpenID Connect,
 * whose discovery document swagger-ui fetches when it resolves the schemes, so that the resolve can be seen.
 */
const SECURED_DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'Secured', version: '1' },
  security: [{ oidc: [] }],
  paths: {
    '/secret': { get: { summary: 'Reads the secret', responses: { 200: { description: 'The secret' } } } },
  },
  components: {
    securitySchemes: { oidc: { type: 'openIdConnect', openIdConnectUrl: '/secured/openid-configuration' } },
  },
};

/** The service's /docs over one route of its own (no security scheme) and the secured document in its selector. */
async function docsApp(): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  await app.register(openApiPlugin, {
    documents: [{ file: 'secured.json', url: '/secured/openapi.json', name: 'Secured' }],
  });
  app.get(
    '/things',
    {
      schema: {
        tags: ['Things'],
        summary: 'Lists the things',
        response: { 200: { type: 'object', properties: { id: { type: 'string' } } } },
      },
    },
    async () => ({ id: 'a' }),
  );
  app.get('/secured/openapi.json', { schema: { hide: true } }, async () => SECURED_DOCUMENT);
  app.get('/secured/openid-configuration', { schema: { hide: true } }, async () => ({
    issuer: 'http://localhost',
    authorization_endpoint: 'http://localhost/authorize',
    token_endpoint: 'http://localhost/token',
    grant_types_supported: ['authorization_code'],
  }));
  await app.ready();
  return app;
}

type ResolveRequest = (path: unknown) => unknown;
interface SwaggerUiPlugin {
  (
    system: unknown,
  ): {
    statePlugins: { spec: { wrapActions: { requestResolvedSubtree: (original: ResolveRequest) => ResolveRequest } } };
  };
}

/** Runs the served initializer as the page would, with swagger-ui replaced by a stand-in that keeps its config. */
function pageConfig(initializer: string, downloadUrl: unknown): { plugins: unknown[] } {
  let config: { plugins: unknown[] } | undefined;
  const swaggerUiBundle = Object.assign(
    (given: { plugins: unknown[] }) => {
      config = given;
      return { initOAuth: () => undefined };
    },
    { presets: { apis: {} }, plugins: { DownloadUrl: downloadUrl } },
  );
  const page = {
    window: { location: { href: 'http://localhost/docs/' } } as { onload?: () => void; location: { href: string } },
    document: { querySelector: () => null, createElement: () => ({ href: '' }), body: {} },
    MutationObserver: class {
      observe() {}
      disconnect() {}
    },
    SwaggerUIBundle: swaggerUiBundle,
    SwaggerUIStandalonePreset: {},
  };
  // A fresh context with none of the server's globals or the build's helpers, as in the browser.
  vm.runInNewContext(initializer, page);
  page.window.onload!();
  return config!;
}

describe('/docs initializer', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await docsApp();
  });
  afterAll(async () => {
    await app?.close();
  });

  it("keeps swagger-ui's document selector and skips resolving absent security schemes, nothing else", async () => {
    const initializer = (await app.inject({ url: '/docs/static/swagger-initializer.js' })).body;
    const downloadUrl = () => ({});
    const { plugins } = pageConfig(initializer, downloadUrl);
    expect(plugins[0]).toBe(downloadUrl);
    const skipAbsentSecuritySchemes = plugins[1] as SwaggerUiPlugin;

    const requested: unknown[] = [];
    const withSchemes = (present: boolean) =>
      skipAbsentSecuritySchemes({
        specSelectors: {
          specJson: () => ({
            hasIn: (path: string[]) => present && path.join('/') === 'components/securitySchemes',
          }),
        },
      }).statePlugins.spec.wrapActions.requestResolvedSubtree((path) => {
        requested.push(path);
        return 'requested';
      });

    const without = withSchemes(false);
    expect(without(['components', 'securitySchemes'])).toBeUndefined();
    expect(without(['paths', '/things', 'get'])).toBe('requested');
    expect(without(['components', 'schemas', 'Thing'])).toBe('requested');
    expect(withSchemes(true)(['components', 'securitySchemes'])).toBe('requested');
    expect(requested).toEqual([
      ['paths', '/things', 'get'],
      ['components', 'schemas', 'Thing'],
      ['components', 'securitySchemes'],
    ]);
  });
});

// Without a browser the page cannot be checked: a developer machine skips it with the reason, CI fails with it.
const inCi = process.env.CI === 'true' || process.env.CI === '1';
const skipBrowser = !chromiumAvailable() && !inCi;
if (skipBrowser) console.warn(`Skipping the /docs browser test: ${MISSING_CHROMIUM_MESSAGE}`);

describe.skipIf(skipBrowser)('/docs in a browser', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await docsApp();
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('opens an operation of the default document, and resolves the security schemes of a document that has them', async () => {
    const { context, close } = await launchChromium();
    try {
      const page = await context.newPage();
      await page.goto(`${base}/docs/`);
      await page.click('.opblock .opblock-summary-control', { timeout: 60000 });
      // The operation's responses come from its resolved definition.
      await page.waitForSelector('.opblock.is-open .responses-table .response', { timeout: 60000 });
      expect(await page.$('.auth-wrapper .authorize')).toBeNull();
      // A document with security schemes still has them resolved (its OpenID Connect discovery fetched).
      const discovery = page.waitForRequest((request) => request.url().endsWith('/secured/openid-configuration'), {
        timeout: 60000,
      });
      await page.selectOption('.download-url-wrapper select', { label: 'Secured' });
      await discovery;
      await page.waitForSelector('.opblock-summary-path[data-path="/secret"]', { timeout: 60000 });
    } finally {
      await close();
    }
  }, 180000);
});
