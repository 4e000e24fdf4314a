/** Record ids of the register. */
import { randomFillSync } from 'node:crypto';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

// Random bytes are drawn 4 KiB at a time (as crypto.randomUUID keeps its own cache): a create makes three slugs, and a
// call to the system's generator per slug showed in CPU profiles of creates (docs/performance.md, Register API).
const pool = Buffer.alloc(4096);
let next = pool.length;

function randomByte(): number {
  if (next === pool.length) {
    randomFillSync(pool);
    next = 0;
  }
  return pool[next++]!;
}

/** A 24-character base58 slug, like the real `SecureRandom.base58(24)` ids of trainees, degrees and placements. */
export function newSlug(length = 24): string {
  let slug = '';
  while (slug.length < length) {
    const byte = randomByte();
    // 232 = 4 × 58: rejecting larger bytes keeps every character equally likely.
    if (byte < 232) slug += BASE58[byte % 58];
  }
  return slug;
}
