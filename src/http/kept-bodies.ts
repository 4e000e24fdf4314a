/**
 * Response bodies that never change for their key (a version's metadata, written by its import and never changed
 * after), kept serialized, tagged and compressed, so that asking again costs no serialization, hashing or compression
 * (what they cost per request: docs/performance.md, "Metadata and catalogue answers").
 */
import { LRUCache } from 'lru-cache';
import { precompress, type CompressionLevels, type PrecompressedBody } from './precompressed.js';

/** Made on a request (the first for its key) rather than at start: levels whose cost a client waits for once. */
const MADE_ON_A_REQUEST: CompressionLevels = { gzip: 6, brotli: 5 };

/** What Fastify's `reply.serialize` gives. */
type Serialized = string | Buffer | ArrayBuffer;

function asBuffer(serialized: Serialized): Buffer {
  if (typeof serialized === 'string') return Buffer.from(serialized);
  return Buffer.isBuffer(serialized) ? serialized : Buffer.from(serialized);
}

export class KeptBodies {
  private readonly bodies: LRUCache<string, PrecompressedBody, () => Promise<Serialized>>;

  /** At most `maxBytes` of bodies and their compressed forms (least recently used dropped; a larger one is not kept). */
  constructor(maxBytes: number) {
    this.bodies = new LRUCache<string, PrecompressedBody, () => Promise<Serialized>>({
      maxSize: maxBytes,
      sizeCalculation: (kept) => 256 + kept.body.length + kept.gzip.length + kept.br.length,
      // Concurrent first requests for a key share one make (lru-cache's fetch); a failed make is not kept.
      fetchMethod: async (_key, _stale, { context: serialize }) =>
        precompress(asBuffer(await serialize()), 'application/json; charset=utf-8', MADE_ON_A_REQUEST),
    });
  }

  /** Bytes held. */
  get bytes(): number {
    return this.bodies.calculatedSize;
  }

  /** The body kept for `key`, or the JSON `serialize` makes for it, kept. */
  async fetch(key: string, serialize: () => Promise<Serialized>): Promise<PrecompressedBody> {
    const kept = await this.bodies.fetch(key, { context: serialize });
    // fetch resolves undefined only when its fetchMethod does, which this one never does.
    if (!kept) throw new Error(`No body for ${key}`);
    return kept;
  }
}
