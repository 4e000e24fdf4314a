type Snappy = typeof import('snappy');

/**
 * A Parquet writer for the three kinds of column a version's copy has: a required 32-bit integer (delta-encoded), an optional
 * string given as dictionary codes into a label list (dictionary-encoded), and an optional double (dictionary-encoded,
 * plain where most values differ). Why by hand, with the figures: docs/decisions/0002-parquet-writer.md — the row
 * index already holds every text column as dictionary codes, so a row group's dictionary page and code runs are made
 * from them directly, where a general writer hashes every cell again.
 *
 * What it writes (Apache Parquet format 2.x, readable by every reader that reads data pages v1): one row group per
 * call of `writeRowGroup`, each column one dictionary page (where dictionary-encoded) and one data page v1, pages
 * snappy-compressed (large ones on libuv's threads while the caller makes the next row group); per column chunk the statistics
 * (null count, min and max, type-defined order); the key-value metadata given, including `ARROW:schema` where the
 * caller gives one, so Arrow readers read the text columns back as dictionary arrays.
 */

/**
 * Pages from this size are compressed on libuv's threads; smaller ones at once (a call on the threads costs the
 * caller about 100 µs, more than compressing a few kilobytes; most of a file's pages are small).
 */
const ASYNC_COMPRESSION_FROM = 64 * 1024;

/** snappy's native addon, loaded on first use: a server that writes no file does not load it at start. */
let snappyModule: Promise<Snappy> | undefined;

/** Thrift compact protocol types of the fields a footer and page header use. */
const enum Compact {
  True = 1,
  False = 2,
  I16 = 4,
  I32 = 5,
  I64 = 6,
  Binary = 8,
  List = 9,
  Struct = 12,
}

/** A Thrift value of the compact protocol, as the footer and page headers need them. */
type ThriftValue =
  | { t: Compact.I16 | Compact.I32 | Compact.I64; v: number }
  | { t: Compact.Binary; v: Uint8Array | string }
  | { t: Compact.True | Compact.False }
  | { t: Compact.List; element: Compact; items: ThriftValue[] }
  | { t: Compact.Struct; fields: ThriftField[] };
type ThriftField = [id: number, value: ThriftValue | undefined];

const i32 = (v: number): ThriftValue => ({ t: Compact.I32, v });
const i64 = (v: number): ThriftValue => ({ t: Compact.I64, v });
const binary = (v: Uint8Array | string): ThriftValue => ({ t: Compact.Binary, v });
const bool = (v: boolean): ThriftValue => ({ t: v ? Compact.True : Compact.False });
const struct = (...fields: ThriftField[]): ThriftValue => ({ t: Compact.Struct, fields });
const list = (element: Compact, items: ThriftValue[]): ThriftValue => ({ t: Compact.List, element, items });

/** Bytes that grow: a footer or page header being encoded, or a page's values. */
class ByteSink {
  bytes: Uint8Array;
  length = 0;

  constructor(capacity = 256) {
    this.bytes = new Uint8Array(capacity);
  }

