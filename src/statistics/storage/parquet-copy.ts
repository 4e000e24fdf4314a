import type * as Arrow from 'apache-arrow';
import { geographicLevelByCode, GEOGRAPHIC_LEVEL_LABELS, locationColumn } from '../standard/geographic-levels.js';
import { timeIdentifier, timePeriodLabel } from '../standard/time-periods.js';
import { NUMERIC_TEXT_PATTERN } from '../query/engine/resolve.js';
import {
  RowIds,
  RowIndex,
  type Codes,
  type FacetColumn,
  type IndicatorColumn,
} from '../query/engine/index/row-index.js';
import { codesFor, rowIndexColumns } from '../query/engine/index/row-index-builder.js';
import type { LocationMeta, VersionMeta } from '../query/engine/model.js';
import { ParquetWriter, type ParquetColumnData, type ParquetColumnSpec } from './parquet-writer.js';

/**
 * A version's rows as a Parquet file: the copy of record any analytics tool reads (R's arrow, pandas, polars,
 * DuckDB), from which the query engine's row index can be made again array for array. Layout (format 1) in
 * docs/architecture.md, "The Parquet copy of a version".
 *
 * Written from the row index (its arrays are the rows in default order, with dictionary codes that map to labels
 * through the version's metadata) by `parquet-writer.ts`, a row group at a time: a row group's dictionary pages are
 * the labels its codes use, never a string per cell. Read back with `parquet-wasm` (arrow-rs compiled to WebAssembly)
 * into Arrow, loaded on first use, so a server that never reads a copy does not compile the WebAssembly module.
 */

/** The layout's version, in the file's key-value metadata: a reader refuses another. */
export const PARQUET_COPY_FORMAT = 1;
/** Key of the layout's JSON in the file's key-value metadata. */
export const PARQUET_COPY_METADATA_KEY = 'ees.parquet_copy';
/** Rows per row group: small enough that a reader of one column of a few row groups fetches little. */
export const PARQUET_ROW_GROUP_ROWS = 131072;
/** The media type of a Parquet file. */
export const PARQUET_MEDIA_TYPE = 'application/vnd.apache.parquet';

/** What the file's key-value metadata says of its layout, beyond the columns' names and types. */
export interface ParquetCopyLayout {
  format: number;
  rows: number;
  /** Per indicator, by its CSV column name: the row index's column and how its numbers are held there. */
  indicators: Record<string, { column: string; scale: number; float: boolean }>;
  /** Per filter, by its CSV column name: the row index's column. */
  filters: Record<string, string>;
  /** Per location level code: the prefix of its three columns (`la` for `la_id`, `la_name`, `la_code`). */
  locationLevels: Record<string, string>;
}

/** The columns of a level's locations: `<prefix>_id` (public id), `_name`, `_code` (the level's primary code). */
function locationPrefix(level: string): string {
  return level.toLowerCase();
}

/** A location's primary code: the first code column of its level in the data file standard (none for RSC). */
function primaryCode(location: LocationMeta): string | null {
  const field = geographicLevelByCode(location.level)?.codeColumns[0]?.field;
  if (!field) return null;
  const codes = {
    code: location.code,
    old_code: location.oldCode,
    urn: location.urn,
    la_estab: location.laEstab,
    ukprn: location.ukprn,
  };
  return codes[field] ?? null;
}

function timeIdentifierLabel(code: string): string {
  return timeIdentifier(code)?.label ?? code;
}

const NUMERIC_TEXT = new RegExp(NUMERIC_TEXT_PATTERN);
const POWERS_OF_TEN = [1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];

type ArrowModule = typeof Arrow;
type ParquetModule = typeof import('parquet-wasm');

async function libraries(): Promise<{ arrow: ArrowModule; parquet: ParquetModule }> {
  const [arrow, parquet] = await Promise.all([import('apache-arrow'), import('parquet-wasm')]);
  return { arrow, parquet };
}

/** One column of the copy: its Parquet column and how a row group's data of it is made. */
interface CopyColumn {
  spec: ParquetColumnSpec;
  dataOf: (start: number, end: number) => ParquetColumnData;
}

