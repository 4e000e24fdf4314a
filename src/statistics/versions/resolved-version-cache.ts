import { LRUCache } from 'lru-cache';
import type { Executor } from '../../db/database.js';
import { resolveDataSetVersion, type DataSetVersionRow, type ResolveVersionOptions } from './access.js';
import { approximateHeldBytes } from '../held-bytes.js';

/**
 * Resolved public data set versions (the `dataSetVersion` a request names, or the latest), reused for `ttlMs`
 * (QUERY_VERSION_CACHE_MS) so a status change shows within that time; a `ttlMs` of 0 keeps nothing. Bounded by
 * bytes: the key is client input.
 */
export class ResolvedVersionCache<V extends object> {
  private readonly entries: LRUCache<string, V>;

  constructor(
    private readonly ttlMs: number,
    maxBytes = 8 * 1024 * 1024,
  ) {
    this.entries = new LRUCache<string, V>({
      maxSize: maxBytes,
      ttl: Math.max(1, ttlMs),
      // The key (client input, up to the URL's length) and the row's fields, approximately.
      sizeCalculation: (value, key) => 256 + key.length * 2 + approximateHeldBytes(value),
    });
  }

  /** Bytes held (approximate). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: V): void {
    if (this.ttlMs > 0) this.entries.set(key, value);
  }
}

/**
 * The version a request means (resolveDataSetVersion), reusing a public resolution of the same data set, selector and
 * policy from `cache`; a resolution through a preview token is neither reused nor kept (the token may be revoked).
 */
export async function resolveVersionReused(
  db: Executor,
  cache: ResolvedVersionCache<DataSetVersionRow>,
  options: ResolveVersionOptions & { policy: NonNullable<ResolveVersionOptions['policy']> },
): Promise<DataSetVersionRow> {
  const key = `${options.policy}|${options.source ?? 'query'}|${options.dataSetId}|${options.dataSetVersion ?? ''}`;
  if (!options.previewToken) {
    const cached = cache.get(key);
    if (cached) return cached;
  }
  const { version, viaPreviewToken } = await resolveDataSetVersion(db, options);
  if (!viaPreviewToken) cache.set(key, version);
  return version;
}
