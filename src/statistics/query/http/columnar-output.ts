/**
 * Every matching row of a query as a Parquet file or an Arrow IPC stream: typed columns with labels, written batch by
 * batch from the pages of rows every export reads (`QueryService.exportRows`), with back-pressure from the response, so
 * no more than a batch or two of rows is ever held whatever the number of matching rows.
 *
 * The columns (docs/guides.md describes them for analysts):
 * - `time_period` (`2021/2022`), `time_period_code` (`AY`), `time_identifier` (`Academic year`);
 * - `geographic_level` (`LA`) and `geographic_level_name` (`Local authority`);
 * - per geographic level of the version (lower-case code, e.g. `la`): `la_id` (the API's location id), `la_code`
 *   (its code; the URN for schools, the UKPRN for providers) and `la_name`; null on rows of other levels;
 * - per filter, its column name (`school_type`) holding the option's label;
 * - per indicator, its column name (`enrolments`) as a DOUBLE, and `enrolments_marker`: a value that is not a number
 *   in the file (a suppression marker such as `c`, `x`, `z`, `low`) is null in the DOUBLE column and kept as it is in
 *   the marker column, which is null wherever the value is a number (or blank).
 * Every text column is dictionary-encoded from the version's metadata (codes, not strings, per row); field metadata
 * carries the API's ids and labels.
 */
import type { ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import {
  Dictionary,
  Field,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Utf8,
  vectorFromArray,
  type Data,
  type DataType,
  type Vector,
} from 'apache-arrow';
import type { FastifyReply } from 'fastify';
import { holdExportSlot } from '../../../plugins/streaming.js';
import { byteLengthOf, ipcStreamPieces, joinInto, TakenBytes } from './arrow-ipc.js';
import { GEOGRAPHIC_LEVEL_LABELS, locationColumn } from '../../standard/geographic-levels.js';
import { timeIdentifier } from '../../standard/time-periods.js';
import type { LocationMeta, PageRows, ResolvedQuery, VersionMeta } from '../engine/index.js';
import type { QueryExport, QueryExportOptions } from '../service.js';

export const PARQUET_MEDIA_TYPE = 'application/vnd.apache.parquet';
export const ARROW_STREAM_MEDIA_TYPE = 'application/vnd.apache.arrow.stream';
export type ColumnarFormat = 'parquet' | 'arrow';

/** Rows per Arrow record batch (and so per Parquet row-group piece): a few MB of columns at most. */
export const BATCH_ROWS = 16384;
/** Rows per Parquet row group: the writer holds one row group's encoded pages until it is complete. */
const ROW_GROUP_ROWS = 65536;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * A column's arrays for one batch. A writer that has read a batch before the next one is made (the Parquet writer
 * copies each into its WebAssembly memory at once) takes views of two sets used in turn; one that keeps the arrays
 * (Arrow IPC, written as they are to the response) takes copies.
 */
class BatchArrays<T extends Int32Array | Float64Array> {
  private sets: Array<{ values: T; validity: Uint8Array }>;
  private turn = 0;

  constructor(
    make: (length: number) => T,
    private readonly keep: boolean,
  ) {
    this.sets = Array.from({ length: keep ? 1 : 2 }, () => ({
      values: make(BATCH_ROWS),
      validity: new Uint8Array(BATCH_ROWS / 8),
    }));
  }

  get current(): { values: T; validity: Uint8Array } {
    return this.sets[this.turn]!;
  }

  /** The batch's arrays (`length` rows), and the next batch's arrays cleared. */
  take(length: number, nulls: number): { values: T; validity: Uint8Array | null } {
    const { values, validity } = this.current;
    const bytes = Math.ceil(length / 8);
    const taken = this.keep
      ? { values: values.slice(0, length) as T, validity: nulls > 0 ? validity.slice(0, bytes) : null }
      : { values: values.subarray(0, length) as T, validity: nulls > 0 ? validity.subarray(0, bytes) : null };
    this.turn = (this.turn + 1) % this.sets.length;
    this.current.validity.fill(0);
    return taken;
  }
}

/** A text column dictionary-encoded: per row an index into the dictionary (or null). */
class DictionaryColumn {
  readonly field: Field;
  private readonly type: Dictionary<Utf8, Int32>;
  private readonly dictionary: Vector<Utf8>;
  private readonly arrays: BatchArrays<Int32Array>;
  private nulls = 0;

