/**
 * A response body that never changes while the process runs (an OpenAPI document, a static script), kept in memory
 * with its entity tag and its gzip and brotli forms, made once: each request is then answered without serializing or
 * compressing anything (the global compression plugin leaves a response with a Content-Encoding alone).
 */
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ifNoneMatchMatches, weakEtag } from './conditional.js';
import { addVary } from './vary.js';
import { chosenEncoding } from './downloads.js';
import { brotliAsync, gzipAsync } from './compression.js';

export interface PrecompressedBody {
  contentType: string;
  body: Buffer;
  gzip: Buffer;
  br: Buffer;
  /** Weak: the same entity whichever encoding is sent. */
  etag: string;
}

/** How hard to compress: the explorer's levels for what is made once per process (the default). */
export interface CompressionLevels {
  gzip: number;
  brotli: number;
}
const MADE_ONCE_PER_PROCESS: CompressionLevels = { gzip: 9, brotli: 10 };

/** Compressed off the event loop (libuv's thread pool): made once, sent many times. */
export async function precompress(
  body: Buffer,
  contentType: string,
  levels: CompressionLevels = MADE_ONCE_PER_PROCESS,
): Promise<PrecompressedBody> {
  const [gzip, br] = await Promise.all([
    gzipAsync(body, { level: levels.gzip }),
    brotliAsync(body, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: levels.brotli,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
  ]);
  return { contentType, body, gzip, br, etag: weakEtag(contentType, body.toString('latin1')) };
}

/**
 * `make` run once, its promise shared by every caller; a failure is not kept (the next call tries again), so a
 * request never waits for a make that has already failed.
 */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make().catch((error: unknown) => {
      made = undefined;
      throw error;
    });
    return made;
  };
}

/**
 * Answers with `file`: 304 when the request's If-None-Match names its tag; else brotli, gzip or the plain body, as
 * the client accepts. By default caches revalidate every use (`no-cache`): the tag changes with a deploy.
 */
export function sendPrecompressed(
  request: FastifyRequest,
  reply: FastifyReply,
  file: PrecompressedBody,
  caching: { cacheControl: string; vary: string[] } = { cacheControl: 'no-cache', vary: [] },
): FastifyReply {
  reply.header('etag', file.etag);
  reply.header('cache-control', caching.cacheControl);
  addVary(reply, 'Accept-Encoding', ...caching.vary);
  if (ifNoneMatchMatches(request, file.etag)) return reply.code(304).send();
  reply.type(file.contentType);
  const coding = chosenEncoding(request.headers['accept-encoding'], ['br', 'gzip']);
  if (coding) return reply.header('content-encoding', coding).send(file[coding]);
  return reply.send(file.body);
}
