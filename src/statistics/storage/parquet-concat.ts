/**
 * One Parquet file from several, row groups in order, without decoding a page: the import encodes a version's copy in
 * parts on two threads (parquet-encoder.ts) and joins them here (docs/decisions/0003-parquet-parts.md). A part's
 * column chunks are copied byte for byte; what points into the file is moved by where its part now starts: the
 * offsets in the footer (`FileMetaData`, Thrift compact protocol) and the pages' offsets in each offset index.
 *
 * The parts must come from the same writer with the same schema and settings (the import's): same schema, key-value
 * metadata and column orders; no bloom filters, no encryption. Anything else is refused, never written wrong.
 */

const MAGIC = 'PAR1';

/** Thrift compact protocol types (the parts of it Parquet uses: no maps, no sets). */
const enum T {
  True = 1,
  False = 2,
  Byte = 3,
  I16 = 4,
  I32 = 5,
  I64 = 6,
  Double = 7,
  Binary = 8,
  List = 9,
  Struct = 12,
}

/** A decoded value with its wire type, so that encoding it again gives the same bytes. */
type Value =
  | { type: T.True | T.False }
  | { type: T.Byte | T.I16 | T.I32 | T.I64; value: number }
  | { type: T.Double; value: number }
  | { type: T.Binary; value: Uint8Array }
  | { type: T.List; element: T; items: Value[] }
  | { type: T.Struct; fields: Field[] };
interface Field {
  id: number;
  value: Value;
}
type Struct = Field[];

class Reader {
  offset = 0;
  constructor(private readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.offset >= this.bytes.length) throw new ParquetConcatError('Thrift data ends early');
    return this.bytes[this.offset++]!;
  }

  varint(): number {
    let result = 0;
    let factor = 1;
    for (;;) {
      const b = this.byte();
      result += (b & 0x7f) * factor;
      if ((b & 0x80) === 0) break;
      factor *= 128;
      if (factor > 2 ** 63) throw new ParquetConcatError('Thrift varint too long');
    }
    if (!Number.isSafeInteger(result)) throw new ParquetConcatError('Thrift integer beyond 2^53');
    return result;
  }

  zigzag(): number {
    const n = this.varint();
    return n % 2 === 0 ? n / 2 : -(n + 1) / 2;
  }

  take(length: number): Uint8Array {
    if (this.offset + length > this.bytes.length) throw new ParquetConcatError('Thrift data ends early');
    const slice = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return slice;
  }
}

function readValue(reader: Reader, type: T, inList: boolean): Value {
  switch (type) {
    case T.True:
    case T.False:
      // In a struct the field header holds a boolean; in a list each is a byte (1 true, 2 false).
      if (!inList) return { type };
      return { type: reader.byte() === 1 ? T.True : T.False };
    case T.Byte:
      return { type, value: reader.byte() };
    case T.I16:
    case T.I32:
    case T.I64:
      return { type, value: reader.zigzag() };
    case T.Double: {
      const bytes = reader.take(8);
      return { type, value: new DataView(bytes.buffer, bytes.byteOffset, 8).getFloat64(0, true) };
    }
    case T.Binary:
      return { type, value: reader.take(reader.varint()) };
    case T.List: {
      const header = reader.byte();
      const element = (header & 0x0f) as T;
      const size = header >> 4 === 15 ? reader.varint() : header >> 4;
      const items: Value[] = [];
      for (let i = 0; i < size; i++) items.push(readValue(reader, element, true));
      return { type, element, items };
    }
    case T.Struct:
      return { type, fields: readStruct(reader) };
    default:
      throw new ParquetConcatError(`Thrift type ${type} is not used by Parquet`);
  }
}

function readStruct(reader: Reader): Struct {
  const fields: Struct = [];
  let id = 0;
  for (;;) {
    const header = reader.byte();
    if ((header & 0x0f) === 0) return fields;
    const type = (header & 0x0f) as T;
    const delta = header >> 4;
    id = delta === 0 ? reader.zigzag() : id + delta;
    fields.push({ id, value: readValue(reader, type, false) });
  }
}