/** A validity bitmap (bit set: a value) of positions `start … end-1`; undefined when every position has one. */
function validity(start: number, end: number, isValue: (p: number) => boolean): Uint8Array | undefined {
  const bitmap = new Uint8Array((end - start + 7) >>> 3);
  let nulls = 0;
  for (let p = start; p < end; p++) {
    if (isValue(p)) bitmap[(p - start) >>> 3]! |= 1 << ((p - start) & 7);
    else nulls++;
  }
  return nulls === 0 ? undefined : bitmap;
}

/**
 * The copy's columns, each made for a row group from the index's arrays: a text column is the index's codes with a
 * label per code (null: no value), so a row group's dictionary page holds the labels its rows use.
 */
function copyColumns(index: RowIndex, meta: VersionMeta): CopyColumn[] {
  const parts = index.stored;
  const columns: CopyColumn[] = [];
  /** A text column: per row group, codes (from `offset`) into `labels`. */
  const text = (
    name: string,
    labels: Array<string | null>,
    slice: (start: number, end: number) => { codes: ArrayLike<number>; offset: number },
  ) =>
    columns.push({
      spec: { name, kind: 'string' },
      dataOf: (start, end) => ({ kind: 'string', labels, ...slice(start, end) }),
    });
  /** The index's own codes of a column, read in place. */
  const inPlace = (codes: ArrayLike<number>) => (start: number) => ({ codes, offset: start });

  columns.push({
    spec: { name: 'row_id', kind: 'int32' },
    // A row group's ids at a time: every id at once is a copy of the column when the index holds a period's first.
    dataOf: (start, end) => ({ kind: 'int32', values: index.ids.slice(start, end) }),
  });

  const periods = parts.timePeriodIds;
  const period = (k: number) => {
    const found = meta.timePeriodsById.get(periods[k]!);
    if (!found) throw new Error(`Time period ${periods[k]} is not in the metadata of version ${meta.versionId}`);
    return found;
  };
  const periodKeys = (start: number, end: number) => {
    const keys = new Int32Array(end - start);
    for (let k = 0; k < periods.length; k++) {
      const from = Math.max(start, parts.timePeriodStarts[k]!);
      const to = Math.min(end, parts.timePeriodStarts[k + 1]!);
      if (from < to) keys.fill(k, from - start, to - start);
    }
    return keys;
  };
  const periodLabels = [...periods].map((_, k) => timePeriodLabel(period(k).period, period(k).code));
  const identifierLabels = [...periods].map((_, k) => timeIdentifierLabel(period(k).code));
  const periodSlice = (start: number, end: number) => ({ codes: periodKeys(start, end), offset: 0 });
  text('time_period', periodLabels, periodSlice);
  text('time_identifier', identifierLabels, periodSlice);
  text(
    'geographic_level',
    parts.levelCodes.map((code) => GEOGRAPHIC_LEVEL_LABELS[code] ?? code),
    inPlace(parts.levels),
  );

  for (const level of meta.locationLevels) {
    const facet = facetOf(index, meta, locationColumn(level));
    const location = (id: number) =>
      id === 0 ? undefined : (meta.locationsById.get(id) ?? missing(`Location ${id}`, meta));
    const prefix = locationPrefix(level);
    const entries = [...facet.dictionary].map(location);
    text(
      `${prefix}_id`,
      entries.map((l) => l?.publicId ?? null),
      inPlace(facet.codes),
    );
    text(
      `${prefix}_name`,
      entries.map((l) => l?.label ?? null),
      inPlace(facet.codes),
    );
    // A location without the level's code (none in its file) has a null code, as a row without a location has.
    text(
      `${prefix}_code`,
      entries.map((l) => (l ? primaryCode(l) : null)),
      inPlace(facet.codes),
    );
  }
  for (const filter of meta.filters) {
    const facet = facetOf(index, meta, filter.column);
    const option = (id: number) =>
      id === 0 ? null : (meta.optionsById.get(id)?.label ?? missing(`Filter option ${id}`, meta));
    text(filter.columnName, [...facet.dictionary].map(option), inPlace(facet.codes));
  }
  for (const indicator of meta.indicators) {
    const column = parts.indicators.get(indicator.column);
    if (!column)
      throw new Error(`The row index of version ${meta.versionId} has no indicator column ${indicator.column}`);
    columns.push(...indicatorColumns(indicator.columnName, column));
  }
  return columns;
}

