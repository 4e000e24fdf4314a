import { isUtf8 } from 'node:buffer';

/** Bytes that are not UTF-8, or a text that ended in the middle of a character. */
export class InvalidUtf8Error extends Error {
  constructor(
    /** Offset in the chunk last passed to `decode` of the first byte that is not valid UTF-8 (0 for the held tail). */
    readonly offset: number,
    /** The file ended in the middle of a character (only from `end`). */
    readonly truncated: boolean,
  ) {
    super(truncated ? 'UTF-8 text ends in the middle of a character' : 'bytes that are not UTF-8');
  }
}

const NOTHING_HELD = Buffer.alloc(0);

/** How many bytes the character a UTF-8 lead byte starts takes; 0 for a byte that cannot start one. */
function characterLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** Whether the bytes from `start` to the end can begin a valid character (the ranges of RFC 3629's table). */
function isCharacterPrefix(bytes: Uint8Array, start: number): boolean {
  const lead = bytes[start]!;
  const length = characterLength(lead);
  if (length < 2 || bytes.length - start >= length) return false;
  for (let i = start + 1; i < bytes.length; i++) {
    const b = bytes[i]!;
    let low = 0x80;
    let high = 0xbf;
    if (i === start + 1) {
      // No overlong forms, no UTF-16 surrogates, nothing past U+10FFFF.
      if (lead === 0xe0) low = 0xa0;
      else if (lead === 0xed) high = 0x9f;
      else if (lead === 0xf0) low = 0x90;
      else if (lead === 0xf4) high = 0x8f;
    }
    if (b < low || b > high) return false;
  }
  return true;
}

/** Bytes at the end of `bytes` that begin a character the next chunk completes (0 to 3). */
function heldTailLength(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) !== 0x80) return isCharacterPrefix(bytes, bytes.length - back) ? back : 0;
  }
  return 0;
}

/** The offset of the first byte that does not continue valid UTF-8 in `bytes`, or `bytes.length` when none. */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; ) {
    const length = characterLength(bytes[i]!);
    if (length === 0) return i;
    if (length === 1) {
      i++;
      continue;
    }
    if (i + length > bytes.length) return isCharacterPrefix(bytes, i) ? bytes.length : i;
    if (!isCharacterPrefix(bytes.subarray(i, i + length - 1), 0) || (bytes[i + length - 1]! & 0xc0) !== 0x80) return i;
    i += length;
  }
  return bytes.length;
}

/**
 * Strict UTF-8 decoding of a file read in chunks: what `new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })`
 * with `{ stream: true }` does, written out because that decoder is slow where it matters. Node's TextDecoder goes
 * through ICU to UTF-16, so even an ASCII file becomes two-byte strings, and every cell the CSV parser slices from
 * them, every dictionary key and comparison, pays for it (docs/decisions/0003-strict-utf8-in-chunks.md). Here the
 * bytes are checked with `buffer.isUtf8` (simdutf) and decoded with `Buffer#toString('utf8')`, which gives one-byte
 * strings for ASCII.
 *
 * `decode` and `end` throw `InvalidUtf8Error`.
 */
export class Utf8ChunkDecoder {
  /** The start of a character whose last bytes are in the next chunk. */
  private held: Buffer = NOTHING_HELD;

  decode(chunk: Buffer): string {
    const heldLength = this.held.length;
    const bytes = heldLength === 0 ? chunk : Buffer.concat([this.held, chunk]);
    const whole = bytes.length - heldTailLength(bytes);
    const complete = bytes.subarray(0, whole);
    if (!isUtf8(complete)) throw new InvalidUtf8Error(Math.max(0, invalidUtf8Offset(complete) - heldLength), false);
    this.held = whole === bytes.length ? NOTHING_HELD : Buffer.from(bytes.subarray(whole));
    return complete.toString('utf8');
  }

  /** The text is over: an unfinished character is an error. */
  end(): void {
    if (this.held.length > 0) throw new InvalidUtf8Error(0, true);
  }
}
