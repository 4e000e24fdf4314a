/**
 * Reads the tuples of a `COPY … TO STDOUT (FORMAT binary)` stream (PostgreSQL's documented binary COPY format:
 * an 11-byte signature, flags, a header extension, then per tuple a field count and each field's length and bytes,
 * and -1 to end). Hand-written on purpose: the row index of a 5,000,000-row version is built from such a stream,
 * and handing each field to a callback as offsets into the received buffer — no object or array per row — is what
 * made it 2.6 times faster than reading the same rows as objects through a cursor (bench/index-load.ts,
 * docs/performance.md).
 */

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** One tuple: `offsets[f]` and `lengths[f]` locate field f in `buffer` (length -1: NULL). Valid only during the call. */
export type TupleVisitor = (buffer: Buffer, offsets: Int32Array, lengths: Int32Array) => void;

/** Calls `visit` for every tuple of the stream, in order; returns the number of tuples. */
export async function readBinaryCopy(
  stream: AsyncIterable<Buffer> | Iterable<Buffer>,
  fieldCount: number,
  visit: TupleVisitor,
): Promise<number> {
  const offsets = new Int32Array(fieldCount);
  const lengths = new Int32Array(fieldCount);
  let pending: Buffer = Buffer.alloc(0);
  let headerRead = false;
  let ended = false;
  let tuples = 0;
  for await (const chunk of stream) {
    const buffer = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    if (!headerRead) {
      if (buffer.length < 19) {
        pending = buffer;
        continue;
      }
      if (!buffer.subarray(0, 11).equals(SIGNATURE)) throw new Error('Not a binary COPY stream');
      at = 19 + buffer.readUInt32BE(15);
      headerRead = true;
    }
    while (!ended && at + 2 <= buffer.length) {
      const fields = buffer.readInt16BE(at);
      if (fields === -1) {
        ended = true;
        at += 2;
        break;
      }
      if (fields !== fieldCount) throw new Error(`A binary COPY tuple has ${fields} fields, expected ${fieldCount}`);
      // The whole tuple must be here before any of it is visited.
      let end = at + 2;
      let complete = true;
      for (let f = 0; f < fields; f++) {
        if (end + 4 > buffer.length) {
          complete = false;
          break;
        }
        const length = buffer.readInt32BE(end);
        offsets[f] = end + 4;
        lengths[f] = length;
        end += 4 + Math.max(0, length);
        if (end > buffer.length) {
          complete = false;
          break;
        }
      }
      if (!complete) break;
      visit(buffer, offsets, lengths);
      tuples++;
      at = end;
    }
    pending = buffer.subarray(at);
  }
  if (!ended) throw new Error('The binary COPY stream ended before its trailer');
  return tuples;
}

/**
 * Reads a binary COPY stream of at most one tuple of one non-NULL field (one stored bytea) and hands the field's
 * bytes to `write` as they arrive, as views of the received chunks: a field of tens of megabytes is never gathered
 * into one buffer first (a copy into fresh memory that holds the server's main thread for as long as the piece is
 * large). Resolves with the field's length once the trailer is read, or undefined when there is no tuple.
 */
export async function streamBinaryCopyField(
  stream: AsyncIterable<Buffer> | Iterable<Buffer>,
  write: (bytes: Buffer) => void,
): Promise<number | undefined> {
  // The framing (signature, flags and extension; the tuple's field count, then the field's length; the trailer) is
  // gathered in `framing` until a part of it is complete; the field's bytes pass through.
  let framing: Buffer = Buffer.alloc(0);
  let stage: 'header' | 'count' | 'length' | 'field' | 'trailer' | 'done' = 'header';
  let fieldLength: number | undefined;
  let remaining = 0;
  for await (const chunk of stream) {
    let at = 0;
    while (at < chunk.length) {
      if (stage === 'field') {
        const bytes = chunk.subarray(at, at + remaining);
        write(bytes);
        remaining -= bytes.length;
        at += bytes.length;
        if (remaining === 0) stage = 'trailer';
        continue;
      }
      if (stage === 'done') throw new Error('A binary COPY stream goes on after its trailer');
      // 19 header bytes, then as many as the extension's length (bytes 15-18) says.
      const needed =
        stage === 'header' ? (framing.length >= 19 ? 19 + framing.readUInt32BE(15) : 19) : stage === 'length' ? 4 : 2;
      const piece = chunk.subarray(at, at + needed - framing.length);
      framing = framing.length === 0 ? piece : Buffer.concat([framing, piece]);
      at += piece.length;
      if (framing.length < needed) continue;
      if (stage === 'header') {
        if (!framing.subarray(0, 11).equals(SIGNATURE)) throw new Error('Not a binary COPY stream');
        if (needed === 19 && framing.readUInt32BE(15) > 0) continue;
        stage = 'count';
      } else if (stage === 'count') {
        const fields = framing.readInt16BE(0);
        if (fields === -1) stage = 'done';
        else if (fields !== 1) throw new Error(`A binary COPY tuple has ${fields} fields, expected 1`);
        else stage = 'length';
      } else if (stage === 'length') {
        fieldLength = framing.readInt32BE(0);
        if (fieldLength < 0) throw new Error('The binary COPY field is NULL');
        remaining = fieldLength;
        stage = remaining > 0 ? 'field' : 'trailer';
      } else {
        if (framing.readInt16BE(0) !== -1) throw new Error('A binary COPY stream has more than one tuple, expected 1');
        stage = 'done';
      }
      framing = Buffer.alloc(0);
    }
  }
  if (stage !== 'done') throw new Error('The binary COPY stream ended before its trailer');
  return fieldLength;
}