class Writer {
  private bytes = new Uint8Array(1024);
  length = 0;

  private reserve(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }

  byte(b: number): void {
    this.reserve(1);
    this.bytes[this.length++] = b;
  }

  varint(n: number): void {
    while (n >= 0x80) {
      this.byte((n % 128) | 0x80);
      n = Math.floor(n / 128);
    }
    this.byte(n);
  }

  zigzag(n: number): void {
    this.varint(n >= 0 ? n * 2 : -n * 2 - 1);
  }

  append(data: Uint8Array): void {
    this.reserve(data.length);
    this.bytes.set(data, this.length);
    this.length += data.length;
  }

  result(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }
}

function writeValue(writer: Writer, value: Value, inList: boolean): void {
  switch (value.type) {
    case T.True:
    case T.False:
      if (inList) writer.byte(value.type === T.True ? 1 : 2);
      return;
    case T.Byte:
      writer.byte(value.value);
      return;
    case T.I16:
    case T.I32:
    case T.I64:
      writer.zigzag(value.value);
      return;
    case T.Double: {
      const bytes = new Uint8Array(8);
      new DataView(bytes.buffer).setFloat64(0, value.value, true);
      writer.append(bytes);
      return;
    }
    case T.Binary:
      writer.varint(value.value.length);
      writer.append(value.value);
      return;
    case T.List:
      if (value.items.length < 15) writer.byte((value.items.length << 4) | value.element);
      else {
        writer.byte(0xf0 | value.element);
        writer.varint(value.items.length);
      }
      for (const item of value.items) writeValue(writer, item, true);
      return;
    case T.Struct:
      writeStruct(writer, value.fields);
      return;
  }
}

function writeStruct(writer: Writer, fields: Struct): void {
  let previous = 0;
  for (const { id, value } of fields) {
    const delta = id - previous;
    if (delta > 0 && delta <= 15) writer.byte((delta << 4) | value.type);
    else {
      writer.byte(value.type);
      writer.zigzag(id);
    }
    writeValue(writer, value, false);
    previous = id;
  }
  writer.byte(0);
}

/** Thrift compact struct bytes → fields (exported for the fixture test: decoding and encoding give the same bytes). */
export function decodeThriftStruct(bytes: Uint8Array): Struct {
  const reader = new Reader(bytes);
  const fields = readStruct(reader);
  if (reader.offset !== bytes.length) throw new ParquetConcatError('Thrift struct followed by stray bytes');
  return fields;
}

export function encodeThriftStruct(fields: Struct): Uint8Array {
  const writer = new Writer();
  writeStruct(writer, fields);
  return writer.result();
}

export class ParquetConcatError extends Error {
  constructor(message: string) {
    super(`Cannot join Parquet parts: ${message}`);
    this.name = 'ParquetConcatError';
  }
}

function field(fields: Struct, id: number): Value | undefined {
  return fields.find((f) => f.id === id)?.value;
}

function integer(fields: Struct, id: number): number | undefined {
  const value = field(fields, id);
  return value && 'value' in value && typeof value.value === 'number' ? value.value : undefined;
}

function setInteger(fields: Struct, id: number, type: T.I16 | T.I32 | T.I64, value: number): void {
  const at = fields.findIndex((f) => f.id >= id);
  const entry = { id, value: { type, value } };
  if (at === -1) fields.push(entry);
  else if (fields[at]!.id === id) fields[at] = entry;
  else fields.splice(at, 0, entry);
}

function shift(fields: Struct, id: number, by: number): void {
  const value = field(fields, id);
  if (value && value.type === T.I64) value.value += by;
}

function structs(value: Value | undefined): Struct[] {
  if (!value || value.type !== T.List) return [];
  return value.items.map((item) => {
    if (item.type !== T.Struct) throw new ParquetConcatError('expected a list of structs');
    return item.fields;
  });
}