function facetOf(index: RowIndex, meta: VersionMeta, column: string): FacetColumn {
  const facet = index.stored.facets.get(column);
  if (!facet) throw new Error(`The row index of version ${meta.versionId} has no column ${column}`);
  return facet;
}

/**
 * An indicator's number column (null where the cell is no number) and its text column (the text where it is not the
 * number's printing; null elsewhere).
 */
function indicatorColumns(name: string, column: IndicatorColumn): CopyColumn[] {
  const factor = POWERS_OF_TEN[column.scale]!;
  const textNumbers = column.texts.map((text) => (NUMERIC_TEXT.test(text) ? Number(text) : null));
  const numbers: CopyColumn = {
    spec: { name, kind: 'double' },
    dataOf: (start, end) => {
      const values = new Float64Array(end - start);
      for (let p = start; p < end; p++)
        values[p - start] = column.scale === 0 ? column.values[p]! : column.values[p]! / factor;
      const last = lowerBound(column.textPositions, end);
      let nulls = false;
      for (let e = lowerBound(column.textPositions, start); e < last; e++) {
        const number = textNumbers[column.textCodes[e]!];
        values[column.textPositions[e]! - start] = number ?? NaN;
        if (number === null || number === undefined) nulls = true;
      }
      // NaN marks a text that is no number: never a parsed value (NUMERIC_TEXT has none).
      const valid = nulls ? validity(start, end, (p) => !Number.isNaN(values[p - start])) : undefined;
      return { kind: 'double', values, valid };
    },
  };
  const texts: CopyColumn = {
    spec: { name: `${name}__text`, kind: 'string' },
    dataOf: (start, end) => {
      const codes = new Int32Array(end - start).fill(-1);
      const last = lowerBound(column.textPositions, end);
      for (let e = lowerBound(column.textPositions, start); e < last; e++)
        codes[column.textPositions[e]! - start] = column.textCodes[e]!;
      return { kind: 'string', codes, offset: 0, labels: column.texts };
    },
  };
  return [numbers, texts];
}

/** The Arrow schema of the copy's columns, as `ARROW:schema` holds it: text columns as dictionaries of Int32 keys. */
function arrowSchemaOf(arrow: ArrowModule, columns: CopyColumn[]): string {
  let dictionaryId = 0;
  const fields = columns.map(({ spec }) =>
    spec.kind === 'int32'
      ? new arrow.Field(spec.name, new arrow.Int32(), false)
      : spec.kind === 'double'
        ? new arrow.Field(spec.name, new arrow.Float64(), true)
        : new arrow.Field(spec.name, new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32(), dictionaryId++), true),
  );
  const stream = arrow.tableToIPC(new arrow.Table(new arrow.Schema(fields)), 'stream');
  // The stream's first message (continuation marker, length, flatbuffer): what arrow-rs writes and reads there.
  const length = new DataView(stream.buffer, stream.byteOffset).getInt32(4, true);
  return Buffer.from(stream.subarray(0, 8 + length)).toString('base64');
}

function missing(what: string, meta: VersionMeta): never {
  throw new Error(`${what} is not in the metadata of version ${meta.versionId}`);
}

