import { locationColumn } from '../../../standard/geographic-levels.js';
import type { VersionMeta } from '../model.js';
import {
  RowIds,
  RowIndex,
  type Codes,
  type FacetColumn,
  type IndicatorColumn,
  type RowIndexParts,
} from './row-index.js';

/** The narrowest codes array for a dictionary of `distinct` values. */
export function codesFor(distinct: number, size: number): Codes {
  return distinct <= 256 ? new Uint8Array(size) : distinct <= 65536 ? new Uint16Array(size) : new Int32Array(size);
}

/** A facet column's dictionary: the distinct ids ascending, and each id's code (its place in them). */
export function ascendingDictionary(ids: Set<number>): { dictionary: Int32Array; codeOf: Map<number, number> } {
  const dictionary = Int32Array.from([...ids].sort((a, b) => a - b));
  const codeOf = new Map<number, number>();
  dictionary.forEach((id, code) => codeOf.set(id, code));
  return { dictionary, codeOf };
}

/** A column of ids as dictionary codes (the dictionary ascending). */
export function dictionaryEncode(values: Int32Array): FacetColumn {
  const seen = new Set<number>();
  for (let p = 0; p < values.length; p++) seen.add(values[p]!);
  const { dictionary, codeOf } = ascendingDictionary(seen);
  const codes = codesFor(dictionary.length, values.length);
  let previous = NaN;
  let previousCode = 0;
  for (let p = 0; p < values.length; p++) {
    const v = values[p]!;
    // Neighbouring rows mostly share their ids.
    if (v !== previous) {
      previous = v;
      previousCode = codeOf.get(v)!;
    }
    codes[p] = previousCode;
  }
  return { dictionary, codes };
}

/**
 * The number a text of at most 15 digits prints as exactly (`String(n) === text`: no sign but `-`, no leading zero,
 * not `-0`), else undefined. Most indicator cells are such counts, and this is what `String(Number(text)) === text`
 * decides for them without making a string per cell (a 5M-row version's index build: 15 million of them).
 */
function canonicalInteger(text: string): number | undefined {
  const length = text.length;
  const negative = length > 0 && text.charCodeAt(0) === 45; // '-'
  const start = negative ? 1 : 0;
  const digits = length - start;
  if (digits < 1 || digits > 15) return undefined;
  const first = text.charCodeAt(start) - 48;
  if (first < 0 || first > 9 || (first === 0 && (digits > 1 || negative))) return undefined;
  let value = first;
  for (let i = start + 1; i < length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return negative ? -value : value;
}

/** Rows per chunk of a column collected before its length is known. */
export const CHUNK_BITS = 16;
export const CHUNK_ROWS = 1 << CHUNK_BITS;

/**
 * The number a plain decimal text (digits, a point, digits) prints as exactly (`String(n) === text`), else undefined:
 * at most 15 significant digits, no leading zero but the one before the point, none trailing, and not below 1e-6
 * (printed with an exponent). The quotient of its digits by a power of ten is exact to the nearest double, as parsing
 * it is, and 15 digits print back as they were. Decimal indicators (percentages) are a third of a 5M-row file's cells;
 * `String(Number(text))` made a string for each of them.
 */
export function canonicalDecimal(text: string): number | undefined {
  const length = text.length;
  const negative = length > 0 && text.charCodeAt(0) === 45; // '-'
  let i = negative ? 1 : 0;
  let mantissa = 0;
  let digits = 0;
  if (text.charCodeAt(i) === 48) {
    i++; // '0' before the point, and nothing else there
  } else {
    for (; i < length; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) break;
      mantissa = mantissa * 10 + digit;
      digits++;
    }
    if (digits === 0) return undefined;
  }
  if (i >= length || text.charCodeAt(i) !== 46) return undefined; // '.'
  const fractionStart = ++i;
  let leadingZeros = 0;
  for (; i < length; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    if (mantissa === 0 && digit === 0) leadingZeros++;
    else {
      mantissa = mantissa * 10 + digit;
      digits++;
    }
  }
  const decimals = length - fractionStart;
  if (decimals === 0 || mantissa === 0 || digits > 15 || leadingZeros > 5 || text.charCodeAt(length - 1) === 48)
    return undefined;
  const value = mantissa / 10 ** decimals;
  return negative ? -value : value;
}

/**
 * Collects one indicator column's raw texts by row: a text that is the printing of its number (`String(n)`) is kept
 * as the number, any other text (a symbol such as `x`, `1.50`, a blank) as an exception by row. The numbers are held
 * in chunks, so a column can grow without its length known (the import collects it while reading the file).
 */
export class IndicatorBuilder {
  private readonly chunks: Float64Array[] = [];
  private readonly textRows: number[] = [];
  private readonly textCodes: number[] = [];
  private readonly texts: string[] = [];
  private readonly textCode = new Map<string, number>();
  /** Most decimals of a number's text, -1 once a text needs the exponent form (then kept as Float64). */
  private decimals = 0;
  private maxAbs = 0;