function same(a: Value | undefined, b: Value | undefined): boolean {
  const bytes = (v: Value | undefined) =>
    v ? Buffer.from(encodeThriftStruct([{ id: 1, value: v }])) : Buffer.alloc(0);
  return bytes(a).equals(bytes(b));
}

/** FileMetaData field ids (parquet.thrift). */
const FILE = { schema: 2, numRows: 3, rowGroups: 4, keyValueMetadata: 5, columnOrders: 7, encryption: 8 } as const;
const ROW_GROUP = { columns: 1, fileOffset: 5, ordinal: 7 } as const;
const CHUNK = { fileOffset: 2, metaData: 3, offsetIndexOffset: 4, offsetIndexLength: 5 } as const;
const CHUNK_INDEX = { columnIndexOffset: 6, columnIndexLength: 7, cryptoMetaData: 8 } as const;
const COLUMN = { totalCompressedSize: 7, dataPageOffset: 9, indexPageOffset: 10, dictionaryPageOffset: 11 } as const;
const COLUMN_BLOOM = { bloomFilterOffset: 14 } as const;

interface Part {
  bytes: Uint8Array;
  meta: Struct;
  /** End of the row groups' pages (the indexes and the footer follow). */
  dataEnd: number;
}

function readPart(bytes: Uint8Array, n: number): Part {
  const tail = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (tail.length < 12 || tail.toString('latin1', 0, 4) !== MAGIC || tail.toString('latin1', tail.length - 4) !== MAGIC)
    throw new ParquetConcatError(`part ${n} is not a Parquet file`);
  const footerLength = tail.readUInt32LE(tail.length - 8);
  const footerStart = tail.length - 8 - footerLength;
  if (footerStart < 4) throw new ParquetConcatError(`part ${n} has a footer longer than the file`);
  const meta = decodeThriftStruct(bytes.subarray(footerStart, tail.length - 8));
  if (field(meta, FILE.encryption)) throw new ParquetConcatError(`part ${n} is encrypted`);
  let dataEnd = 4;
  for (const rowGroup of structs(field(meta, FILE.rowGroups))) {
    for (const chunk of structs(field(rowGroup, ROW_GROUP.columns))) {
      const column = field(chunk, CHUNK.metaData);
      if (!column || column.type !== T.Struct) throw new ParquetConcatError(`part ${n} has a column without metadata`);
      if (field(chunk, CHUNK_INDEX.cryptoMetaData)) throw new ParquetConcatError(`part ${n} is encrypted`);
      if (integer(column.fields, COLUMN_BLOOM.bloomFilterOffset) !== undefined)
        throw new ParquetConcatError(`part ${n} has bloom filters`);
      const starts = [COLUMN.dataPageOffset, COLUMN.indexPageOffset, COLUMN.dictionaryPageOffset]
        .map((id) => integer(column.fields, id))
        .filter((x): x is number => x !== undefined && x > 0);
      const size = integer(column.fields, COLUMN.totalCompressedSize) ?? 0;
      dataEnd = Math.max(dataEnd, Math.min(...starts) + size);
    }
  }
  if (dataEnd > footerStart) throw new ParquetConcatError(`part ${n}'s pages overlap its footer`);
  return { bytes, meta, dataEnd };
}

/**
 * The parts' row groups, in order, as one Parquet file. A single part is returned as it is. Each part's column
 * indexes are copied as they are (they hold no offsets); its offset indexes are decoded, their pages moved, encoded.
 */