/** The first index of the ascending `values` that is at least `value`. */
function lowerBound(values: Int32Array, value: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The layout of a version's copy: what its key-value metadata holds. */
function layoutOf(index: RowIndex, meta: VersionMeta): ParquetCopyLayout {
  const indicators: ParquetCopyLayout['indicators'] = {};
  for (const indicator of meta.indicators) {
    const column = index.stored.indicators.get(indicator.column);
    if (!column)
      throw new Error(`The row index of version ${meta.versionId} has no indicator column ${indicator.column}`);
    indicators[indicator.columnName] = {
      column: indicator.column,
      scale: column.scale,
      float: column.values instanceof Float64Array,
    };
  }
  return {
    format: PARQUET_COPY_FORMAT,
    rows: index.size,
    indicators,
    filters: Object.fromEntries(meta.filters.map((f) => [f.columnName, f.column])),
    locationLevels: Object.fromEntries(meta.locationLevels.map((level) => [level, locationPrefix(level)])),
  };
}

/** Refuses a copy with two columns of one name (a filter named like a location column). */
function checkColumnNames(meta: VersionMeta, columns: CopyColumn[]): void {
  const seen = new Set<string>();
  for (const { name } of columns.map((c) => c.spec)) {
    if (seen.has(name)) throw new Error(`Version ${meta.versionId} would have two Parquet columns named ${name}`);
    seen.add(name);
  }
}

/**
 * The Parquet copy of a version's rows, from its row index (with its indicator values) and metadata: rows in the
 * index's position order (the default result order), one row group per PARQUET_ROW_GROUP_ROWS rows, snappy.
 */
export async function writeParquetCopy(index: RowIndex, meta: VersionMeta): Promise<Buffer> {
  const columns = copyColumns(index, meta);
  checkColumnNames(meta, columns);
  const layout = layoutOf(index, meta);
  const arrow = await import('apache-arrow');
  const writer = new ParquetWriter({
    columns: columns.map((c) => c.spec),
    createdBy: 'education-statistics-api',
    keyValueMetadata: {
      [PARQUET_COPY_METADATA_KEY]: JSON.stringify(layout),
      'ARROW:schema': arrowSchemaOf(arrow, columns),
    },
  });
  // A version of no rows still gets a file with its columns: one empty row group.
  let start = 0;
  do {
    const end = Math.min(index.size, start + PARQUET_ROW_GROUP_ROWS);
    await writer.writeRowGroup(
      end - start,
      columns.map((c) => c.dataOf(start, end)),
    );
    start = end;
  } while (start < index.size);
  return writer.finish();
}

/** A column that can grow, of 32-bit integers. */
class GrowingInt32 {
  private values = new Int32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Int32Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }

  toArray(): Int32Array {
    return this.values.slice(0, this.length);
  }
}

/**
 * A facet column read back: each position's value as its place in the column's possible ids (its level's locations
 * or its filter's options, and 0, ascending), then made the index's column of the ids that occur.
 */
class FacetReader {
  /** Possible ids, ascending; 0 (none) first. */
  private readonly universe: Int32Array;
  private readonly placeOf: Map<string, number>;
  private readonly places: Codes;
  private readonly present: Uint8Array;

  constructor(ids: Array<{ id: number; key: string }>, size: number) {
    const sorted = [...ids].sort((a, b) => a.id - b.id);
    this.universe = Int32Array.from([0, ...sorted.map((e) => e.id)]);
    this.placeOf = new Map(sorted.map((e, k) => [e.key, k + 1]));
    this.places = codesFor(this.universe.length, size);
    this.present = new Uint8Array(this.universe.length);
  }

  /** Reads one chunk of the column (dictionary keys of its labels) into positions `base …`. */
  read(data: Arrow.Data, base: number, column: string): void {
    const dictionary = data.dictionary!;
    const placeOfEntry = new Int32Array(dictionary.length);
    for (let e = 0; e < dictionary.length; e++) {
      const key = dictionary.get(e) as string | null;
      const place = key === null ? undefined : this.placeOf.get(key);
      placeOfEntry[e] = place ?? -1;
    }
    const keys = data.values as Int32Array;
    const isNull = nullTest(data);
    for (let i = 0; i < data.length; i++) {
      let place = 0;
      if (!isNull(i)) {
        place = placeOfEntry[keys[i]!]!;
        if (place < 0)
          throw new Error(
            `Parquet column ${column} holds "${dictionary.get(keys[i]!)}", which the version's metadata does not know`,
          );
      }
      this.places[base + i] = place;
      this.present[place] = 1;
    }
  }