  reserve(extra: number): void {
    if (this.length + extra <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + extra));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  byte(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  /** An unsigned LEB128 varint (values below 2^53). */
  varint(value: number): void {
    this.reserve(8);
    while (value >= 0x80) {
      this.bytes[this.length++] = (value % 0x80) | 0x80;
      value = Math.floor(value / 0x80);
    }
    this.bytes[this.length++] = value;
  }

  append(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  int32LE(value: number): void {
    this.reserve(4);
    new DataView(this.bytes.buffer, this.bytes.byteOffset).setInt32(this.length, value, true);
    this.length += 4;
  }

  /** A copy of what was written (the sink is used again). */
  take(): Uint8Array {
    const out = this.bytes.slice(0, this.length);
    this.length = 0;
    return out;
  }
}

const zigzag = (value: number): number => (value >= 0 ? value * 2 : -value * 2 - 1);

function writeThrift(sink: ByteSink, value: ThriftValue): void {
  switch (value.t) {
    case Compact.I16:
    case Compact.I32:
    case Compact.I64:
      sink.varint(zigzag(value.v));
      return;
    case Compact.Binary: {
      const bytes = typeof value.v === 'string' ? Buffer.from(value.v, 'utf8') : value.v;
      sink.varint(bytes.length);
      sink.append(bytes);
      return;
    }
    case Compact.True:
    case Compact.False:
      // Only as a list element; a field's boolean is in its header.
      sink.byte(value.t);
      return;
    case Compact.List:
      if (value.items.length < 15) sink.byte((value.items.length << 4) | value.element);
      else {
        sink.byte(0xf0 | value.element);
        sink.varint(value.items.length);
      }
      for (const item of value.items) writeThrift(sink, item);
      return;
    case Compact.Struct: {
      let last = 0;
      for (const [id, field] of value.fields) {
        if (field === undefined) continue;
        const type = field.t;
        if (id > last && id - last <= 15) sink.byte(((id - last) << 4) | type);
        else {
          sink.byte(type);
          sink.varint(zigzag(id));
        }
        last = id;
        if (type !== Compact.True && type !== Compact.False) writeThrift(sink, field);
      }
      sink.byte(0);
      return;
    }
  }
}

/** Parquet's enums, as the format's Thrift definition numbers them. */
const PhysicalType = { INT32: 1, DOUBLE: 5, BYTE_ARRAY: 6 } as const;
const Encoding = { PLAIN: 0, RLE: 3, DELTA_BINARY_PACKED: 5, RLE_DICTIONARY: 8 } as const;
const PageType = { DATA_PAGE: 0, DICTIONARY_PAGE: 2 } as const;
const Repetition = { REQUIRED: 0, OPTIONAL: 1 } as const;
const CODEC_SNAPPY = 1;
const DICTIONARY_ENCODINGS = [Encoding.PLAIN, Encoding.RLE, Encoding.RLE_DICTIONARY];
const CONVERTED_UTF8 = 0;

/** Values packed least significant bit first, as Parquet's bit-packed runs and delta miniblocks hold them. */
function packBits(
  sink: ByteSink,
  values: ArrayLike<number>,
  from: number,
  to: number,
  count: number,
  bitWidth: number,
): void {
  sink.reserve(Math.ceil((count * bitWidth) / 8));
  let accumulator = 0;
  let bits = 0;
  // Values past `to` are zeros (a group's padding). At most 16 bits are added at a time, so the accumulator stays
  // within 32 bits for any width up to 32.
  for (let p = from; p < from + count; p++) {
    let value = p < to ? values[p]! : 0;
    let width = bitWidth;
    while (width > 0) {
      const take = width > 16 ? 16 : width;
      accumulator |= (value & ((1 << take) - 1)) << bits;
      value = Math.floor(value / (1 << take));
      width -= take;
      bits += take;
      while (bits >= 8) {
        sink.bytes[sink.length++] = accumulator & 0xff;
        accumulator >>>= 8;
        bits -= 8;
      }
    }
  }
  if (bits > 0) sink.bytes[sink.length++] = accumulator & 0xff;
}

/** Appends the RLE / bit-packed hybrid encoding of `values[0 … count-1]`, each of `bitWidth` bits. */
function writeHybrid(sink: ByteSink, values: Int32Array, count: number, bitWidth: number): void {
  const valueBytes = (bitWidth + 7) >>> 3;
  let i = 0;
  while (i < count) {
    const value = values[i]!;
    let j = i + 1;
    while (j < count && values[j] === value) j++;
    if (j - i >= 8) {
      sink.varint((j - i) * 2);
      sink.reserve(valueBytes);
      for (let b = 0; b < valueBytes; b++) sink.bytes[sink.length++] = (value >>> (8 * b)) & 0xff;
      i = j;
      continue;
    }
    // Bit-packed groups of 8 until a run of 8 equal values starts at a group's boundary (or the values end).
    let end = i;
    while (end < count) {
      end += 8;
      if (end >= count) break;
      const next = values[end]!;
      let k = end + 1;
      while (k < count && k - end < 8 && values[k] === next) k++;
      if (k - end >= 8) break;
    }
    const groups = Math.ceil((Math.min(end, count) - i) / 8);
    sink.varint(groups * 2 + 1);
    // The last group of the values is padded with zeros: the page's value count says where they end.
    packBits(sink, values, i, count, groups * 8, bitWidth);
    i = Math.min(end, count);
  }
}

const DELTA_BLOCK = 128;
const DELTA_MINIBLOCKS = 4;
const DELTA_MINIBLOCK = DELTA_BLOCK / DELTA_MINIBLOCKS;

/** Appends the DELTA_BINARY_PACKED encoding of 32-bit integers: blocks of 128 deltas, in 4 miniblocks of 32. */
function writeDeltaBinaryPacked(sink: ByteSink, values: Int32Array): void {
  sink.varint(DELTA_BLOCK);
  sink.varint(DELTA_MINIBLOCKS);
  sink.varint(values.length);
  sink.varint(zigzag(values[0] ?? 0));
  const deltas = new Float64Array(DELTA_BLOCK);
  for (let start = 1; start < values.length; start += DELTA_BLOCK) {
    const count = Math.min(DELTA_BLOCK, values.length - start);
    let minimum = Infinity;
    for (let d = 0; d < count; d++) {
      // Differences wrap as 32-bit integers (as a reader adds them back), so a block's span fits in 32 bits.
      deltas[d] = (values[start + d]! - values[start + d - 1]!) | 0;
      if (deltas[d]! < minimum) minimum = deltas[d]!;
    }
    for (let d = 0; d < count; d++) deltas[d] = deltas[d]! - minimum;
    sink.varint(zigzag(minimum));
    const widths = new Uint8Array(DELTA_MINIBLOCKS);
    const miniblocks = Math.ceil(count / DELTA_MINIBLOCK);
    for (let m = 0; m < miniblocks; m++) {
      let largest = 0;
      for (let d = m * DELTA_MINIBLOCK; d < Math.min(count, (m + 1) * DELTA_MINIBLOCK); d++)
        if (deltas[d]! > largest) largest = deltas[d]!;
      widths[m] = largest === 0 ? 0 : Math.floor(Math.log2(largest)) + 1;
    }
    sink.append(widths);
    // A block's unused miniblocks (the last block's) take no bytes; a used one is padded to 32 values.
    for (let m = 0; m < miniblocks; m++)
      packBits(sink, deltas, m * DELTA_MINIBLOCK, count, DELTA_MINIBLOCK, widths[m]!);
  }
}

function bitWidthOf(maximum: number): number {
  return maximum === 0 ? 0 : 32 - Math.clz32(maximum);
}

/** The columns a file has, in order. */
export type ParquetColumnSpec =
  | { name: string; kind: 'int32' }
  | { name: string; kind: 'string' }
  | { name: string; kind: 'double' };

/**
 * One row group's data of a column. A string column's value at row r is `labels[codes[offset + r]]`, null where the
 * code is negative or its label null; a double's is `values[r]`, null where its bit in `valid` is clear (`valid`
 * absent: none is null).
 */
export type ParquetColumnData =
  | { kind: 'int32'; values: Int32Array }
  | { kind: 'string'; codes: ArrayLike<number>; offset: number; labels: ReadonlyArray<string | null> }
  | { kind: 'double'; values: Float64Array; valid: Uint8Array | undefined };

export interface ParquetWriterSettings {
  columns: ParquetColumnSpec[];
  createdBy: string;
  keyValueMetadata: Record<string, string>;
}

interface ColumnChunkMeta {
  type: number;
  encodings: number[];
  valueCount: number;
  uncompressed: number;
  compressed: number;
  dictionaryPageOffset: number | undefined;
  dataPageOffset: number;
  nulls: number;
  min: Uint8Array | undefined;
  max: Uint8Array | undefined;
}

/** A page before compression: its header's fields and its body. */
interface RawPage {
  type: number;
  body: Uint8Array;
  valueCount: number;
  encoding: number;
}

/** A column chunk made, its pages being compressed. */
interface PendingChunk {
  pages: Array<{ raw: RawPage; compressed: Promise<Buffer> }>;
  meta: Omit<ColumnChunkMeta, 'uncompressed' | 'compressed' | 'dictionaryPageOffset' | 'dataPageOffset'>;
}

const MAGIC = Buffer.from('PAR1', 'ascii');

/**
 * Writes a Parquet file row group by row group: `writeRowGroup` encodes one (its compression runs on libuv's threads
 * meanwhile), `finish` waits for the last and answers the file's bytes.
 */
export class ParquetWriter {
  private readonly parts: Uint8Array[] = [MAGIC];
  private offset = MAGIC.length;
  private readonly rowGroups: ThriftValue[] = [];
  private rows = 0;
  /** The row group being compressed: it is appended before the next is made, so at most two are held. */
  private pending: Promise<void> = Promise.resolve();
  private readonly labelBytes = new WeakMap<ReadonlyArray<string | null>, Array<Buffer | null>>();
  private readonly sink = new ByteSink(1 << 16);
  private snappy: Snappy | undefined;

  constructor(private readonly settings: ParquetWriterSettings) {}

  /** Encodes a row group of `rows` rows (its compression is awaited by the next call or by `finish`). */
  async writeRowGroup(rows: number, columns: ParquetColumnData[]): Promise<void> {
    this.snappy ??= await (snappyModule ??= import('snappy'));
    if (columns.length !== this.settings.columns.length)
      throw new Error(`A row group of ${columns.length} columns; the file has ${this.settings.columns.length}`);
    const chunks = columns.map((data, c) => this.encodeChunk(this.settings.columns[c]!, data, rows));
    const previous = this.pending;
    this.pending = previous.then(() => this.append(rows, chunks));
    // A failure is the caller's through the await below or `finish`; a caller that stops at it never awaits this one.
    this.pending.catch(() => undefined);
    // The one before this one is appended before the caller makes the next: at most two row groups in memory.
    await previous;
  }

  async finish(): Promise<Buffer> {
    await this.pending;
    const { settings } = this;
    const schema = [
      struct([4, binary('schema')], [5, i32(settings.columns.length)]),
      ...settings.columns.map((column) =>
        struct(
          [1, i32(physicalTypeOf(column))],
          [3, i32(column.kind === 'int32' ? Repetition.REQUIRED : Repetition.OPTIONAL)],
          [4, binary(column.name)],
          [6, column.kind === 'string' ? i32(CONVERTED_UTF8) : undefined],
          // LogicalType STRING: an empty StringType struct.
          [10, column.kind === 'string' ? struct([1, struct()]) : undefined],
        ),
      ),
    ];
    const footer = struct(
      [1, i32(2)],
      [2, list(Compact.Struct, schema)],
      [3, i64(this.rows)],
      [4, list(Compact.Struct, this.rowGroups)],
      [
        5,
        list(
          Compact.Struct,
          Object.entries(settings.keyValueMetadata).map(([key, value]) => struct([1, binary(key)], [2, binary(value)])),
        ),
      ],
      [6, binary(settings.createdBy)],
      // Every column's statistics in type-defined order (TypeDefinedOrder: an empty struct).
      [
        7,
        list(
          Compact.Struct,
          settings.columns.map(() => struct([1, struct()])),
        ),
      ],
    );
    const sink = new ByteSink(4096);
    writeThrift(sink, footer);
    const length = sink.length;
    sink.int32LE(length);
    sink.append(MAGIC);
    this.parts.push(sink.take());
    return Buffer.concat(this.parts);
  }

  private async append(rows: number, chunks: PendingChunk[]): Promise<void> {
    const columns: ThriftValue[] = [];
    const groupStart = this.offset;
    let groupUncompressed = 0;
    for (const [c, chunk] of chunks.entries()) {
      const meta: ColumnChunkMeta = {
        ...chunk.meta,
        uncompressed: 0,
        compressed: 0,
        dictionaryPageOffset: undefined,
        dataPageOffset: 0,
      };
      const chunkStart = this.offset;
      for (const { raw, compressed } of chunk.pages) {
        const body = await compressed;
        const header = pageHeader(raw, body.length);
        if (raw.type === PageType.DICTIONARY_PAGE) meta.dictionaryPageOffset = this.offset;
        else meta.dataPageOffset = this.offset;
        this.parts.push(header, body);
        this.offset += header.length + body.length;
        meta.uncompressed += header.length + raw.body.length;
        meta.compressed += header.length + body.length;
      }
      groupUncompressed += meta.uncompressed;
      columns.push(columnChunk(this.settings.columns[c]!.name, meta, chunkStart));
    }
    this.rowGroups.push(
      struct(
        [1, list(Compact.Struct, columns)],
        [2, i64(groupUncompressed)],
        [3, i64(rows)],
        [5, i64(groupStart)],
        [6, i64(this.offset - groupStart)],
        [7, { t: Compact.I16, v: this.rowGroups.length }],
      ),
    );
    this.rows += rows;
  }

  private compress(raw: RawPage): { raw: RawPage; compressed: Promise<Buffer> } {
    const snappy = this.snappy;
    if (!snappy) throw new Error('ParquetWriter: snappy is loaded by writeRowGroup before a page is made');
    const body = Buffer.from(raw.body.buffer, raw.body.byteOffset, raw.body.byteLength);
    if (body.length < ASYNC_COMPRESSION_FROM) return { raw, compressed: Promise.resolve(snappy.compressSync(body)) };
    const compressed = snappy.compress(body);
    // Awaited in page order: a failure is seen there; the pages after it, never awaited, must not end the process.
    compressed.catch(() => undefined);
    return { raw, compressed };
  }

  private encodeChunk(spec: ParquetColumnSpec, data: ParquetColumnData, rows: number): PendingChunk {
    if (spec.kind !== data.kind) throw new Error(`Column ${spec.name} is ${spec.kind}; its data is ${data.kind}`);
    switch (data.kind) {
      case 'int32':
        return this.int32Chunk(data.values, rows);
      case 'string':
        return this.stringChunk(data, rows);
      case 'double':
        return this.doubleChunk(data, rows);
    }
  }

  private int32Chunk(values: Int32Array, rows: number): PendingChunk {
    if (values.length !== rows) throw new Error(`An int32 column of ${values.length} values in a row group of ${rows}`);
    let min = values[0] ?? 0;
    let max = min;
    for (let r = 1; r < rows; r++) {
      const v = values[r]!;
      if (v < min) min = v;
      else if (v > max) max = v;
    }
    // A required column: no definition levels, only the values (row ids ascend within a period: small deltas).
    writeDeltaBinaryPacked(this.sink, values);
    const body = this.sink.take();
    return {
      pages: [
        this.compress({ type: PageType.DATA_PAGE, body, valueCount: rows, encoding: Encoding.DELTA_BINARY_PACKED }),
      ],
      meta: {
        type: PhysicalType.INT32,
        encodings: [Encoding.RLE, Encoding.DELTA_BINARY_PACKED],
        valueCount: rows,
        nulls: 0,
        min: rows > 0 ? int32Bytes(min) : undefined,
        max: rows > 0 ? int32Bytes(max) : undefined,
      },
    };
  }

  private bytesOf(labels: ReadonlyArray<string | null>): Array<Buffer | null> {
    let bytes = this.labelBytes.get(labels);
    if (!bytes) {
      bytes = labels.map((label) => (label === null ? null : Buffer.from(label, 'utf8')));
      this.labelBytes.set(labels, bytes);
    }
    return bytes;
  }

  private stringChunk(data: Extract<ParquetColumnData, { kind: 'string' }>, rows: number): PendingChunk {
    const labels = this.bytesOf(data.labels);
    // The row group's own dictionary: the labels its rows use, numbered by first appearance.
    const localOf = new Int32Array(labels.length).fill(-1);
    const used: number[] = [];
    const local = new Int32Array(rows);
    const defined = new Int32Array(rows);
    let values = 0;
    const { codes, offset } = data;
    for (let r = 0; r < rows; r++) {
      const code = codes[offset + r]!;
      if (code < 0 || labels[code] === null) continue;
      let entry = localOf[code]!;
      if (entry < 0) entry = localOf[code] = used.push(code) - 1;
      defined[r] = 1;
      local[values++] = entry;
    }
    const dictionary = this.sink;
    let min: Buffer | undefined;
    let max: Buffer | undefined;
    for (const code of used) {
      const bytes = labels[code]!;
      dictionary.int32LE(bytes.length);
      dictionary.append(bytes);
      if (!min || Buffer.compare(bytes, min) < 0) min = bytes;
      if (!max || Buffer.compare(bytes, max) > 0) max = bytes;
    }
    return {
      pages: this.dictionaryPages(dictionary.take(), used.length, defined, rows, local, values),
      meta: {
        type: PhysicalType.BYTE_ARRAY,
        encodings: DICTIONARY_ENCODINGS,
        valueCount: rows,
        nulls: rows - values,
        min,
        max,
      },
    };
  }

  private doubleChunk(data: Extract<ParquetColumnData, { kind: 'double' }>, rows: number): PendingChunk {
    const { values: numbers, valid } = data;
    const defined = new Int32Array(rows);
    const present = new Float64Array(rows);
    let values = 0;
    let min = Infinity;
    let max = -Infinity;
    for (let r = 0; r < rows; r++) {
      if (valid && (valid[r >>> 3]! & (1 << (r & 7))) === 0) continue;
      const v = numbers[r]!;
      defined[r] = 1;
      present[values++] = v;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    // Dictionary-encoded while the distinct values are at most half the values (counts repeat); plain otherwise.
    const entryOf = new Map<number, number>();
    const dictionary: number[] = [];
    const local = new Int32Array(values);
    let plain = false;
    for (let v = 0; v < values; v++) {
      const number = present[v]!;
      // -0 is kept apart from 0 (a map would merge them), as a plain page would keep it.
      const key = number === 0 && 1 / number < 0 ? NaN : number;
      let entry = entryOf.get(key);
      if (entry === undefined) {
        entry = dictionary.push(number) - 1;
        entryOf.set(key, entry);
        if (dictionary.length > values / 2 + 8) {
          plain = true;
          break;
        }
      }
      local[v] = entry;
    }
    const stats = {
      type: PhysicalType.DOUBLE,
      valueCount: rows,
      nulls: rows - values,
      // Zero bounds as the format asks: a minimum of -0, a maximum of +0.
      min: values > 0 ? float64Bytes(min === 0 ? -0 : min) : undefined,
      max: values > 0 ? float64Bytes(max === 0 ? 0 : max) : undefined,
    };
    if (plain) {
      const body = this.dataPageBody(defined, rows, (sink) =>
        sink.append(new Uint8Array(present.buffer, 0, values * 8)),
      );
      return {
        pages: [this.compress({ type: PageType.DATA_PAGE, body, valueCount: rows, encoding: Encoding.PLAIN })],
        meta: { ...stats, encodings: [Encoding.PLAIN, Encoding.RLE] },
      };
    }
    const dictionaryBody = new Uint8Array(Float64Array.from(dictionary).buffer);
    return {
      pages: this.dictionaryPages(dictionaryBody, dictionary.length, defined, rows, local, values),
      meta: { ...stats, encodings: DICTIONARY_ENCODINGS },
    };
  }

  /** A dictionary-encoded chunk's pages: its dictionary (plain), then its rows' entries as hybrid-encoded codes. */
  private dictionaryPages(
    dictionary: Uint8Array,
    entries: number,
    defined: Int32Array,
    rows: number,
    codes: Int32Array,
    values: number,
  ): PendingChunk['pages'] {
    const dictionaryPage = this.compress({
      type: PageType.DICTIONARY_PAGE,
      body: dictionary,
      valueCount: entries,
      encoding: Encoding.PLAIN,
    });
    const body = this.dataPageBody(defined, rows, (sink) => {
      const width = bitWidthOf(Math.max(0, entries - 1));
      sink.byte(width);
      writeHybrid(sink, codes, values, width);
    });
    return [
      dictionaryPage,
      this.compress({ type: PageType.DATA_PAGE, body, valueCount: rows, encoding: Encoding.RLE_DICTIONARY }),
    ];
  }

  /** A data page v1's body of an optional column: its definition levels (length-prefixed), then its values. */
  private dataPageBody(defined: Int32Array, rows: number, writeValues: (sink: ByteSink) => void): Uint8Array {
    const sink = this.sink;
    sink.int32LE(0);
    writeHybrid(sink, defined, rows, 1);
    new DataView(sink.bytes.buffer, sink.bytes.byteOffset).setInt32(0, sink.length - 4, true);
    writeValues(sink);
    return sink.take();
  }
}

function physicalTypeOf(column: ParquetColumnSpec): number {
  return column.kind === 'int32'
    ? PhysicalType.INT32
    : column.kind === 'double'
      ? PhysicalType.DOUBLE
      : PhysicalType.BYTE_ARRAY;
}

function int32Bytes(value: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, value, true);
  return bytes;
}

function float64Bytes(value: number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, value, true);
  return bytes;
}

function pageHeader(page: RawPage, compressedSize: number): Uint8Array {
  const sink = new ByteSink(64);
  const dictionary = page.type === PageType.DICTIONARY_PAGE;
  writeThrift(
    sink,
    struct(
      [1, i32(page.type)],
      [2, i32(page.body.length)],
      [3, i32(compressedSize)],
      [
        5,
        dictionary
          ? undefined
          : struct([1, i32(page.valueCount)], [2, i32(page.encoding)], [3, i32(Encoding.RLE)], [4, i32(Encoding.RLE)]),
      ],
      [7, dictionary ? struct([1, i32(page.valueCount)], [2, i32(page.encoding)], [3, bool(false)]) : undefined],
    ),
  );
  return sink.take();
}

function columnChunk(name: string, meta: ColumnChunkMeta, chunkStart: number): ThriftValue {
  return struct(
    [2, i64(chunkStart)],
    [
      3,
      struct(
        [1, i32(meta.type)],
        [2, list(Compact.I32, meta.encodings.map(i32))],
        [3, list(Compact.Binary, [binary(name)])],
        [4, i32(CODEC_SNAPPY)],
        [5, i64(meta.valueCount)],
        [6, i64(meta.uncompressed)],
        [7, i64(meta.compressed)],
        [9, i64(meta.dataPageOffset)],
        [11, meta.dictionaryPageOffset === undefined ? undefined : i64(meta.dictionaryPageOffset)],
        [
          12,
          struct(
            [3, i64(meta.nulls)],
            [5, meta.max ? binary(meta.max) : undefined],
            [6, meta.min ? binary(meta.min) : undefined],
          ),
        ],
      ),
    ],
  );
}