  constructor(
    name: string,
    values: ReadonlyArray<string | null>,
    id: number,
    keep: boolean,
    metadata?: Record<string, string>,
  ) {
    this.arrays = new BatchArrays((length) => new Int32Array(length), keep);
    this.type = new Dictionary(new Utf8(), new Int32(), id, false);
    this.dictionary = vectorFromArray(values as Array<string | null>, new Utf8());
    this.field = new Field(name, this.type, true, metadata ? new Map(Object.entries(metadata)) : undefined);
  }

  /** Row `row`'s index into the dictionary; negative: null. */
  set(row: number, index: number): void {
    if (index < 0) {
      this.nulls++;
      return;
    }
    const { values, validity } = this.arrays.current;
    values[row] = index;
    validity[row >> 3]! |= 1 << (row & 7);
  }

  take(length: number): Data {
    const { values, validity } = this.arrays.take(length, this.nulls);
    const data = makeData({
      type: this.type,
      length,
      nullCount: this.nulls,
      nullBitmap: validity,
      data: values,
      dictionary: this.dictionary,
    });
    this.nulls = 0;
    return data;
  }
}

// Offsets and validity of an all-null text column of up to BATCH_ROWS rows: all zero, shared, never written.
const NO_TEXT_OFFSETS = new Int32Array(BATCH_ROWS + 1);
const NO_VALIDITY = new Uint8Array(BATCH_ROWS / 8);

/** A text column of `length` nulls. */
function allNullText(length: number): Data<Utf8> {
  return makeData({
    type: new Utf8(),
    length,
    nullCount: length,
    nullBitmap: NO_VALIDITY.subarray(0, Math.ceil(length / 8)),
    valueOffsets: NO_TEXT_OFFSETS.subarray(0, length + 1),
    data: new Uint8Array(0),
  });
}

/** An indicator: its numbers as DOUBLE, and what is not a number in its marker column. */
class IndicatorColumns {
  readonly fields: [Field, Field];
  private readonly arrays: BatchArrays<Float64Array>;
  private nulls = 0;
  private markers: Array<string | null> = new Array<string | null>(BATCH_ROWS).fill(null);
  private markerCount = 0;

  constructor(name: string, keep: boolean, metadata: Record<string, string>) {
    this.arrays = new BatchArrays((length) => new Float64Array(length), keep);
    const meta = new Map(Object.entries(metadata));
    this.fields = [new Field(name, new Float64(), true, meta), new Field(`${name}_marker`, new Utf8(), true, meta)];
  }

  setNumber(row: number, value: number): void {
    const { values, validity } = this.arrays.current;
    values[row] = value;
    validity[row >> 3]! |= 1 << (row & 7);
  }

  set(row: number, text: string): void {
    const trimmed = text.trim();
    if (trimmed !== '' && NUMBER.test(trimmed)) {
      this.setNumber(row, Number(trimmed));
      return;
    }
    this.nulls++;
    if (trimmed !== '') {
      this.markers[row] = text;
      this.markerCount++;
    }
  }

  /** What sets a page's row `r` as batch row `row`, from the page's indicator `column`. */
  writer(page: PageRows, column: string): (r: number, row: number) => void {
    const textAt = page.textsOf(column);
    const numberAt = page.numbersOf?.(column);
    if (!numberAt) return (r, row) => this.set(row, textAt(r));
    // The index's numbers as they are: no text made per value and parsed back.
    return (r, row) => {
      const value = numberAt(r);
      if (Number.isNaN(value)) this.set(row, textAt(r));
      else this.setNumber(row, value);
    };
  }

  take(length: number): [Data, Data] {
    const { values, validity } = this.arrays.take(length, this.nulls);
    const numbers = makeData({
      type: new Float64(),
      length,
      nullCount: this.nulls,
      nullBitmap: validity,
      data: values,
    });
    this.nulls = 0;
    // Most batches have no marker: their column is the shared all-null one, not new arrays per batch (and the
    // markers array, all null, needs no clearing).
    if (this.markerCount === 0) return [numbers, allNullText(length)];
    const markers = vectorFromArray(this.markers.slice(0, length), new Utf8()).data[0]!;
    this.markerCount = 0;
    this.markers.fill(null);
    return [numbers, markers];
  }
}