  /** The index's column: the ids that occur, ascending, and each position's code among them. */
  finish(): FacetColumn {
    const codeOfPlace = new Int32Array(this.universe.length);
    const dictionary: number[] = [];
    for (let place = 0; place < this.universe.length; place++) {
      if (this.present[place]) codeOfPlace[place] = dictionary.push(this.universe[place]!) - 1;
    }
    const codes = codesFor(dictionary.length, this.places.length);
    for (let p = 0; p < codes.length; p++) codes[p] = codeOfPlace[this.places[p]!]!;
    return { dictionary: Int32Array.from(dictionary), codes };
  }
}

/** Whether row `i` of a chunk is null (its values are sliced to the chunk, its validity bitmap is not). */
function nullTest(data: Arrow.Data): (i: number) => boolean {
  const nulls = data.nullCount;
  if (nulls === 0) return () => false;
  if (nulls === data.length) return () => true;
  const bitmap = data.nullBitmap;
  const offset = data.offset;
  return (i) => (bitmap[(offset + i) >>> 3]! & (1 << ((offset + i) & 7))) === 0;
}

/** An indicator's two columns read back into the index's column. */
class IndicatorReader {
  readonly values: Int32Array | Float64Array;
  private readonly factor: number;
  private readonly textPositions = new GrowingInt32();
  private readonly textCodes = new GrowingInt32();
  private readonly texts: string[] = [];
  private readonly textCode = new Map<string, number>();

  constructor(
    private readonly name: string,
    private readonly layout: ParquetCopyLayout['indicators'][string],
    size: number,
  ) {
    this.values = layout.float ? new Float64Array(size) : new Int32Array(size);
    this.factor = POWERS_OF_TEN[layout.scale] ?? NaN;
    if (!layout.float && !(layout.scale >= 0 && layout.scale <= 9))
      throw new Error(`Indicator ${name} has scale ${layout.scale}`);
  }

  read(numbers: Arrow.Data, texts: Arrow.Data, base: number): void {
    const values = numbers.values as Float64Array;
    const numberIsNull = nullTest(numbers);
    const keys = texts.values as Int32Array;
    const textIsNull = nullTest(texts);
    // Texts numbered by first appearance in position order, as the index numbers them.
    const dictionary = texts.dictionary!;
    const codeOfEntry = new Int32Array(dictionary.length).fill(-1);
    for (let i = 0; i < numbers.length; i++) {
      const p = base + i;
      if (!textIsNull(i)) {
        const entry = keys[i]!;
        let code = codeOfEntry[entry]!;
        if (code < 0) {
          const text = dictionary.get(entry) as string;
          code = this.textCode.get(text) ?? -1;
          if (code < 0) {
            code = this.texts.push(text) - 1;
            this.textCode.set(text, code);
          }
          codeOfEntry[entry] = code;
        }
        this.textPositions.push(p);
        this.textCodes.push(code);
        continue;
      }
      if (numberIsNull(i)) throw new Error(`Parquet column ${this.name} has neither a number nor a text at row ${p}`);
      const number = values[i]!;
      this.values[p] = this.layout.float ? number : Math.round(number * this.factor);
    }
  }

  finish(): IndicatorColumn {
    return {
      values: this.values,
      scale: this.layout.float ? 0 : this.layout.scale,
      textPositions: this.textPositions.toArray(),
      textCodes: Uint32Array.from(this.textCodes.toArray()),
      texts: this.texts,
    };
  }
}

/** The chunks of a column of a table read from one row group, each with the position of its first row. */
function chunksOf(table: Arrow.Table, name: string, base: number): Array<{ data: Arrow.Data; base: number }> {
  const column = table.getChild(name);
  if (!column) throw new Error(`The Parquet copy has no column ${name}`);
  let offset = base;
  return column.data.map((data) => {
    const chunk = { data: data as Arrow.Data, base: offset };
    offset += data.length;
    return chunk;
  });
}

/** Chunk `c` of a column read beside another, which must start at the same row. */
function alongside(chunks: Array<{ data: Arrow.Data; base: number }>, c: number, base: number): Arrow.Data {
  const chunk = chunks[c];
  if (!chunk || chunk.base !== base) throw new Error("The Parquet copy's columns are not read in the same batches");
  return chunk.data;
}