  add(row: number, raw: string): void {
    const number = canonicalInteger(raw) ?? this.printedNumber(raw);
    if (number !== undefined) {
      const chunk = this.chunks[row >>> CHUNK_BITS] ?? (this.chunks[row >>> CHUNK_BITS] = new Float64Array(CHUNK_ROWS));
      chunk[row & (CHUNK_ROWS - 1)] = number;
      const abs = Math.abs(number);
      if (abs > this.maxAbs) this.maxAbs = abs;
      return;
    }
    let code = this.textCode.get(raw);
    if (code === undefined) {
      code = this.texts.push(raw) - 1;
      this.textCode.set(raw, code);
    }
    this.textRows.push(row);
    this.textCodes.push(code);
  }

  /** Whether row `row` holds a number (whose printing is its text), not an exception. */
  holdsNumber(row: number): boolean {
    const flags = this.exceptionFlags ?? (this.exceptionFlags = this.flagExceptions());
    return (flags[row >>> 3]! & (1 << (row & 7))) === 0;
  }

  /** Row `row`'s number; 0 for an exception. */
  numberAt(row: number): number {
    return this.chunks[row >>> CHUNK_BITS]?.[row & (CHUNK_ROWS - 1)] ?? 0;
  }

  /** The text of a row that holds no number (`holdsNumber` false): its exception, as it was added. */
  exceptionAt(row: number): string {
    // Exceptions were added in row order: find this one by bisection.
    let lo = 0;
    let hi = this.textRows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.textRows[mid]! < row) lo = mid + 1;
      else hi = mid;
    }
    return this.texts[this.textCodes[lo]!]!;
  }

  private exceptionFlags: Uint8Array | undefined;

  private flagExceptions(): Uint8Array {
    const last = this.textRows.at(-1) ?? 0;
    const flags = new Uint8Array((last >>> 3) + 1);
    for (const row of this.textRows) flags[row >>> 3]! |= 1 << (row & 7);
    return flags;
  }

  /** The number `raw` is the printing of (`String(n) === raw`), noting its decimals; else undefined. */
  private printedNumber(raw: string): number | undefined {
    if (raw === '') return undefined;
    const decimal = canonicalDecimal(raw);
    if (decimal !== undefined) {
      if (this.decimals >= 0) this.decimals = Math.max(this.decimals, raw.length - raw.indexOf('.') - 1);
      return decimal;
    }
    const number = Number(raw);
    if (String(number) !== raw) return undefined;
    if (this.decimals >= 0 && !Number.isInteger(number)) {
      if (raw.includes('e')) this.decimals = -1;
      else this.decimals = Math.max(this.decimals, raw.length - raw.indexOf('.') - 1);
    }
    return number;
  }

  /**
   * The column of `size` rows (position p holding row `rowAt[p]` when given, else row p), its numbers as Int32 `m` with
   * `m / 10^scale` the number when every number fits (then `String(m / 10^scale)` is its text again: the division
   * gives the double nearest the decimal, as parsing did). Texts are numbered by first appearance in position order.
   */
  finish(size: number, rowAt?: Int32Array): IndicatorColumn {
    const scale = this.decimals;
    const exceptions = this.exceptions(size, rowAt);
    const numberAt = (p: number) => this.numberAt(rowAt ? rowAt[p]! : p);
    if (scale < 0 || scale > 9 || this.maxAbs * 10 ** scale >= 2 ** 31) {
      const values = new Float64Array(size);
      for (let p = 0; p < size; p++) values[p] = numberAt(p);
      return { values, scale: 0, ...exceptions };
    }
    const values = new Int32Array(size);
    const factor = 10 ** scale;
    for (let p = 0; p < size; p++) values[p] = Math.round(numberAt(p) * factor);
    return { values, scale, ...exceptions };
  }

  /** The exceptions by position, ascending, their texts numbered again by first appearance in that order. */
  private exceptions(
    size: number,
    rowAt: Int32Array | undefined,
  ): Pick<IndicatorColumn, 'textPositions' | 'textCodes' | 'texts'> {
    const count = this.textRows.length;
    if (!rowAt || count === 0)
      return {
        textPositions: Int32Array.from(this.textRows),
        textCodes: Uint32Array.from(this.textCodes),
        texts: this.texts,
      };
    // A row's exception by row, then read in position order (one pass; no comparison sort of up to millions).
    const exceptionOfRow = new Int32Array(size).fill(-1);
    for (let e = 0; e < count; e++) exceptionOfRow[this.textRows[e]!] = e;
    const textPositions = new Int32Array(count);
    const textCodes = new Uint32Array(count);
    const texts: string[] = [];
    const renumbered = new Map<number, number>();
    let k = 0;
    for (let p = 0; p < size; p++) {
      const e = exceptionOfRow[rowAt[p]!]!;
      if (e < 0) continue;
      const old = this.textCodes[e]!;
      let code = renumbered.get(old);
      if (code === undefined) {
        code = texts.push(this.texts[old]!) - 1;
        renumbered.set(old, code);
      }
      textPositions[k] = p;
      textCodes[k++] = code;
    }
    return { textPositions, textCodes, texts };
  }
}