export function concatenateParquetFiles(files: Uint8Array[]): Buffer {
  if (files.length === 0) throw new ParquetConcatError('no parts');
  if (files.length === 1) return Buffer.from(files[0]!.buffer, files[0]!.byteOffset, files[0]!.byteLength);
  const parts = files.map(readPart);
  const first = parts[0]!.meta;
  for (const [n, part] of parts.entries()) {
    for (const id of [FILE.schema, FILE.keyValueMetadata, FILE.columnOrders])
      if (!same(field(part.meta, id), field(first, id)))
        throw new ParquetConcatError(`part ${n} differs from part 0 in field ${id} of its footer`);
  }
  const output: Uint8Array[] = [Buffer.from(MAGIC, 'latin1')];
  let position = 4;
  const rowGroups: Value[] = [];
  let numRows = 0;
  const columnIndexes: Array<{ chunk: Struct; bytes: Uint8Array }> = [];
  const offsetIndexes: Array<{ chunk: Struct; bytes: Uint8Array }> = [];
  for (const part of parts) {
    const by = position - 4;
    output.push(part.bytes.subarray(4, part.dataEnd));
    position += part.dataEnd - 4;
    numRows += integer(part.meta, FILE.numRows) ?? 0;
    for (const rowGroup of structs(field(part.meta, FILE.rowGroups))) {
      shift(rowGroup, ROW_GROUP.fileOffset, by);
      if (integer(rowGroup, ROW_GROUP.ordinal) !== undefined)
        setInteger(rowGroup, ROW_GROUP.ordinal, T.I16, rowGroups.length);
      for (const chunk of structs(field(rowGroup, ROW_GROUP.columns))) {
        if ((integer(chunk, CHUNK.fileOffset) ?? 0) > 0) shift(chunk, CHUNK.fileOffset, by);
        const column = field(chunk, CHUNK.metaData);
        if (column?.type === T.Struct)
          for (const id of [COLUMN.dataPageOffset, COLUMN.indexPageOffset, COLUMN.dictionaryPageOffset])
            shift(column.fields, id, by);
        const indexBytes = (offsetId: number, lengthId: number) => {
          const at = integer(chunk, offsetId);
          const length = integer(chunk, lengthId);
          return at === undefined || length === undefined ? undefined : part.bytes.subarray(at, at + length);
        };
        const columnIndex = indexBytes(CHUNK_INDEX.columnIndexOffset, CHUNK_INDEX.columnIndexLength);
        if (columnIndex) columnIndexes.push({ chunk, bytes: columnIndex });
        const offsetIndex = indexBytes(CHUNK.offsetIndexOffset, CHUNK.offsetIndexLength);
        if (offsetIndex) {
          // OffsetIndex { 1: list<PageLocation { 1: i64 offset, … }> }: the pages' offsets move with their part.
          const decoded = decodeThriftStruct(offsetIndex);
          for (const page of structs(field(decoded, 1))) shift(page, 1, by);
          offsetIndexes.push({ chunk, bytes: encodeThriftStruct(decoded) });
        }
      }
      rowGroups.push({ type: T.Struct, fields: rowGroup });
    }
  }
  // The indexes after every part's pages, column indexes first, as the writers lay them out.
  for (const [list, offsetId, lengthId] of [
    [columnIndexes, CHUNK_INDEX.columnIndexOffset, CHUNK_INDEX.columnIndexLength],
    [offsetIndexes, CHUNK.offsetIndexOffset, CHUNK.offsetIndexLength],
  ] as const) {
    for (const { chunk, bytes } of list) {
      setInteger(chunk, offsetId, T.I64, position);
      setInteger(chunk, lengthId, T.I32, bytes.length);
      output.push(bytes);
      position += bytes.length;
    }
  }
  const meta = first.map((f) => {
    if (f.id === FILE.numRows) return { id: f.id, value: { type: T.I64, value: numRows } as Value };
    if (f.id === FILE.rowGroups)
      return { id: f.id, value: { type: T.List, element: T.Struct, items: rowGroups } as Value };
    return f;
  });
  const footer = encodeThriftStruct(meta);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(footer.length);
  output.push(footer, length, Buffer.from(MAGIC, 'latin1'));
  return Buffer.concat(output);
}
