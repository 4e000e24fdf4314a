import { LRUCache } from 'lru-cache';

/** The default memory budget of the list body cache: all versions of one app together. */
export const DEFAULT_BODY_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Serialized trainee bodies (UTF-8 JSON, ready to write to the socket), keyed by trainee id, lock version and API
 * version. A trainee's body is a function of its row and its placements and degrees only, and every write to any of
 * them bumps `lock_version`, so an entry never goes stale: a changed trainee simply has a new key. The cache is
 * bounded by bytes (body plus key), least recently used entries dropped first; a body larger than an eighth of the
 * budget is not kept. One per app, shared by the version scopes; several instances stay correct because the key
 * comes from the database.
 */
export class TraineeBodyCache {
  private readonly entries: LRUCache<string, Buffer>;

  constructor(readonly maxBytes = DEFAULT_BODY_CACHE_BYTES) {
    this.entries = new LRUCache<string, Buffer>({
      maxSize: maxBytes,
      maxEntrySize: Math.max(1, Math.floor(maxBytes / 8)),
      sizeCalculation: (value, key) => value.byteLength + key.length * 2,
    });
  }

  static key(id: string, lockVersion: number, version: string): string {
    return `${version}\u0000${id}\u0000${lockVersion}`;
  }

  get(key: string): Buffer | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: Buffer): void {
    this.entries.set(key, value);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Bytes held (bodies and keys). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }
}
