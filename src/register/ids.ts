/** Record ids of the register. */
import { randomBytes } from 'node:crypto';

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A 24-character base58 slug, like the real `SecureRandom.base58(24)` ids of trainees, degrees and placements. */
export function newSlug(length = 24): string {
  let slug = '';
  while (slug.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 232 = 4 × 58: rejecting larger bytes keeps every character equally likely.
      if (byte < 232 && slug.length < length) slug += BASE58[byte % 58];
    }
  }
  return slug;
}
