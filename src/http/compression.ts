/**
 * How dynamic responses are compressed: the settings of the global compression plugin (plugins/hardening.ts), and
 * the one path it lacks, a large body held in memory compressed in one call off the event loop.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { chosenEncoding } from './downloads.js';
import { addVary } from './vary.js';

/**
 * Low levels for a CPU-bound service: gzip 3 and brotli 3 cost a third to a half of the defaults' CPU for a response
 * a few percent larger (docs/performance.md); whole-version CSV downloads gain the most.
 */
export const ZLIB_OPTIONS: zlib.ZlibOptions = { level: 3 };
export const BROTLI_OPTIONS: zlib.BrotliOptions = {
  params: {
    [zlib.constants.BROTLI_PARAM_QUALITY]: 3,
    [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
  },
};

/** Smaller bodies are sent as they are. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

/**
 * A body in memory up to this size (a query page of the default 1,000 rows fits) is compressed in one call on the
 * event loop by the plugin: a zlib stream per response (the plugin's path above its two-core default of 8 kB) costs
 * more in set-up, hand-offs and its pipeline's abort signal than compressing such a page does.
 */
export const COMPRESS_ON_LOOP_MAX_BYTES = 512 * 1024;

/** zlib's one-call compressors as promises (on libuv's thread pool); precompressed.ts uses them too. */
export const gzipAsync = promisify(zlib.gzip);
const deflateAsync = promisify(zlib.deflate);
export const brotliAsync = promisify(zlib.brotliCompress);

/** A body compressed in one call on libuv's thread pool, with the plugin's levels. */
const compressOffLoop: Record<'br' | 'gzip' | 'deflate', (body: Buffer) => Promise<Buffer>> = {
  br: (body) =>
    brotliAsync(body, {
      params: { ...BROTLI_OPTIONS.params, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  gzip: (body) => gzipAsync(body, ZLIB_OPTIONS),
  deflate: (body) => deflateAsync(body, ZLIB_OPTIONS),
};

/**
 * Sends a body held in memory. One larger than the plugin compresses on the event loop (a page of 10,000 rows) is
 * compressed here in one call on libuv's thread pool, with the plugin's encodings and levels: the plugin would stream
 * it through zlib in 16 KB chunks, each a trip to the pool and back, which took the client longer to receive
 * (docs/performance.md, "Figures behind the code's choices"). Smaller bodies go to the plugin as they are.
 */
export async function sendBody(request: FastifyRequest, reply: FastifyReply, body: Buffer): Promise<FastifyReply> {
  // The plugin's rule: a client may ask for a body as it is.
  if (body.length <= COMPRESS_ON_LOOP_MAX_BYTES || request.headers['x-no-compression'] !== undefined)
    return reply.send(body);
  const coding = chosenEncoding(request.headers['accept-encoding'], ['br', 'gzip', 'deflate']);
  if (!coding) return reply.send(body);
  const compressed = await compressOffLoop[coding](body);
  addVary(reply, 'Accept-Encoding');
  return reply.header('content-encoding', coding).header('content-length', compressed.length).send(compressed);
}
