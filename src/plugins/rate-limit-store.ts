/**
 * The in-memory rate-limit store (used without REDIS_URL): fixed windows per key, like the library's LocalStore,
 * but a key is never dropped while its window is running. The library's store is an LRU of 5,000 keys, so 6,000
 * requests with made-up keys evicted a real client's live counter and reset its limit (measured: within 9 s); an LRU
 * cannot tell a live key from an expired one, which is why this one is written here.
 *
 * Memory is bounded by `maxKeys` (about 100 bytes a key). When every slot holds a live window, expired windows are
 * swept (at most once a second), and a new key that still finds no room is counted in one shared overflow window:
 * under a flood of distinct keys the newcomers are limited together, and the keys already counted keep theirs.
 */

export interface RateLimitWindow {
  current: number;
  ttl: number;
}

type Callback = (error: Error | null, result: RateLimitWindow) => void;

interface Entry {
  count: number;
  startMs: number;
  windowMs: number;
}

export const OVERFLOW_KEY = '\u0000overflow';
const SWEEP_INTERVAL_MS = 1000;

export class BoundedWindowStore {
  private readonly entries = new Map<string, Entry>();
  private lastSweepMs = 0;

  readonly maxKeys: number;
  private readonly now: () => number;

  /** `new BoundedWindowStore()` is also how the rate-limit library creates it (passing its own options, unused). */
  constructor(options: { maxKeys?: number; now?: () => number } = {}) {
    this.maxKeys = options.maxKeys ?? 100_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  incr(key: string, callback: Callback, windowMs: number, _max?: number): void {
    const nowMs = this.now();
    let entry = this.entries.get(key);
    if (!entry) {
      // The overflow window itself always has a place (one beyond maxKeys).
      if (key !== OVERFLOW_KEY && this.entries.size >= this.maxKeys) this.sweep(nowMs);
      if (key !== OVERFLOW_KEY && this.entries.size >= this.maxKeys) return this.incr(OVERFLOW_KEY, callback, windowMs);
      entry = { count: 0, startMs: nowMs, windowMs };
      this.entries.set(key, entry);
    } else if (entry.startMs + entry.windowMs <= nowMs) {
      entry.count = 0;
      entry.startMs = nowMs;
      entry.windowMs = windowMs;
    }
    entry.count += 1;
    callback(null, { current: entry.count, ttl: entry.startMs + entry.windowMs - nowMs });
  }

  read(key: string, callback: Callback): void {
    const nowMs = this.now();
    const entry = this.entries.get(key);
    if (!entry || entry.startMs + entry.windowMs <= nowMs) return callback(null, { current: 0, ttl: 0 });
    callback(null, { current: entry.count, ttl: entry.startMs + entry.windowMs - nowMs });
  }

  /** The library asks each route for a child store; one store serves them all (keys are already distinct). */
  child(): BoundedWindowStore {
    return this;
  }

  private sweep(nowMs: number): void {
    if (nowMs - this.lastSweepMs < SWEEP_INTERVAL_MS) return;
    this.lastSweepMs = nowMs;
    for (const [key, entry] of this.entries) {
      if (entry.startMs + entry.windowMs <= nowMs) this.entries.delete(key);
    }
  }
}
