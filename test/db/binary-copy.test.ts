import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readBinaryCopy } from '../../src/db/binary-copy.js';

/** A binary COPY stream as PostgreSQL writes it: signature, flags, empty extension, tuples of int4 and text, trailer. */
function copyStream(tuples: Array<[number, string | null]>): Buffer {
  const parts = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.from([0, 0, 0, 0, 0, 0, 0, 0])];
  for (const [n, text] of tuples) {
    const head = Buffer.alloc(2 + 4 + 4 + 4);
    head.writeInt16BE(2, 0);
    head.writeInt32BE(4, 2);
    head.writeInt32BE(n, 6);
    const bytes = text === null ? Buffer.alloc(0) : Buffer.from(text, 'utf8');
    head.writeInt32BE(text === null ? -1 : bytes.length, 10);
    parts.push(head, bytes);
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

async function read(stream: Buffer, chunkSize: number, fields = 2) {
  const chunks = [];
  for (let at = 0; at < stream.length; at += chunkSize) chunks.push(stream.subarray(at, at + chunkSize));
  const seen: Array<[number, string | null]> = [];
  const count = await readBinaryCopy(Readable.from(chunks), fields, (buffer, offsets, lengths) => {
    seen.push([buffer.readInt32BE(offsets[0]!), lengths[1]! < 0 ? null : buffer.toString('utf8', offsets[1]!, offsets[1]! + lengths[1]!)]);
  });
  return { count, seen };
}

describe('readBinaryCopy', () => {
  const tuples: Array<[number, string | null]> = [[1, '12.5'], [-7, ''], [2147483647, null], [3, 'x'], [4, 'Ünïcode ✓']];
  it('gives every tuple in order, whichever way the stream is cut', async () => {
    const stream = copyStream(tuples);
    for (const size of [1, 2, 3, 7, 19, 20, 64, stream.length]) expect(await read(stream, size)).toEqual({ count: tuples.length, seen: tuples });
  });

  it('refuses a stream that is not binary COPY, has other tuples than expected, or ends early', async () => {
    await expect(read(Buffer.from('id,name\n1,a\n0123456789'), 8)).rejects.toThrow(/Not a binary COPY/);
    await expect(read(copyStream(tuples), 16, 3)).rejects.toThrow(/has 2 fields, expected 3/);
    const whole = copyStream(tuples);
    await expect(read(whole.subarray(0, whole.length - 2), 16)).rejects.toThrow(/ended before its trailer/);
  });
});