/** A map from ids to their position in a list. */
function positions<T>(items: readonly T[], idOf: (item: T) => number | string): Map<number | string, number> {
  return new Map(items.map((item, i) => [idOf(item), i]));
}

function locationCode(location: LocationMeta): string | null {
  if (location.level === 'SCH') return location.urn;
  if (location.level === 'PROV') return location.ukprn;
  return location.code;
}

/**
 * The query's rows as Arrow record batches of BATCH_ROWS rows (the last one shorter; none for no rows, the schema
 * alone says what the columns are).
 */
export class ColumnarBatches {
  readonly schema: Schema;
  private readonly write: Array<(page: PageRows) => (r: number, row: number) => void>;
  private readonly take: Array<(length: number) => Data[]>;
  private length = 0;

  /**
   * `readAtOnce`: the writer reads each batch before the next is made (the Parquet writer), so batches may share
   * arrays (`BatchArrays`) instead of each having its own.
   */
  constructor(meta: VersionMeta, query: Pick<ResolvedQuery, 'indicators'>, { readAtOnce = false } = {}) {
    const keep = !readAtOnce;
    let dictionaryId = 0;
    const fields: Field[] = [];
    this.write = [];
    this.take = [];
    const dictionary = (name: string, values: ReadonlyArray<string | null>, metadata?: Record<string, string>) => {
      const column = new DictionaryColumn(name, values, dictionaryId++, keep, metadata);
      fields.push(column.field);
      this.take.push((length) => [column.take(length)]);
      return column;
    };

    const periods = meta.timePeriods;
    const periodAt = positions(periods, (t) => t.id);
    const timeColumns = [
      dictionary(
        'time_period',
        periods.map((t) => t.period),
      ),
      dictionary(
        'time_period_code',
        periods.map((t) => t.code),
      ),
      dictionary(
        'time_identifier',
        periods.map((t) => timeIdentifier(t.code)?.label ?? t.code),
      ),
    ];
    this.write.push((page) => (r, row) => {
      const index = periodAt.get(page.timePeriodId(r)) ?? -1;
      for (const column of timeColumns) column.set(row, index);
    });

    const levels = [...meta.levels].sort();
    const levelAt = positions(levels, (code) => code);
    const levelColumns = [
      dictionary('geographic_level', levels),
      dictionary(
        'geographic_level_name',
        levels.map((l) => GEOGRAPHIC_LEVEL_LABELS[l] ?? l),
      ),
    ];
    this.write.push((page) => (r, row) => {
      const index = levelAt.get(page.levelCode(r)) ?? -1;
      for (const column of levelColumns) column.set(row, index);
    });

    for (const level of meta.locationLevels) {
      const locations = meta.locationsByLevel.get(level) ?? [];
      const locationAt = positions(locations, (l) => l.id);
      const prefix = level.toLowerCase();
      const columns = [
        dictionary(
          `${prefix}_id`,
          locations.map((l) => l.publicId),
          { level },
        ),
        dictionary(`${prefix}_code`, locations.map(locationCode), { level }),
        dictionary(
          `${prefix}_name`,
          locations.map((l) => l.label),
          { level },
        ),
      ];
      const column = locationColumn(level);
      this.write.push((page) => {
        const idAt = page.idsOf(column);
        return (r, row) => {
          const index = locationAt.get(idAt(r)) ?? -1;
          for (const c of columns) c.set(row, index);
        };
      });
    }

    for (const filter of meta.filters) {
      const options = [...meta.optionsById.values()].filter((o) => o.filter === filter);
      const optionAt = positions(options, (o) => o.id);
      const column = dictionary(
        filter.columnName,
        options.map((o) => o.label),
        { id: filter.publicId, label: filter.label },
      );
      this.write.push((page) => {
        const idAt = page.idsOf(filter.column);
        return (r, row) => column.set(row, optionAt.get(idAt(r)) ?? -1);
      });
    }

    for (const indicator of query.indicators) {
      const columns = new IndicatorColumns(indicator.columnName, keep, {
        id: indicator.publicId,
        label: indicator.label,
      });
      fields.push(...columns.fields);
      this.take.push((length) => columns.take(length));
      this.write.push((page) => columns.writer(page, indicator.column));
    }
    this.schema = new Schema(fields);
  }