/** The layout recorded in a copy's key-value metadata; refuses a file of another layout. */
function readLayout(metadata: Map<unknown, unknown>): ParquetCopyLayout {
  const json = metadata.get(PARQUET_COPY_METADATA_KEY);
  if (typeof json !== 'string') throw new Error(`The Parquet file has no ${PARQUET_COPY_METADATA_KEY} metadata`);
  const layout = JSON.parse(json) as ParquetCopyLayout;
  if (layout.format !== PARQUET_COPY_FORMAT)
    throw new Error(`The Parquet copy is of layout ${layout.format}; this code reads layout ${PARQUET_COPY_FORMAT}`);
  return layout;
}

/**
 * The row index a Parquet copy was written from (writeParquetCopy), array for array: read row group by row group,
 * each column in one pass over its typed arrays (labels are looked up once per dictionary entry, not per row).
 */
export async function readParquetCopy(bytes: Uint8Array, meta: VersionMeta): Promise<RowIndex> {
  const { arrow, parquet } = await libraries();
  const file = await parquet.ParquetFile.fromFile(new Blob([bytes as Uint8Array<ArrayBuffer>]));
  try {
    const metadata = file.metadata();
    const layout = readLayout(metadata.fileMetadata().keyValueMetadata());
    const size = metadata.fileMetadata().numRows();
    if (size !== layout.rows) throw new Error(`The Parquet copy has ${size} rows; its metadata says ${layout.rows}`);
    const { facets: facetOrder, indicators: indicatorOrder } = rowIndexColumns(meta, true);

    const ids = new Int32Array(size);
    const timePeriodIds: number[] = [];
    const timePeriodStarts: number[] = [];
    const periodOfLabels = new Map<string, number>();
    for (const t of meta.timePeriods)
      periodOfLabels.set(`${timePeriodLabel(t.period, t.code)}\u0000${timeIdentifierLabel(t.code)}`, t.id);
    const levelOfLabel = new Map(meta.levelsByLabel.map((code) => [GEOGRAPHIC_LEVEL_LABELS[code] ?? code, code]));
    const levelCodes: string[] = [];
    const levels = new Uint8Array(size);

    const facetReaders = new Map<string, { parquetColumn: string; reader: FacetReader }>();
    for (const level of meta.locationLevels) {
      const keyed = (meta.locationsByLevel.get(level) ?? []).map((l) => ({ id: l.id, key: l.publicId }));
      facetReaders.set(locationColumn(level), {
        parquetColumn: `${locationPrefix(level)}_id`,
        reader: new FacetReader(keyed, size),
      });
    }
    for (const filter of meta.filters) {
      const keyed = [...meta.optionsById.values()]
        .filter((o) => o.filter.column === filter.column)
        .map((o) => ({ id: o.id, key: o.label }));
      facetReaders.set(filter.column, { parquetColumn: filter.columnName, reader: new FacetReader(keyed, size) });
    }
    const indicatorReaders = new Map<string, { parquetColumn: string; reader: IndicatorReader }>();
    for (const indicator of meta.indicators) {
      const described = layout.indicators[indicator.columnName];
      if (!described)
        throw new Error(`The Parquet copy's metadata does not describe indicator ${indicator.columnName}`);
      indicatorReaders.set(indicator.column, {
        parquetColumn: indicator.columnName,
        reader: new IndicatorReader(indicator.columnName, described, size),
      });
    }

    let base = 0;
    for (let group = 0; group < metadata.numRowGroups(); group++) {
      const wasmTable = await file.read({ rowGroups: [group], batchSize: PARQUET_ROW_GROUP_ROWS });
      const table = arrow.tableFromIPC(wasmTable.intoIPCStream());
      for (const { data, base: at } of chunksOf(table, 'row_id', base))
        ids.set((data.values as Int32Array).subarray(0, data.length), at);
      const periods = chunksOf(table, 'time_period', base);
      const identifiers = chunksOf(table, 'time_identifier', base);
      periods.forEach(({ data, base: at }, c) =>
        readTimePeriods(data, alongside(identifiers, c, at), at, periodOfLabels, timePeriodIds, timePeriodStarts),
      );
      for (const { data, base: at } of chunksOf(table, 'geographic_level', base))
        readLevels(data, at, levelOfLabel, levelCodes, levels);
      for (const { parquetColumn, reader } of facetReaders.values()) {
        for (const { data, base: at } of chunksOf(table, parquetColumn, base)) reader.read(data, at, parquetColumn);
      }
      for (const { parquetColumn, reader } of indicatorReaders.values()) {
        const texts = chunksOf(table, `${parquetColumn}__text`, base);
        chunksOf(table, parquetColumn, base).forEach(({ data, base: at }, c) =>
          reader.read(data, alongside(texts, c, at), at),
        );
      }
      base += table.numRows;
    }
    if (base !== size) throw new Error(`The Parquet copy's row groups hold ${base} rows, not ${size}`);

    const starts = Int32Array.from([...timePeriodStarts, size]);
    const facets = new Map<string, FacetColumn>();
    for (const column of facetOrder) facets.set(column, facetReaders.get(column)!.reader.finish());
    const indicators = new Map<string, IndicatorColumn>();
    for (const column of indicatorOrder) indicators.set(column, indicatorReaders.get(column)!.reader.finish());
    return new RowIndex({
      ids: RowIds.of(ids, starts),
      timePeriodIds: Int32Array.from(timePeriodIds),
      timePeriodStarts: starts,
      levelCodes,
      levels,
      facets,
      indicators,
    });
  } finally {
    file.free();
  }
}

