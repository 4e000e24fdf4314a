import { describe, expect, it } from 'vitest';
import { BoundedWindowStore, type RateLimitWindow } from '../../src/plugins/rate-limit-store.js';

function count(store: BoundedWindowStore, key: string, windowMs = 60_000): RateLimitWindow {
  let result: RateLimitWindow | undefined;
  store.incr(key, (_error, window) => (result = window), windowMs);
  return result!;
}

describe('the in-memory rate-limit store', () => {
  it('keeps a live counter through 6,000 other keys (the library LRU of 5,000 reset it)', () => {
    const store = new BoundedWindowStore();
    for (let i = 0; i < 101; i++) count(store, 'register:provider:1');
    for (let i = 0; i < 6000; i++) count(store, `register:ip:10.0.${i >> 8}.${i & 255}`);
    expect(count(store, 'register:provider:1').current).toBe(102);
  });

  it('when full of live windows, counts newcomers together in one overflow window and evicts no live key', () => {
    let now = 0;
    const store = new BoundedWindowStore({ maxKeys: 3, now: () => now });
    count(store, 'a');
    count(store, 'b');
    count(store, 'c');
    expect(count(store, 'd').current).toBe(1);
    expect(count(store, 'e').current).toBe(2);
    expect(count(store, 'a').current).toBe(2);
    expect(store.size).toBe(4); // a, b, c and the overflow window
    // Once their windows have ended, expired keys make room again.
    now = 61_000;
    expect(count(store, 'f').current).toBe(1);
    expect(count(store, 'f').current).toBe(2);
  });

  it('starts a new window when the old one has ended, and reports the time left', () => {
    let now = 1000;
    const store = new BoundedWindowStore({ now: () => now });
    expect(count(store, 'k', 10_000)).toEqual({ current: 1, ttl: 10_000 });
    now = 4000;
    expect(count(store, 'k', 10_000)).toEqual({ current: 2, ttl: 7000 });
    now = 11_000;
    expect(count(store, 'k', 10_000)).toEqual({ current: 1, ttl: 10_000 });
  });
});
