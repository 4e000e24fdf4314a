/**
 * The row indexes one app keeps in memory, per version, under a memory budget: least recently used evicted beyond it
 * (each sized by its arrays), and what queries cache inside them (postings, bitsets) kept within the rest of the
 * budget and dropped before any whole index is evicted.
 */
import { LRUCache } from 'lru-cache';
import type { RowIndex } from './row-index.js';

/** An index unused this long gives up its cached postings and bitsets when a busier one needs the room. */
const CACHE_IDLE_MS = 10000;

export class RowIndexCache {
  private indexes: LRUCache<string, RowIndex>;

  constructor(private budget: number) {
    this.indexes = this.newCache();
  }

  private newCache(): LRUCache<string, RowIndex> {
    return new LRUCache<string, RowIndex>({
      maxSize: Math.max(1, this.budget),
      sizeCalculation: (index) => Math.max(1, index.partsBytes),
    });
  }

  get budgetBytes(): number {
    return this.budget;
  }

  /** A new budget; the indexes kept stay, most recently used first, within it. */
  setBudget(bytes: number): void {
    this.budget = bytes;
    // Most recently used first: set in reverse so the order is kept.
    const previous = [...this.indexes.entries()].reverse();
    this.indexes = this.newCache();
    for (const [key, index] of previous) this.indexes.set(key, index);
  }

  get(key: string): RowIndex | undefined {
    return this.indexes.get(key);
  }

  get size(): number {
    return this.indexes.size;
  }

  /** Bytes held by the kept indexes: their arrays and what queries cached in them. */
  get bytes(): number {
    let cached = 0;
    for (const index of this.indexes.values()) cached += index.cachedBytes;
    return this.indexes.calculatedSize + cached;
  }

  /** Keeps an index unless it is larger than the whole budget (then false: its version is not kept in memory). */
  keep(key: string, index: RowIndex): boolean {
    if (index.partsBytes > this.budget) return false;
    index.limitCaching((bytes) => this.mayCache(index, bytes));
    this.indexes.set(key, index);
    this.trimCaches();
    return true;
  }

  /**
   * Sizes a kept index again once its values came in (its arrays grew): lru-cache keeps the size of a value set
   * again as it was, so it is removed and set anew.
   */
  resize(key: string, index: RowIndex): void {
    if (this.indexes.peek(key) !== index || this.indexes.info(key)?.size === Math.max(1, index.partsBytes)) return;
    this.indexes.delete(key);
    this.indexes.set(key, index);
    this.trimCaches();
  }

  delete(key: string): void {
    this.indexes.delete(key);
  }

  clear(): void {
    this.indexes.clear();
  }

  /**
   * Whether `asker` may cache `bytes` more (postings, bitsets) within the budget: room is made by dropping the
   * caches of indexes idle for CACHE_IDLE_MS, least recent first — never by evicting an index. Without room the
   * query works without caching (slower by a pass over the codes), so versions queried in turn do not evict each
   * other (docs/performance.md has the figures).
   */
  private mayCache(asker: RowIndex, bytes: number): boolean {
    let free = this.budget - this.bytes;
    if (bytes <= free) return true;
    const idleBefore = Date.now() - CACHE_IDLE_MS;
    for (const index of this.indexes.rvalues()) {
      if (!index || index === asker || index.lastUsed > idleBefore || index.cachedBytes === 0) continue;
      free += index.dropCached();
      if (bytes <= free) return true;
    }
    return false;
  }

  /** Drops caches, least recently used index first, until arrays and caches are within the budget again. */
  private trimCaches(): void {
    let over = this.bytes - this.budget;
    for (const index of this.indexes.rvalues()) {
      if (over <= 0) return;
      if (index) over -= index.dropCached();
    }
  }
}
