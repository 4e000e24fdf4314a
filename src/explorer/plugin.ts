import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../errors.js';
import { chosenEncoding } from '../http/downloads.js';
import { buildExplorerAssets, type ExplorerAsset, type ExplorerAssets } from './build.js';

export interface ExplorerOptions {
  /** Built assets to serve; built in memory at registration when absent (tests may pass one build to many apps). */
  assets?: ExplorerAssets;
}

/**
 * The explorer's Content-Security-Policy: everything from this origin only (the page calls the same server's /v1),
 * no inline script or style, no framing.
 */
export const EXPLORER_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The paths the client renders (deep links), each answered with the page shell. */
export const EXPLORER_PAGES = [
  '/',
  '/data-sets/:dataSetId',
  '/data-sets/:dataSetId/query',
  '/publications/:publicationId',
] as const;
/** The query builder's path: its shell also preloads the query page's code. */
const QUERY_PAGE: (typeof EXPLORER_PAGES)[number] = '/data-sets/:dataSetId/query';

function send(request: FastifyRequest, reply: FastifyReply, file: ExplorerAsset) {
  reply.header('content-type', file.contentType);
  reply.header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  if (file.gzip) {
    reply.header('vary', 'Accept-Encoding');
    const coding = chosenEncoding(request.headers['accept-encoding'], file.br ? ['br', 'gzip'] : ['gzip']);
    if (coding === 'br' && file.br) return reply.header('content-encoding', 'br').send(file.br);
    if (coding === 'gzip') return reply.header('content-encoding', 'gzip').send(file.gzip);
  }
  return reply.send(file.body);
}

let processBuild: Promise<ExplorerAssets> | undefined;

/**
 * The assets built once per process: they depend only on the client source, and a build costs about 0.1 s of CPU,
 * which every app of a test run (dozens per file) would otherwise pay again. A failed build is not kept.
 */
function processExplorerAssets(): Promise<ExplorerAssets> {
  processBuild ??= buildExplorerAssets().catch((error: unknown) => {
    processBuild = undefined;
    throw error;
  });
  return processBuild;
}

/**
 * The data explorer: a page at `/` (and its deep links) on top of the public statistics API, plus its static files
 * under `/assets/`. Registered at the root scope; its hooks (CSP) apply to its own routes only.
 */
export const explorerPlugin: FastifyPluginAsync<ExplorerOptions> = async (app, options) => {
  // Built in the background (esbuild and compression took 0.3 s of the start): the APIs answer meanwhile, and the
  // explorer's first request waits for the build. A failed build answers 500 and is tried again on the next request.
  const assetsOf = () => (options.assets ? Promise.resolve(options.assets) : processExplorerAssets());
  assetsOf().catch((error: unknown) => app.log.error({ err: error }, 'explorer build failed'));

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('content-security-policy', EXPLORER_CSP);
    reply.header('x-frame-options', 'DENY');
    return payload;
  });

  for (const url of EXPLORER_PAGES) {
    app.get(url, { schema: { hide: true } }, async (request, reply) => {
      const assets = await assetsOf();
      return send(request, reply, url === QUERY_PAGE ? assets.queryHtml : assets.html);
    });
  }
  app.get('/assets/*', { schema: { hide: true } }, async (request, reply) => {
    const name = (request.params as { '*': string })['*'];
    const file = (await assetsOf()).files.get(name);
    if (!file) throw new NotFoundError(`No explorer file ${name}`);
    return send(request, reply, file);
  });
};