/** The dictionary entries' strings of a chunk, each looked up once. */
function entries(data: Arrow.Data): Array<string | null> {
  const dictionary = data.dictionary!;
  return Array.from({ length: dictionary.length }, (_, e) => dictionary.get(e) as string | null);
}

/** A chunk's time periods: each run of one period is the next of the index's periods (descending). */
function readTimePeriods(
  periods: Arrow.Data,
  identifiers: Arrow.Data,
  base: number,
  idOf: Map<string, number>,
  ids: number[],
  starts: number[],
): void {
  if (periods.nullCount > 0 || identifiers.nullCount > 0)
    throw new Error('The Parquet copy has a row without a time period');
  const periodLabels = entries(periods);
  const identifierLabels = entries(identifiers);
  const periodKeys = periods.values as Int32Array;
  const identifierKeys = identifiers.values as Int32Array;
  let previousKey = -1;
  let previousId = ids.at(-1) ?? Infinity;
  for (let i = 0; i < periods.length; i++) {
    const key = periodKeys[i]! * identifierLabels.length + identifierKeys[i]!;
    if (key === previousKey) continue;
    previousKey = key;
    const label = `${periodLabels[periodKeys[i]!]}\u0000${identifierLabels[identifierKeys[i]!]}`;
    const id = idOf.get(label);
    if (id === undefined)
      throw new Error(
        `The Parquet copy holds time period ${label.replace('\u0000', ' ')}, which the version's metadata does not know`,
      );
    if (id === previousId) continue;
    if (id > previousId) throw new Error("The Parquet copy's rows are not in time period descending order");
    ids.push(id);
    starts.push(base + i);
    previousId = id;
  }
}

/** A chunk's levels: codes numbered by first appearance in position order. */
function readLevels(
  data: Arrow.Data,
  base: number,
  levelOf: Map<string, string>,
  levelCodes: string[],
  levels: Uint8Array,
): void {
  if (data.nullCount > 0) throw new Error('The Parquet copy has a row without a geographic level');
  const codeOfEntry = entries(data).map((label) => {
    const code = label === null ? undefined : (levelOf.get(label) ?? label);
    return code;
  });
  const indexOfEntry = new Int32Array(codeOfEntry.length).fill(-1);
  const keys = data.values as Int32Array;
  for (let i = 0; i < data.length; i++) {
    const entry = keys[i]!;
    let code = indexOfEntry[entry]!;
    if (code < 0) {
      const levelCode = codeOfEntry[entry]!;
      code = levelCodes.indexOf(levelCode);
      if (code < 0) {
        if (levelCodes.length === 256) throw new Error('More than 256 geographic levels');
        code = levelCodes.push(levelCode) - 1;
      }
      indexOfEntry[entry] = code;
    }
    levels[base + i] = code;
  }
}