/**
 * Makes a RowIndex from rows given in position order (the default result order: time period descending, then row
 * id): each facet column is collected as ids and dictionary-coded at the end, each indicator column compacted.
 */
export class RowIndexBuilder {
  private ids: Int32Array;
  private levels: Uint8Array;
  private readonly levelCodes: string[] = [];
  private readonly facetValues: Int32Array[];
  private readonly indicators: IndicatorBuilder[];
  private readonly timePeriodIds: number[] = [];
  private readonly timePeriodStarts: number[] = [];
  private position = 0;

  constructor(
    readonly size: number,
    private readonly facetColumns: readonly string[],
    private readonly indicatorColumns: readonly string[],
  ) {
    this.ids = new Int32Array(size);
    this.levels = new Uint8Array(size);
    this.facetValues = facetColumns.map(() => new Int32Array(size));
    this.indicators = indicatorColumns.map(() => new IndicatorBuilder());
  }

  get rows(): number {
    return this.position;
  }

  /** The next row: its id, time period id (never above the previous row's), level code, facet ids and indicator texts in the builder's column order. */
  add(
    id: number,
    timePeriodId: number,
    levelCode: string,
    facets: ArrayLike<number>,
    indicators: ArrayLike<string>,
  ): void {
    const p = this.position++;
    if (p >= this.size) throw new Error('More rows than the row index was made for');
    this.ids[p] = id;
    const lastPeriod = this.timePeriodIds.at(-1);
    if (lastPeriod !== timePeriodId) {
      if (lastPeriod !== undefined && timePeriodId > lastPeriod)
        throw new Error('Rows must come in time period descending order');
      this.timePeriodIds.push(timePeriodId);
      this.timePeriodStarts.push(p);
    }
    let level = this.levelCodes.indexOf(levelCode);
    if (level < 0) {
      if (this.levelCodes.length === 256) throw new Error('More than 256 geographic levels');
      level = this.levelCodes.push(levelCode) - 1;
    }
    this.levels[p] = level;
    for (let c = 0; c < this.facetValues.length; c++) this.facetValues[c]![p] = facets[c]!;
    for (let c = 0; c < this.indicators.length; c++) this.indicators[c]!.add(p, indicators[c]!);
  }

  /**
   * The index. The builder lets go of each collected column as soon as it is made compact, and of all of them at the
   * end, so that what is done with the index next (the import deflates and stores it) does not hold both: 260 MB of
   * Int32 and Float64 columns at 5,000,000 rows.
   */
  finish(): RowIndex {
    if (this.position !== this.size)
      throw new Error(`The row index was made for ${this.size} rows but got ${this.position}`);
    const timePeriodStarts = Int32Array.from([...this.timePeriodStarts, this.size]);
    const facets = new Map<string, FacetColumn>();
    this.facetColumns.forEach((column, c) => {
      facets.set(column, dictionaryEncode(this.facetValues[c]!));
      this.facetValues[c] = new Int32Array(0);
    });
    const indicators = new Map<string, IndicatorColumn>();
    this.indicatorColumns.forEach((column, c) => {
      indicators.set(column, this.indicators[c]!.finish(this.size));
      this.indicators[c] = new IndicatorBuilder();
    });
    const parts: RowIndexParts = {
      ids: RowIds.of(this.ids, timePeriodStarts),
      timePeriodIds: Int32Array.from(this.timePeriodIds),
      timePeriodStarts,
      levelCodes: this.levelCodes,
      levels: this.levels,
      facets,
      indicators,
    };
    this.ids = new Int32Array(0);
    this.levels = new Uint8Array(0);
    return new RowIndex(parts);
  }
}
/**
 * The columns a build from rows reads, in this order: id, time period, level, the location and filter columns
 * (`facets`, the index's, in the order it keeps them), then the indicator columns (none when built without values).
 */
export function rowIndexColumns(
  meta: VersionMeta,
  withValues: boolean,
): { facets: string[]; indicators: string[]; read: string[] } {
  const facets = [...meta.locationLevels.map(locationColumn), ...meta.filters.map((f) => f.column)];
  const indicators = withValues ? meta.indicators.map((i) => i.column) : [];
  return { facets, indicators, read: ['id', 'time_period_id', 'geographic_level', ...facets, ...indicators] };
}
