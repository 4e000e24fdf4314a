import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BinaryCopyWriter, readBinaryCopy, streamBinaryCopyField } from '../../src/db/binary-copy.js';

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
    seen.push([
      buffer.readInt32BE(offsets[0]),
      lengths[1]! < 0 ? null : buffer.toString('utf8', offsets[1], offsets[1]! + lengths[1]!),
    ]);
  });
  return { count, seen };
}

describe('readBinaryCopy', () => {
  const tuples: Array<[number, string | null]> = [
    [1, '12.5'],
    [-7, ''],
    [2147483647, null],
    [3, 'x'],
    [4, 'Ünïcode ✓'],
  ];
  it('gives every tuple in order, whichever way the stream is cut', async () => {
    const stream = copyStream(tuples);
    for (const size of [1, 2, 3, 7, 19, 20, 64, stream.length])
      expect(await read(stream, size)).toEqual({ count: tuples.length, seen: tuples });
  });

  it('refuses a stream that is not binary COPY, has other tuples than expected, or ends early', async () => {
    await expect(read(Buffer.from('id,name\n1,a\n0123456789'), 8)).rejects.toThrow(/Not a binary COPY/);
    await expect(read(copyStream(tuples), 16, 3)).rejects.toThrow(/has 2 fields, expected 3/);
    const whole = copyStream(tuples);
    await expect(read(whole.subarray(0, whole.length - 2), 16)).rejects.toThrow(/ended before its trailer/);
  });
});

/** A binary COPY stream of one-field tuples (one bytea each; null for NULL), with a header extension of `extension` bytes. */
function fieldStream(fields: Array<Buffer | null>, extension = 0): Buffer {
  const header = Buffer.alloc(8 + extension);
  header.writeUInt32BE(extension, 4);
  const parts: Buffer[] = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), header];
  for (const field of fields) {
    const head = Buffer.alloc(6);
    head.writeInt16BE(1, 0);
    head.writeInt32BE(field === null ? -1 : field.length, 2);
    parts.push(head, field ?? Buffer.alloc(0));
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

async function streamField(stream: Buffer, chunkSize: number) {
  const chunks: Buffer[] = [];
  for (let at = 0; at < stream.length; at += chunkSize) chunks.push(stream.subarray(at, at + chunkSize));
  const written: Buffer[] = [];
  const length = await streamBinaryCopyField(Readable.from(chunks), (bytes) => written.push(bytes));
  return { length, bytes: Buffer.concat(written), written, chunks };
}

describe('streamBinaryCopyField', () => {
  const payload = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7919) % 256));

  it("hands over the field's bytes exactly, as views of the received chunks, whichever way the stream is cut", async () => {
    for (const extension of [0, 5]) {
      const stream = fieldStream([payload], extension);
      for (const size of [1, 2, 3, 7, 19, 20, 25, 64, 1000, stream.length]) {
        const { length, bytes, written, chunks } = await streamField(stream, size);
        expect(length).toBe(payload.length);
        expect(bytes.equals(payload)).toBe(true);
        expect(written.every((w) => chunks.some((c) => c.buffer === w.buffer))).toBe(true);
      }
    }
  });

  it('gives undefined for a stream without a tuple, and an empty field as empty', async () => {
    expect((await streamField(fieldStream([]), 4)).length).toBeUndefined();
    expect(await streamField(fieldStream([Buffer.alloc(0)]), 3)).toMatchObject({ length: 0, written: [] });
  });

  it('refuses what is not one non-NULL field of one tuple, a stream cut short and anything after the trailer', async () => {
    await expect(streamField(Buffer.from('id,name\n1,a\n0123456789'), 8)).rejects.toThrow(/Not a binary COPY/);
    await expect(streamField(fieldStream([null]), 5)).rejects.toThrow(/NULL/);
    await expect(streamField(fieldStream([payload, payload]), 64)).rejects.toThrow(/more than one tuple/);
    await expect(streamField(copyStream([[1, 'x']]), 64)).rejects.toThrow(/has 2 fields, expected 1/);
    const whole = fieldStream([payload]);
    await expect(streamField(whole.subarray(0, whole.length - 1), 64)).rejects.toThrow(/ended before its trailer/);
    await expect(streamField(Buffer.concat([whole, Buffer.from([0])]), 64)).rejects.toThrow(/after its trailer/);
  });
});

describe('BinaryCopyWriter', () => {
  it('writes what PostgreSQL reads as binary COPY, tuple for tuple, across the buffers it hands over', async () => {
    const tuples: Array<[number, string, string]> = [];
    for (let i = 0; i < 500; i++)
      tuples.push([i * 7919 - 2_000_000_000, String(i * 1.25), i % 3 === 0 ? 'x' : i % 3 === 1 ? 'Région: ±5 €' : '']);
    tuples.push([-1, '0', 'z'], [2147483647, '-12.5', 'c']);
    // Small buffers, so most tuples go into a buffer after one was handed over.
    const writer = new BinaryCopyWriter(64);
    const chunks: Buffer[] = [];
    for (const [n, ascii, text] of tuples) {
      const full = writer.tuple(3, 8 + 4 + ascii.length + 4 + 3 * text.length);
      if (full) chunks.push(Buffer.from(full));
      writer.int4(n);
      writer.asciiText(ascii);
      writer.text(text);
    }
    chunks.push(...writer.end());
    expect(chunks.length).toBeGreaterThan(50);
    const read: Array<[number, string, string]> = [];
    await readBinaryCopy(Readable.from(chunks), 3, (buffer, offsets, lengths) => {
      read.push([
        buffer.readInt32BE(offsets[0]),
        buffer.toString('latin1', offsets[1], offsets[1]! + lengths[1]!),
        buffer.toString('utf8', offsets[2], offsets[2]! + lengths[2]!),
      ]);
    });
    expect(read).toEqual(tuples);
  });

  it('ends with the trailer in a buffer of its own when the last one is full', async () => {
    // 19 header bytes + one tuple of 44 bytes fill 63 of 64: the 2-byte trailer needs a fresh buffer.
    const writer = new BinaryCopyWriter(64);
    expect(writer.tuple(5, 4 * 8 + 4 + 6)).toBeUndefined();
    for (const n of [1, -2, 3, 2147483647]) writer.int4(n);
    writer.asciiText('abcdef');
    const ended = writer.end();
    expect(ended.map((b) => b.length)).toEqual([63, 2]);
    const read: unknown[][] = [];
    await readBinaryCopy(Readable.from(ended), 5, (buffer, offsets, lengths) => {
      read.push([
        ...[0, 1, 2, 3].map((f) => buffer.readInt32BE(offsets[f])),
        buffer.toString('latin1', offsets[4], offsets[4]! + lengths[4]!),
      ]);
    });
    expect(read).toEqual([[1, -2, 3, 2147483647, 'abcdef']]);
  });
});