  /** Adds a page's rows; yields each batch that fills up. */
  *add(page: PageRows): Generator<RecordBatch> {
    const writers = this.write.map((w) => w(page));
    for (let r = 0; r < page.count; r++) {
      const row = this.length++;
      for (const write of writers) write(r, row);
      if (this.length === BATCH_ROWS) yield this.flush()!;
    }
  }

  /** The rows added since the last batch, as one (none when there are none). */
  flush(): RecordBatch | undefined {
    if (this.length === 0) return undefined;
    const length = this.length;
    this.length = 0;
    const children = this.take.flatMap((take) => take(length));
    return new RecordBatch(
      this.schema,
      makeData({ type: new Struct(this.schema.fields as Array<Field<DataType>>), length, children }),
    );
  }
}

/**
 * Resolves once the response has room for more bytes: the writers' own queues (apache-arrow's IPC writer, the
 * Parquet writer) take whatever they are given, so the pages are read only as fast as the client takes the bytes.
 */
async function responseReady(response: ServerResponse): Promise<void> {
  // A turn of the event loop first: the pages of the row index come without one, and the bytes of the last batch
  // reach the response (and so its back-pressure) only in one. Only a response on a network socket drains.
  await new Promise((resolve) => setImmediate(resolve));
  if (!(response.socket instanceof Socket) || !response.writableNeedDrain || response.destroyed) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

/** Every batch of a query's matching rows, each page read once the response has room for more. */
async function* queryBatches(
  batches: ColumnarBatches,
  pages: AsyncIterable<PageRows>,
  ready: () => Promise<void>,
  onRows: (rows: number) => void,
): AsyncGenerator<RecordBatch> {
  let rows = 0;
  for await (const page of pages) {
    for (const batch of batches.add(page)) {
      yield batch;
      await ready();
    }
    rows += page.count;
    onRows(rows);
  }
  const last = batches.flush();
  if (last) yield last;
}

/**
 * The Arrow IPC stream of the batches: schema, dictionaries once, the batches, end of stream. Each batch's bytes are
 * taken as it is written, so a failure of the batches ends the stream where it is: no end-of-stream marker, and
 * nothing left waiting in the writer (apache-arrow's own Node stream leaves a read pending that rejects unhandled
 * when it is destroyed with an error).
 */
function arrowStream(schema: Schema, batches: AsyncIterable<RecordBatch>): Readable {
  return Readable.from(
    (async function* () {
      const taken = new TakenBytes();
      const writer = new RecordBatchStreamWriter().reset(taken);
      let any = false;
      for await (const batch of batches) {
        any = true;
        writer.write(batch);
        yield* taken.take();
      }
      // No rows: the schema still tells the reader the columns.
      if (!any) writer.write(emptyBatch(schema));
      writer.finish();
      yield* taken.take();
    })(),
    { objectMode: false },
  );
}

/** A batch of no rows: what the stream of a query without results holds, so that its columns are still known. */
function emptyBatch(schema: Schema): RecordBatch {
  const children: Array<Data<DataType>> = schema.fields.map(
    (f): Data<DataType> =>
      // eslint-disable-next-line @typescript-eslint/no-unsafe-return -- apache-arrow types vectorFromArray's data as Data<any>
      f.type instanceof Dictionary
        ? makeData({ type: f.type, length: 0, dictionary: vectorFromArray([], new Utf8()) })
        : vectorFromArray([], f.type).data[0]!,
  );
  return new RecordBatch(
    schema,
    makeData({ type: new Struct(schema.fields as Array<Field<DataType>>), length: 0, children }),
  );
}

/**
 * A batch as an Arrow IPC stream of its own (what parquet-wasm reads), written into one buffer used again for every
 * batch of an export: parquet-wasm copies the bytes into its WebAssembly memory at once. A new buffer per batch (as
 * `tableToIPC` makes) left megabytes of garbage per batch for the collector, which let a 5M-row export's RSS swing.
 */
class IpcBuffer {
  private bytes = new Uint8Array(0);

  streamOf(batch: RecordBatch): Uint8Array {
    const pieces = ipcStreamPieces(batch);
    const length = byteLengthOf(pieces);
    if (this.bytes.byteLength < length) this.bytes = new Uint8Array(Math.max(length, this.bytes.byteLength * 2));
    return joinInto(this.bytes, pieces);
  }
}

type ParquetWasm = typeof import('parquet-wasm');
let parquetWasm: Promise<ParquetWasm> | undefined;

/** The Parquet writer (WebAssembly), compiled on first use rather than at every start. */
function loadParquetWasm(): Promise<ParquetWasm> {
  return (parquetWasm ??= import('parquet-wasm'));
}

/** A Parquet file of the batches, written row group by row group (ZSTD, dictionary-encoded text columns). */
async function parquetStream(schema: Schema, batches: AsyncIterable<RecordBatch>): Promise<Readable> {
  const wasm = await loadParquetWasm();
  const properties = new wasm.WriterPropertiesBuilder()
    .setCompression(wasm.Compression.ZSTD)
    .setDictionaryEnabled(true)
    .setMaxRowGroupSize(ROW_GROUP_ROWS)
    .setCreatedBy('education-statistics-api')
    .build();
  const iterator = batches[Symbol.asyncIterator]();
  let any = false;
  // parquet-wasm ends the file where its input fails, as if the rows had ended there: the failure is kept and
  // raised after its last bytes, so the response is cut off rather than a short file that looks complete.
  let failure: Error | undefined;
  const ipc = new IpcBuffer();
  const toWasm = (batch: RecordBatch) => {
    const table = wasm.Table.fromIPCStream(ipc.streamOf(batch));
    const converted = table.recordBatch(0)!;
    table.free();
    return converted;
  };
  const input = new ReadableStream(
    {
      async pull(controller) {
        try {
          const step = await iterator.next();
          if (!step.done) {
            any = true;
            controller.enqueue(toWasm(step.value));
            return;
          }
          if (!any) controller.enqueue(toWasm(emptyBatch(schema)));
          controller.close();
        } catch (error) {
          failure ??= error as Error;
          controller.error(error);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 1 },
  );
  const output = await wasm.transformParquetStream(input, properties);
  return Readable.from(
    (async function* () {
      for await (const chunk of output as unknown as AsyncIterable<Uint8Array>) yield chunk;
      if (failure) throw failure;
    })(),
    { objectMode: false },
  );
}

/**
 * Streams every matching row of a query as Parquet or as an Arrow IPC stream, with the CSV export's limits: one of
 * the app's export slots for as long as the response is open (429 or 503 when none is free), its time bound
 * (QUERY_CSV_TIMEOUT_MS), and the client's going away stopping the read. A failure mid-stream is logged and aborts
 * the response, so the client sees an incomplete transfer, never a file that looks complete.
 */
export async function streamQueryColumnar(
  reply: FastifyReply,
  format: ColumnarFormat,
  exportRows: (options: QueryExportOptions) => Promise<QueryExport>,
): Promise<FastifyReply> {
  const limits = reply.server.streaming;
  const signal = holdExportSlot(reply);
  let rows = 0;
  const { meta, query, pages } = await exportRows({ timeoutMs: limits?.queryCsvTimeoutMs, signal });
  const batches = new ColumnarBatches(meta, query, { readAtOnce: format === 'parquet' });
  const source = queryBatches(
    batches,
    pages,
    () => responseReady(reply.raw),
    (n) => (rows = n),
  );
  // The slot is released when the response closes, whether this throws (a 500 then) or not.
  const body = format === 'parquet' ? await parquetStream(batches.schema, source) : arrowStream(batches.schema, source);
  const name = format === 'parquet' ? 'Parquet' : 'Arrow';
  body.once('error', (error: Error & { code?: unknown }) => {
    if (error.code === 'ERR_STREAM_PREMATURE_CLOSE' || reply.raw.destroyed) {
      reply.log.info({ rows }, `${name} query export abandoned by the client`);
    } else {
      const reason =
        error.code === '57014'
          ? `stopped by its time bound (QUERY_CSV_TIMEOUT_MS=${limits?.queryCsvTimeoutMs} ms)`
          : 'failed';
      reply.log.error(
        { err: error, rows },
        `${name} query export ${reason} after ${rows} rows; the response is cut off`,
      );
    }
  });
  reply.header('content-type', format === 'parquet' ? PARQUET_MEDIA_TYPE : ARROW_STREAM_MEDIA_TYPE);
  reply.header('content-disposition', `attachment; filename="query.${format === 'parquet' ? 'parquet' : 'arrows'}"`);
  return reply.send(body);
}
