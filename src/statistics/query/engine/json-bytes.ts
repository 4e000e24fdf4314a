/**
 * A growable byte buffer that a query page's JSON is written into, and the few writers it needs: bytes made once
 * (a version's `"key":"value"` fragments, encoded as UTF-8 when they are made), ASCII text, any text as UTF-8, and a
 * scaled integer as the decimal `String(m / 10^scale)` gives. Writing bytes straight into one buffer replaced
 * building the page as strings: a page was a rope of a string per fragment, which V8 had to flatten and encode again
 * before it could be sent (docs/performance.md, "A query page written as bytes").
 */
export interface ByteSink {
  buffer: Buffer;
  /** Bytes written so far (the next write's offset). */
  length: number;
}

export function byteSink(capacity: number): ByteSink {
  return { buffer: Buffer.allocUnsafe(Math.max(64, capacity)), length: 0 };
}

/** Makes room for `bytes` more: a buffer twice as large (or as large as needed) when the current one is full. */
export function reserve(sink: ByteSink, bytes: number): void {
  const needed = sink.length + bytes;
  if (needed <= sink.buffer.length) return;
  const larger = Buffer.allocUnsafe(Math.max(needed, 2 * sink.buffer.length));
  sink.buffer.copy(larger, 0, 0, sink.length);
  sink.buffer = larger;
}

/** What was written: a view of the sink's buffer, not a copy. */
export function written(sink: ByteSink): Buffer {
  return sink.buffer.subarray(0, sink.length);
}

/**
 * Up to this length a byte loop copies faster than `Uint8Array.set`, whose call costs about as much as a loop over
 * 8 bytes and the same for any length a fragment has (docs/performance.md, "A query page written as bytes").
 */
const LOOP_COPY_MAX = 8;

/** Copies bytes in (room reserved by the caller). */
export function putBytes(sink: ByteSink, bytes: Uint8Array): void {
  const { buffer } = sink;
  const at = sink.length;
  const n = bytes.length;
  if (n > LOOP_COPY_MAX) buffer.set(bytes, at);
  else for (let i = 0; i < n; i++) buffer[at + i] = bytes[i]!;
  sink.length = at + n;
}

/** Writes text known to be ASCII (a number's `String`), one byte per character (room reserved by the caller). */
export function putAscii(sink: ByteSink, text: string): void {
  const { buffer } = sink;
  const at = sink.length;
  for (let i = 0; i < text.length; i++) buffer[at + i] = text.charCodeAt(i);
  sink.length = at + text.length;
}

/** Writes any text as UTF-8, making room for it first. */
export function putText(sink: ByteSink, text: string): void {
  reserve(sink, 3 * text.length);
  sink.length += sink.buffer.write(text, sink.length, 'utf8');
}

/** UTF-8 bytes of a text made once (fragments, quoted indicator texts). */
export function utf8(text: string): Uint8Array {
  return Buffer.from(text, 'utf8');
}

const POWERS_OF_TEN = [1, 10, 100, 1000, 1e4, 1e5, 1e6];

/**
 * The largest scale `putScaledDecimal` writes. Beyond it a value may be under 10^-6, which `String` writes with an
 * exponent (`1e-7`).
 */
export const MAX_PLAIN_SCALE = POWERS_OF_TEN.length - 1;

/** Bytes `putScaledDecimal` writes at most: a sign, ten digits of an int32 and a decimal point. */
export const MAX_SCALED_DECIMAL_BYTES = 12;

/** Writes a non-negative integer's digits. */
function putDigits(sink: ByteSink, value: number): void {
  const { buffer } = sink;
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let at = sink.length + digits;
  let rest = value;
  do {
    const next = Math.floor(rest / 10);
    buffer[--at] = 48 + (rest - 10 * next);
    rest = next;
  } while (rest > 0);
  sink.length += digits;
}

/**
 * Writes what `String(m / 10 ** scale)` gives for an int32 `m` and a scale of at most MAX_PLAIN_SCALE (room reserved
 * by the caller): the decimal of m with the point `scale` digits from the right and no trailing zeros after it. The
 * division is correctly rounded and m has at most ten digits, so `String` gives exactly that decimal; at these
 * scales a value other than 0 is at least 10^-6, which `String` writes without an exponent.
 */
export function putScaledDecimal(sink: ByteSink, m: number, scale: number): void {
  let magnitude = m;
  if (m < 0) {
    sink.buffer[sink.length++] = 45; // '-'
    magnitude = -m;
  }
  if (scale === 0) {
    putDigits(sink, magnitude);
    return;
  }
  const power = POWERS_OF_TEN[scale]!;
  const whole = Math.floor(magnitude / power);
  let fraction = magnitude - whole * power;
  putDigits(sink, whole);
  if (fraction === 0) return;
  let digits = scale;
  while (fraction % 10 === 0) {
    fraction /= 10;
    digits--;
  }
  const { buffer } = sink;
  buffer[sink.length] = 46; // '.'
  const end = sink.length + 1 + digits;
  for (let at = end - 1; at > sink.length; at--) {
    const next = Math.floor(fraction / 10);
    buffer[at] = 48 + (fraction - 10 * next);
    fraction = next;
  }
  sink.length = end;
}
