import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  byteSink,
  MAX_PLAIN_SCALE,
  MAX_SCALED_DECIMAL_BYTES,
  putBytes,
  putScaledDecimal,
  putText,
  reserve,
  utf8,
  written,
} from '../../../../src/statistics/query/engine/json-bytes.js';

/** What the row index held as text before it wrote digits itself: `String(m / 10^scale)`. */
const asString = (m: number, scale: number) => String(scale === 0 ? m : m / 10 ** scale);

function scaledDecimal(m: number, scale: number): string {
  const sink = byteSink(0);
  putScaledDecimal(sink, m, scale);
  expect(sink.length).toBeLessThanOrEqual(MAX_SCALED_DECIMAL_BYTES);
  return written(sink).toString('latin1');
}

describe('the bytes a query page is written into', () => {
  it('writes a scaled int32 as String(m / 10^scale) does, at every scale it takes', () => {
    const int32 = fc.oneof(
      fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
      fc.integer({ min: -1000, max: 1000 }),
      fc.integer({ min: -99999, max: 99999 }).map((n) => n * 1000),
      fc.constantFrom(0, 1, -1, 10, 100, 1_000_000, -1_000_000, 2 ** 31 - 1, -(2 ** 31), 1_000_001, 1_234_560),
    );
    fc.assert(
      fc.property(int32, fc.integer({ min: 0, max: MAX_PLAIN_SCALE }), (m, scale) => {
        expect(scaledDecimal(m, scale)).toBe(asString(m, scale));
      }),
      { numRuns: 5000 },
    );
  });

  it('grows its buffer as writes need room, keeping what was written', () => {
    const sink = byteSink(0);
    const expected: string[] = [];
    for (let i = 0; i < 2000; i++) {
      const text = `"é${'x'.repeat(i % 50)}€${i}"`;
      if (i % 2 === 0) putText(sink, text);
      else {
        const bytes = utf8(text);
        reserve(sink, bytes.length);
        putBytes(sink, bytes);
      }
      expected.push(text);
    }
    expect(written(sink).toString('utf8')).toBe(expected.join(''));
  });
});
