import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidUtf8Error, invalidUtf8Offset, Utf8ChunkDecoder } from '../../../src/statistics/import/utf8-chunks.js';
import { cutAt } from '../../helpers/cut.js';

/** The whole byte string through the platform's strict decoder: its text, or null where it refuses the bytes. */
function referenceDecode(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** The same bytes in the given chunks through `Utf8ChunkDecoder`: its text, or null where it throws. */
function chunkedDecode(chunks: Uint8Array[]): string | null {
  const decoder = new Utf8ChunkDecoder();
  let text = '';
  try {
    for (const chunk of chunks) text += decoder.decode(Buffer.from(chunk));
    decoder.end();
    return text;
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidUtf8Error);
    return null;
  }
}

// Bytes near UTF-8's edges: ASCII, every lead and continuation range's ends, and text with characters of 1–4 bytes.
const edgeByte = fc.constantFrom(
  0x00,
  0x0a,
  0x41,
  0x7f,
  0x80,
  0x8f,
  0x90,
  0x9f,
  0xa0,
  0xbf,
  0xc0,
  0xc1,
  0xc2,
  0xdf,
  0xe0,
  0xed,
  0xef,
  0xf0,
  0xf4,
  0xf5,
  0xff,
);
const piece = fc.oneof(
  fc.string({ unit: 'grapheme' }).map((s) => [...Buffer.from(s)]),
  fc.array(edgeByte, { maxLength: 4 }),
);
const bytesOf = fc.array(piece, { maxLength: 12 }).map((pieces) => Uint8Array.from(pieces.flat()));

describe('strict UTF-8 decoding of chunks', () => {
  it('agrees with the platform decoder (fatal) on any bytes cut anywhere: the same text, or a refusal', () => {
    fc.assert(
      fc.property(bytesOf, fc.array(fc.nat(), { maxLength: 6 }), (bytes, points) => {
        expect(chunkedDecode(cutAt(bytes, points))).toBe(referenceDecode(bytes));
      }),
      { numRuns: 3000 },
    );
  });

  it('decodes a character split at each of its bytes, and keeps a BOM as text', () => {
    const bytes = Buffer.from('\uFEFFa,é,€,😀\n');
    for (let at = 0; at <= bytes.length; at++)
      expect(chunkedDecode([bytes.subarray(0, at), bytes.subarray(at)])).toBe('\uFEFFa,é,€,😀\n');
  });

  it('says where the bad byte is in the chunk it was given, and that a file ending mid-character is truncated', () => {
    const decoder = new Utf8ChunkDecoder();
    expect(decoder.decode(Buffer.from([0x61, 0xe2, 0x82]))).toBe('a');
    expect(() => decoder.decode(Buffer.from([0xac, 0x62, 0x0a, 0x63, 0xff]))).toThrow(
      expect.objectContaining({ offset: 4, truncated: false }),
    );
    const truncated = new Utf8ChunkDecoder();
    expect(truncated.decode(Buffer.from([0x61, 0xf0, 0x9f]))).toBe('a');
    expect(() => truncated.end()).toThrow(expect.objectContaining({ truncated: true }));
  });

  it('finds the first invalid byte: overlong forms, surrogates, beyond U+10FFFF, a stray continuation', () => {
    expect(invalidUtf8Offset(Buffer.from([0x61, 0xc0, 0x80]))).toBe(1);
    expect(invalidUtf8Offset(Buffer.from([0x61, 0x62, 0xe0, 0x80, 0x80]))).toBe(2);
    expect(invalidUtf8Offset(Buffer.from([0xed, 0xa0, 0x80]))).toBe(0);
    expect(invalidUtf8Offset(Buffer.from([0x20, 0xf4, 0x90, 0x80, 0x80]))).toBe(1);
    expect(invalidUtf8Offset(Buffer.from([0x20, 0x20, 0x20, 0x80]))).toBe(3);
    expect(invalidUtf8Offset(Buffer.from('café €'))).toBe(Buffer.byteLength('café €'));
  });
});