/**
 * Writes the tuples of a `COPY … FROM STDIN (FORMAT binary)` into buffers of about `bufferBytes`, each handed over
 * (`take`) once full: int4 and text fields only, none NULL (the import's row table). No escaping, no number parsing
 * on PostgreSQL's side: it takes half the time of `INSERT … SELECT` from a staging table (docs/performance.md).
 */
export class BinaryCopyWriter {
  private buffer: Buffer;
  private at: number;

  constructor(private readonly bufferBytes = 1 << 20) {
    this.buffer = Buffer.allocUnsafe(bufferBytes);
    SIGNATURE.copy(this.buffer, 0);
    this.buffer.writeInt32BE(0, 11); // flags
    this.buffer.writeInt32BE(0, 15); // header extension length
    this.at = 19;
  }

  /** Starts a tuple of `fields` fields, room made for at least `bytes` of them (a full buffer is taken first). */
  tuple(fields: number, bytes: number): Buffer | undefined {
    const full = this.at + 2 + bytes > this.buffer.length ? this.take(2 + bytes) : undefined;
    this.buffer.writeInt16BE(fields, this.at);
    this.at += 2;
    return full;
  }

  // Fields are written byte by byte: Buffer's writeInt32BE and write() check their arguments on every call, which
  // would be most of the importer's side of the row table's COPY.
  int4(value: number): void {
    const b = this.buffer;
    const at = this.at;
    b[at] = 0;
    b[at + 1] = 0;
    b[at + 2] = 0;
    b[at + 3] = 4;
    b[at + 4] = value >>> 24;
    b[at + 5] = value >>> 16;
    b[at + 6] = value >>> 8;
    b[at + 7] = value;
    this.at = at + 8;
  }

  /** A text field of ASCII characters only (a number's printing, a level code), one byte each. */
  asciiText(value: string): void {
    const b = this.buffer;
    const at = this.at;
    const length = value.length;
    b[at] = length >>> 24;
    b[at + 1] = length >>> 16;
    b[at + 2] = length >>> 8;
    b[at + 3] = length;
    for (let i = 0; i < length; i++) b[at + 4 + i] = value.charCodeAt(i);
    this.at = at + 4 + length;
  }

  /** A text field of any text, as UTF-8: at most its length × 3 bytes must have been made room for. */
  text(value: string): void {
    const length = this.buffer.write(value, this.at + 4, 'utf8');
    this.buffer.writeInt32BE(length, this.at);
    this.at += 4 + length;
  }

  /** The last bytes, ending with the trailer: a full buffer first when the trailer needed a fresh one (as `tuple`). */
  end(): Buffer[] {
    const full = this.at + 2 > this.buffer.length ? this.take(2) : undefined;
    this.buffer.writeInt16BE(-1, this.at);
    const last = this.buffer.subarray(0, this.at + 2);
    return full ? [full, last] : [last];
  }

  /** The bytes written so far; the writer goes on in a fresh buffer with room for `room` bytes. */
  private take(room: number): Buffer {
    const full = this.buffer.subarray(0, this.at);
    this.buffer = Buffer.allocUnsafe(Math.max(this.bufferBytes, room));
    this.at = 0;
    return full;
  }
}
