import { NUMERIC_TEXT_PATTERN, type Predicate, type SortKey } from '../resolve.js';
import {
  MAX_PLAIN_SCALE,
  MAX_SCALED_DECIMAL_BYTES,
  putAscii,
  putBytes,
  putScaledDecimal,
  utf8,
  type ByteSink,
} from '../json-bytes.js';

/**
 * An in-process bitmap index over one version's rows, so the query engine answers count and page-of-ids without
 * scanning in PostgreSQL.
 *
 * Rows are held by position in the default result order (time period descending, then row id), column by column
 * and compactly (docs/architecture.md, "The row index"): the time period as position ranges (the order makes each
 * period one run), the level and every location and filter column as dictionary codes of the narrowest width that
 * holds them (one byte for up to 256 distinct values), the indicator values as scaled integers where their text
 * allows it. A predicate is evaluated to a bitset (one bit per position): a leaf from its column's postings (positions
 * by value) when the column has many distinct values, else by one pass over its codes, a frequent value's bitset
 * cached; time periods as ranges; AND/OR/NOT word by word, an AND only over the words its time periods cover. The
 * count is a popcount and the default-ordered page a walk to the k-th set bit, in one pass over those words. Other
 * sorts sort only the matching positions.
 *
 * Made by `RowIndexBuilder` (row-index-builder.ts) or from its engine form (storage/engine-form.ts), and kept by
 * the `RowIndexStore` (row-index-store.ts). One class on purpose: the bitset operations share the arrays and their
 * invariants, so splitting it would only spread one data structure over several files.
 */
export interface Selection {
  total: number;
  /** Row ids of the requested page, in result order. */
  ids: number[];
  /** Their positions in the index (for facetRow). */
  positions: number[];
}

/** Codes into a dictionary, one per position, in the narrowest width that holds the dictionary. */
export type Codes = Uint8Array | Uint16Array | Int32Array;

/** A location or filter column: `dictionary[codes[p]]` is the id at position p (0: none). */
export interface FacetColumn {
  /** The distinct ids, ascending. */
  dictionary: Int32Array;
  codes: Codes;
}

/**
 * An indicator column: most values are numbers whose `String(n)` is the raw text, held as `values[p] / 10 ** scale`
 * (Int32Array) or as the number (Float64Array); the other raw texts (symbols, `1.50`, blanks) by position.
 */
export interface IndicatorColumn {
  values: Int32Array | Float64Array;
  scale: number;
  /** Positions, ascending, whose raw text is not such a number. */
  textPositions: Int32Array;
  /** For each of textPositions, its text in `texts`. */
  textCodes: Uint32Array;
  texts: string[];
}

/** The period holding a position: the last of `starts` (ascending, the first 0) at or before it. */
export function periodIndexAt(starts: Int32Array, position: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= position) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The row id at each position. Statistics files are written time period by time period, so the rows of a period
 * usually have consecutive ids, ascending in position order (7 of the 8 seeded versions, and the benchmarks' 5M):
 * then the first id of each period is all there is to hold, 20 MB less for 5,000,000 rows; else one per position.
 */
export class RowIds {
  private constructor(
    readonly length: number,
    private readonly perPosition: Int32Array | undefined,
    private readonly firstOfPeriod: Int32Array | undefined,
    private readonly periodStarts: Int32Array,
  ) {}

  /** The ids by position, the periods starting at `periodStarts` (its last entry: the number of rows). */
  static of(ids: Int32Array, periodStarts: Int32Array): RowIds {
    const periods = periodStarts.length - 1;
    const firsts = new Int32Array(Math.max(0, periods));
    for (let k = 0; k < periods; k++) {
      const start = periodStarts[k]!;
      const first = ids[start]!;
      for (let p = start + 1; p < periodStarts[k + 1]!; p++) {
        if (ids[p] !== first + (p - start)) return new RowIds(ids.length, ids, undefined, periodStarts);
      }
      firsts[k] = first;
    }
    return new RowIds(ids.length, undefined, firsts, periodStarts);
  }

  /** Ids consecutive within each period, from each period's first (as the engine form keeps them). */
  static ofPeriodFirsts(length: number, firstOfPeriod: Int32Array, periodStarts: Int32Array): RowIds {
    if (firstOfPeriod.length !== Math.max(0, periodStarts.length - 1))
      throw new Error('One first id per time period is needed');
    return new RowIds(length, undefined, firstOfPeriod, periodStarts);
  }

  /** Whether the ids are held as each period's first (else one per position). */
  get perPeriod(): boolean {
    return this.perPosition === undefined;
  }

  /** Each period's first id when the ids are held that way, else undefined. */
  get periodFirstIds(): Int32Array | undefined {
    return this.firstOfPeriod;
  }

  at(position: number): number {
    if (this.perPosition) return this.perPosition[position]!;
    const k = periodIndexAt(this.periodStarts, position);
    return this.firstOfPeriod![k]! + (position - this.periodStarts[k]!);
  }

  get byteLength(): number {
    return (this.perPosition ?? this.firstOfPeriod!).byteLength;
  }

  /** The ids of positions `start … end-1`, in an array of their own (a part at a time, not every id at once). */
  slice(start: number, end: number): Int32Array {
    if (this.perPosition) return this.perPosition.slice(start, end);
    const ids = new Int32Array(Math.max(0, end - start));
    for (let k = 0; k + 1 < this.periodStarts.length; k++) {
      const from = Math.max(start, this.periodStarts[k]!);
      const to = Math.min(end, this.periodStarts[k + 1]!);
      for (let p = from; p < to; p++) ids[p - start] = this.firstOfPeriod![k]! + (p - this.periodStarts[k]!);
    }
    return ids;
  }

  /** Every id by position (for the engine form). */
  toArray(): Int32Array {
    return this.perPosition ?? this.slice(0, this.length);
  }
}

/** Everything an index is made of (what the builder makes and the engine form holds). */
export interface RowIndexParts {
  ids: RowIds;
  /** The time period ids in position order (descending), and where each starts: period k holds positions starts[k] .. starts[k+1]. */
  timePeriodIds: Int32Array;
  timePeriodStarts: Int32Array;
  /** geographic_level codes; `levels[p]` indexes it. */
  levelCodes: string[];
  levels: Uint8Array;
  /** Location and filter columns by row-table column name. */
  facets: Map<string, FacetColumn>;
  /** Indicator columns by row-table column name (none when built without the values). */
  indicators: Map<string, IndicatorColumn>;
}

const WORD = 32;
/** Cap on the cached value bitsets of one index (beyond it, bitsets are made per query). */
const MAX_BITSET_BYTES_PER_INDEX = 32 * 1024 * 1024;
/**
 * A column of more distinct values than this gets postings (positions by value, 4 bytes a row, made on first use):
 * a value of it is usually rare, and setting its positions beats a pass over every row's code (13 ms at 5M rows).
 * Fewer values are each frequent: a pass, then a cached bitset.
 */
const POSTINGS_MIN_DISTINCT = 16;
/** An `in` of at most this many values of such a column ORs their bitsets (see `multiValueBits`). */
const MAX_VALUES_FROM_BITSETS = 8;

/** Positions grouped by code: `positions[offsets[k] .. offsets[k+1])` hold code k, ascending. */
interface Postings {
  offsets: Int32Array;
  positions: Int32Array;
}
const POWERS_OF_TEN = [1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9];
const NUMERIC_TEXT = new RegExp(NUMERIC_TEXT_PATTERN);

/**
 * The raw text of an indicator value at a position: its text when the position is one of `textPositions`, else
 * `value` (the column's number there) unscaled.
 */
export function indicatorTextOf(column: Omit<IndicatorColumn, 'values'>, position: number, value: number): string {
  const k = binarySearch(column.textPositions, position);
  if (k >= 0) return column.texts[column.textCodes[k]!]!;
  return String(unscaled(value, column.scale));
}

/** An indicator column's non-number texts as JSON string literals in UTF-8, made on a page's first need of them. */
const quotedTexts = new WeakMap<IndicatorColumn, Uint8Array[]>();

/** An indicator column's number as it is held (`m / 10^scale`). */
function unscaled(value: number, scale: number): number {
  return scale === 0 ? value : value / POWERS_OF_TEN[scale]!;
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

/**
 * Words `from` … `to - 1` of a bitset. A predicate evaluated under a window is exact inside it only: an AND with a
 * time period leaf evaluates its other terms under the window of words that leaf can set (docs/architecture.md).
 */
interface Window {
  from: number;
  to: number;
}

/** Sets in `bits` the positions whose code is marked in `wanted`, one pass over the codes (of the window's words). */
function scanCodes(codes: Codes, wanted: Uint8Array, bits: Uint32Array, size: number, window?: Window): void {
  const end = window ? Math.min(size, window.to * WORD) : size;
  const whole = end - (end % WORD);
  let w = window?.from ?? 0;
  const only = codes instanceof Uint8Array && codes.byteOffset % 4 === 0 ? onlyCode(wanted) : -1;
  if (only >= 0) {
    scanOneByteCode(codes as Uint8Array, only, bits, w, whole);
    w = Math.max(w, whole / WORD);
  }
  for (let base = w * WORD; base < whole; base += WORD, w++) {
    let word = 0;
    for (let b = 0; b < WORD; b++) if (wanted[codes[base + b]!]) word |= 1 << b;
    bits[w]! |= word;
  }
  for (let p = Math.max(whole, w * WORD); p < end; p++) if (wanted[codes[p]!]) bits[p >>> 5]! |= 1 << (p & 31);
}

/** The one code marked in `wanted`, or -1 when there are none or several. */
function onlyCode(wanted: Uint8Array): number {
  let found = -1;
  for (let code = 0; code < wanted.length; code++) {
    if (!wanted[code]) continue;
    if (found >= 0) return -1;
    found = code;
  }
  return found;
}

/**
 * scanCodes for one one-byte code, four codes per step (SWAR: a byte of `word ^ pattern` is zero where the code
 * is): words `fromWord` … of `bits` up to position `to` (a multiple of 32). 3-4 times faster than a table lookup per
 * code, which was most of a cold query for one location (7.7 ms of 1.7 million codes, CPU profile).
 */
function scanOneByteCode(codes: Uint8Array, code: number, bits: Uint32Array, fromWord: number, to: number): void {
  const quads = new Uint32Array(codes.buffer, codes.byteOffset, to >>> 2);
  const pattern = Math.imul(code, 0x01010101);
  for (let w = fromWord, q = fromWord * 8; q < to >>> 2; w++) {
    let word = 0;
    for (let shift = 0; shift < WORD; shift += 4, q++) {
      const v = (quads[q]! ^ pattern) >>> 0;
      // High bit of each byte: set when that byte is zero (exact, no borrow between bytes).
      const zero = ~(((v & 0x7f7f7f7f) + 0x7f7f7f7f) | v) & 0x80808080;
      if (zero !== 0)
        word |= (((zero >>> 7) & 1) | ((zero >>> 14) & 2) | ((zero >>> 21) & 4) | ((zero >>> 28) & 8)) << shift;
    }
    bits[w]! |= word;
  }
}

/** The first index of the ascending `values[from…to)` that is at least `value`. */
export function lowerBound(values: Int32Array, from: number, to: number, value: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Whether sorts are the default result order (time period newest first, then row id): the positions' order. */
export function isDefaultOrder(sorts: readonly SortKey[]): boolean {
  return sorts.length === 1 && sorts[0]!.column === 'time_period_id' && sorts[0]!.direction === 'Desc';
}

/** Whether a term is a time period leaf (a range of positions, the rows being in time period order). */
const isTimePeriodLeaf = (p: Predicate) =>
  (p.kind === 'in' && p.column === 'time_period_id' && !p.negated) || p.kind === 'compare';

/** The index of `value` in the ascending `values`, or -1. */
export function binarySearch(values: Int32Array, value: number): number {
  let lo = 0;
  let hi = values.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = values[mid]!;
    if (v === value) return mid;
    if (v < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

export class RowIndex {
  readonly size: number;
  readonly ids: RowIds;
  private readonly words: number;
  /** Bitsets of frequent values (one bit per position), made on first use. */
  private readonly bitsets = new Map<string, Uint32Array>();
  private bitsetBytes = 0;
  /**
   * Values of columns of few distinct values found in at most one row in 32: not kept as bitsets, so worked out per
   * query (under a window, for its words only). At most POSTINGS_MIN_DISTINCT keys per column.
   */
  private readonly infrequent = new Set<string>();
  /** Positions where each time period id starts and ends (exclusive). */
  private readonly timePeriodRanges = new Map<number, [number, number]>();
  private readonly postings = new Map<string, Postings>();
  private postingsBytes = 0;
  /**
   * Asked before a postings list or a bitset is cached (bytes it would hold): the store's memory budget covers
   * them too, and when it has no room the query works without (a pass over the codes, a bitset of its own).
   */
  private mayCache: (bytes: number) => boolean = () => true;
  lastUsed = Date.now();

  constructor(private readonly parts: RowIndexParts) {
    this.ids = parts.ids;
    this.size = parts.ids.length;
    this.words = Math.ceil(this.size / WORD);
    const { timePeriodIds, timePeriodStarts } = parts;
    for (let k = 0; k < timePeriodIds.length; k++)
      this.timePeriodRanges.set(timePeriodIds[k]!, [timePeriodStarts[k]!, timePeriodStarts[k + 1]!]);
  }

  /** The arrays the index is made of, for its engine form (storage/engine-form.ts); read, never changed. */
  get stored(): Readonly<RowIndexParts> {
    return this.parts;
  }

  /** Adds indicator columns loaded after the rest (the engine form's second part). */
  addIndicators(columns: ReadonlyMap<string, IndicatorColumn>): void {
    for (const [name, column] of columns) {
      if (column.values.length !== this.size)
        throw new Error(`Indicator column ${name} has ${column.values.length} values for ${this.size} rows`);
      this.parts.indicators.set(name, column);
    }
  }

  /** Approximate bytes held: the arrays the index is made of, and what queries cached (`cachedBytes`). */
  get bytes(): number {
    return this.partsBytes + this.cachedBytes;
  }

  /** Approximate bytes of the arrays and texts the index is made of (fixed once its values are in). */
  get partsBytes(): number {
    const { ids, timePeriodIds, timePeriodStarts, levels, facets, indicators } = this.parts;
    let total = ids.byteLength + timePeriodIds.byteLength + timePeriodStarts.byteLength + levels.byteLength;
    for (const column of facets.values()) total += column.codes.byteLength + column.dictionary.byteLength;
    for (const column of indicators.values()) {
      total += column.values.byteLength + column.textPositions.byteLength + column.textCodes.byteLength;
      for (const text of column.texts) total += 16 + 2 * text.length;
    }
    return total;
  }

  /** Bytes of the postings and bitsets queries made and kept: dropped first when memory is short (`dropCached`). */
  get cachedBytes(): number {
    return this.postingsBytes + this.bitsetBytes;
  }

  /** Sets what is asked before anything is cached (the store's budget); by default everything may be. */
  limitCaching(mayCache: (bytes: number) => boolean): void {
    this.mayCache = mayCache;
  }

  /** Drops the cached postings and bitsets (made again on use); returns the bytes freed. */
  dropCached(): number {
    const freed = this.cachedBytes;
    this.postings.clear();
    this.bitsets.clear();
    this.postingsBytes = 0;
    this.bitsetBytes = 0;
    return freed;
  }

  /** A location or filter column. */
  facet(name: string): FacetColumn {
    const column = this.parts.facets.get(name);
    if (!column) throw new Error(`Row index has no column ${name}`);
    return column;
  }

  /** The time period id at a position. */
  timePeriodAt(position: number): number {
    return this.parts.timePeriodIds[periodIndexAt(this.parts.timePeriodStarts, position)]!;
  }

  levelCodeAt(position: number): string {
    return this.parts.levelCodes[this.parts.levels[position]!]!;
  }

  /** The raw text of an indicator value (the column must be held: see hasIndicators). */
  indicatorText(column: string, position: number): string {
    const values = this.parts.indicators.get(column)!;
    return indicatorTextOf(values, position, values.values[position]!);
  }

  /**
   * An indicator column's values as JSON string literals written as bytes, by position (the column must be held): a
   * scaled integer's digits straight from the number, the column's other texts quoted and encoded once per column.
   */
  indicatorJsonLiterals(column: string): { maxBytes: number; put(sink: ByteSink, position: number): void } {
    const values = this.parts.indicators.get(column);
    // A page of no rows asks too while the column is not held (the index's values part loading); a row never does.
    if (!values)
      return {
        maxBytes: 0,
        put: () => {
          throw new Error(`Row index has no indicator column ${column}`);
        },
      };
    let quoted = quotedTexts.get(values);
    if (!quoted) quotedTexts.set(values, (quoted = values.texts.map((text) => utf8(JSON.stringify(text)))));
    const texts = quoted;
    const { textPositions, textCodes, scale } = values;
    const numbers = values.values;
    const plain = numbers instanceof Int32Array && scale <= MAX_PLAIN_SCALE;
    // A double's String is at most 25 characters (`-0.0000010000000687124962`: a sign, `0.`, five zeros and 17
    // digits; the exponent forms are shorter), plus the quotes.
    const numberBytes = (plain ? MAX_SCALED_DECIMAL_BYTES : 25) + 2;
    const maxBytes = texts.reduce((most, text) => Math.max(most, text.length), numberBytes);
    const putNumber = (sink: ByteSink, position: number) => {
      sink.buffer[sink.length++] = 34; // '"'
      if (plain) putScaledDecimal(sink, numbers[position]!, scale);
      else putAscii(sink, String(unscaled(numbers[position]!, scale)));
      sink.buffer[sink.length++] = 34;
    };
    if (textPositions.length === 0) return { maxBytes, put: putNumber };
    return {
      maxBytes,
      put(sink, position) {
        const k = binarySearch(textPositions, position);
        if (k >= 0) putBytes(sink, texts[textCodes[k]!]!);
        else putNumber(sink, position);
      },
    };
  }

  /** An indicator column's numbers by position, NaN where it holds a text instead (see `PageRows.numbersOf`). */
  indicatorNumbers(column: string): (position: number) => number {
    const values = this.parts.indicators.get(column);
    if (!values) return () => Number.NaN;
    const { textPositions, scale } = values;
    const numbers = values.values;
    if (textPositions.length === 0) return (position) => unscaled(numbers[position]!, scale);
    return (position) =>
      binarySearch(textPositions, position) >= 0 ? Number.NaN : unscaled(numbers[position]!, scale);
  }

  /** Whether the index holds these indicator columns (else their values come from the database). */
  hasIndicators(columns: readonly string[]): boolean {
    return columns.every((c) => this.parts.indicators.has(c));
  }

  /** The facet columns of the row at a position, as the row table holds them (so results need only indicators from the database). */
  facetRow(position: number): Record<string, unknown> {
    const row: Record<string, unknown> = {
      id: this.ids.at(position),
      time_period_id: this.timePeriodAt(position),
      geographic_level: this.levelCodeAt(position),
    };
    for (const [name, column] of this.parts.facets) row[name] = column.dictionary[column.codes[position]!];
    for (const name of this.parts.indicators.keys()) row[name] = this.indicatorText(name, position);
    return row;
  }

  private empty(): Uint32Array {
    return new Uint32Array(this.words);
  }

  private full(): Uint32Array {
    const bits = new Uint32Array(this.words).fill(0xffffffff);
    this.maskTail(bits);
    return bits;
  }

  private maskTail(bits: Uint32Array): void {
    const rest = this.size % WORD;
    if (rest !== 0) bits[this.words - 1]! &= ((1 << rest) - 1) >>> 0;
  }

  private setRange(bits: Uint32Array, from: number, to: number): void {
    for (let p = from; p < to && p % WORD !== 0; p++) bits[p >>> 5]! |= 1 << (p & 31);
    let p = Math.max(from, Math.ceil(from / WORD) * WORD);
    for (; p + WORD <= to; p += WORD) bits[p >>> 5] = 0xffffffff;
    for (; p < to; p++) bits[p >>> 5]! |= 1 << (p & 31);
  }

  /** The level and facet columns as codes and dictionary; the level's dictionary is its codes' names. */
  private codesOf(column: string): { codes: Codes; codeOf: (value: number | string) => number; distinct: number } {
    if (column === 'geographic_level') {
      const { levels, levelCodes } = this.parts;
      // An index of some columns only (stored-columns.ts) holds the levels only when a query asks for them.
      if (levels.length !== this.size) throw new Error('Row index has no geographic_level column');
      return { codes: levels, codeOf: (value) => levelCodes.indexOf(String(value)), distinct: levelCodes.length };
    }
    const { codes, dictionary } = this.facet(column);
    return { codes, codeOf: (value) => binarySearch(dictionary, Number(value)), distinct: dictionary.length };
  }

  /**
   * The bitset of a few values of a column of few distinct values: their single-value bitsets (cached, as each is
   * frequent) ORed word by word, instead of a pass over every row's code per query (at 5M rows a pass is 13 ms, an
   * OR of 3 cached bitsets 0.3 ms). Others: `valueBits`.
   */
  private multiValueBits(column: string, values: Array<number | string>, window?: Window): Uint32Array {
    if (
      column === 'time_period_id' ||
      values.length > MAX_VALUES_FROM_BITSETS ||
      this.codesOf(column).distinct > POSTINGS_MIN_DISTINCT
    ) {
      return this.valueBits(column, values, window);
    }
    const bits = this.empty();
    const { from, to } = window ?? { from: 0, to: this.words };
    for (const value of values) {
      const one = this.singleValueBits(column, value, window).bits;
      for (let w = from; w < to; w++) bits[w]! |= one[w]!;
    }
    return bits;
  }

  private valueBits(column: string, values: Array<number | string>, window?: Window): Uint32Array {
    const bits = this.empty();
    if (column === 'time_period_id') {
      for (const v of values) {
        const range = this.timePeriodRanges.get(Number(v));
        if (range) this.setRange(bits, range[0], range[1]);
      }
      return bits;
    }
    const { codes, codeOf, distinct } = this.codesOf(column);
    const found = values.map(codeOf).filter((code) => code >= 0);
    if (found.length === 0) return bits;
    const postings = distinct > POSTINGS_MIN_DISTINCT ? this.postingsOf(column, codes, distinct) : undefined;
    if (postings) {
      // A code's positions ascend: under a window, only those inside it.
      const { offsets, positions } = postings;
      for (const code of found) {
        const start = window
          ? lowerBound(positions, offsets[code]!, offsets[code + 1]!, window.from * WORD)
          : offsets[code]!;
        const end = window ? lowerBound(positions, start, offsets[code + 1]!, window.to * WORD) : offsets[code + 1]!;
        for (let i = start; i < end; i++) {
          const p = positions[i]!;
          bits[p >>> 5]! |= 1 << (p & 31);
        }
      }
      return bits;
    }
    const wanted = new Uint8Array(distinct);
    for (const code of found) wanted[code] = 1;
    scanCodes(codes, wanted, bits, this.size, window);
    return bits;
  }

  /** A counting sort of the column's codes, made on first use; undefined when the budget has no room for it. */
  private postingsOf(column: string, codes: Codes, distinct: number): Postings | undefined {
    const cached = this.postings.get(column);
    if (cached) return cached;
    const bytes = 4 * (distinct + 1) + 4 * this.size;
    if (!this.mayCache(bytes)) return undefined;
    const offsets = new Int32Array(distinct + 1);
    for (let p = 0; p < this.size; p++) offsets[codes[p]! + 1]!++;
    for (let k = 0; k < distinct; k++) offsets[k + 1]! += offsets[k]!;
    const next = offsets.slice(0, distinct);
    const positions = new Int32Array(this.size);
    for (let p = 0; p < this.size; p++) positions[next[codes[p]!]!++] = p;
    const built = { offsets, positions };
    this.postings.set(column, built);
    this.postingsBytes += bytes;
    return built;
  }

  /**
   * The positions a time period comparison matches, [from, to): positions run from the latest time period to the
   * earliest, so `> v` is a prefix and `< v` a suffix.
   */
  private compareRange(op: '>' | '>=' | '<' | '<=', value: number): [number, number] {
    const { timePeriodIds, timePeriodStarts } = this.parts;
    // The first period (in position order) not `before` the boundary.
    let k = 0;
    while (
      k < timePeriodIds.length &&
      (op === '>' || op === '<=' ? timePeriodIds[k]! > value : timePeriodIds[k]! >= value)
    )
      k++;
    const boundary = timePeriodStarts[k] ?? this.size;
    return op === '>' || op === '>=' ? [0, boundary] : [boundary, this.size];
  }

  private compareBits(op: '>' | '>=' | '<' | '<=', value: number): Uint32Array {
    const bits = this.empty();
    const [from, to] = this.compareRange(op, value);
    this.setRange(bits, from, to);
    return bits;
  }

  /** The words a time period leaf can set (its bitset is 0 outside them), from the periods' position ranges. */
  private timePeriodExtent(leaf: Predicate): Window {
    let lo = this.size;
    let hi = 0;
    const cover = ([from, to]: [number, number]) => {
      if (from < to) {
        lo = Math.min(lo, from);
        hi = Math.max(hi, to);
      }
    };
    if (leaf.kind === 'compare') cover(this.compareRange(leaf.op, leaf.value));
    else if (leaf.kind === 'in') {
      for (const v of leaf.values) {
        const range = this.timePeriodRanges.get(Number(v));
        if (range) cover(range);
      }
    }
    return lo < hi ? { from: Math.floor(lo / WORD), to: Math.ceil(hi / WORD) } : { from: 0, to: 0 };
  }

  /** The bitset of positions matching a predicate. */
  evaluate(predicate: Predicate): Uint32Array {
    const { bits, shared } = this.evaluateShared(predicate);
    return shared ? bits.slice() : bits;
  }

  /**
   * Like evaluate, but a single frequent value may come back as its cached bitset (`shared`: read only), so a
   * query over cached values allocates one bitset, not one per leaf.
   */
  private evaluateShared(predicate: Predicate, window?: Window): { bits: Uint32Array; shared: boolean } {
    switch (predicate.kind) {
      case 'const':
        return { bits: predicate.value ? this.full() : this.empty(), shared: false };
      case 'in': {
        const leaf =
          predicate.values.length === 1
            ? this.singleValueBits(predicate.column, predicate.values[0]!, window)
            : { bits: this.multiValueBits(predicate.column, predicate.values, window), shared: false };
        if (!predicate.negated) return leaf;
        const bits = leaf.shared ? leaf.bits.slice() : leaf.bits;
        this.invert(bits, window);
        return { bits, shared: false };
      }
      case 'compare':
        return { bits: this.compareBits(predicate.op, predicate.value), shared: false };
      case 'not': {
        const { bits, shared } = this.evaluateShared(predicate.item, window);
        const inverted = shared ? bits.slice() : bits;
        this.invert(inverted, window);
        return { bits: inverted, shared: false };
      }
      case 'or': {
        const { from, to } = window ?? { from: 0, to: this.words };
        const first = this.evaluateShared(predicate.items[0]!, window);
        const bits = first.shared ? first.bits.slice() : first.bits;
        for (let i = 1; i < predicate.items.length; i++) {
          const other = this.evaluateShared(predicate.items[i]!, window).bits;
          for (let w = from; w < to; w++) bits[w]! |= other[w]!;
        }
        return { bits, shared: false };
      }
      case 'and':
        return { bits: this.evaluateAnd(predicate.items, window).bits, shared: false };
    }
  }

  /**
   * An AND: its time period leaves first (ranges of positions: cheap), and then the other terms only over the words
   * those leaves set, whatever the window was (a year of a 5,000,000-row version is 50,000 rows: a pass over a column's
   * codes, or a value's postings, reads those and not 5,000,000). Returns the bitset, 0 outside the words
   * [from, to), and those bounds, so that the count and the page read only them too.
   */
  private evaluateAnd(items: readonly Predicate[], window?: Window): { bits: Uint32Array } & Window {
    const ordered = [...items.filter(isTimePeriodLeaf), ...items.filter((item) => !isTimePeriodLeaf(item))];
    let { from, to } = window ?? { from: 0, to: this.words };
    for (const leaf of ordered) {
      if (!isTimePeriodLeaf(leaf)) break;
      const extent = this.timePeriodExtent(leaf);
      from = Math.max(from, extent.from);
      to = Math.min(to, extent.to);
    }
    if (from >= to) return { bits: this.empty(), from: 0, to: 0 };
    const first = this.evaluateShared(ordered[0]!, { from, to });
    let bits = first.bits;
    if (first.shared) {
      // Only the cached bitset's words in the window are copied, not all of it.
      bits = this.empty();
      bits.set(first.bits.subarray(from, to), from);
    } else {
      // A term evaluated under the window may set words outside it (a time period's whole range): cleared.
      if (from > 0) bits.fill(0, 0, from);
      if (to < this.words) bits.fill(0, to);
    }
    for (let i = 1; i < ordered.length; i++) {
      if (!isTimePeriodLeaf(ordered[i]!) && isTimePeriodLeaf(ordered[i - 1]!)) {
        // Narrow the window to the words the time period leaves left set (outside it `bits` is 0 already).
        while (from < to && bits[from] === 0) from++;
        while (to > from && bits[to - 1] === 0) to--;
        if (from === to) return { bits, from: 0, to: 0 };
      }
      const other = this.evaluateShared(ordered[i]!, { from, to }).bits;
      for (let w = from; w < to; w++) bits[w]! &= other[w]!;
    }
    return { bits, from, to };
  }

  /** The bitset of a predicate with the words outside which it is 0 (all of them unless an AND or a period says less). */
  private matching(predicate: Predicate): { bits: Uint32Array } & Window {
    if (predicate.kind === 'and') return this.evaluateAnd(predicate.items);
    const bits = this.evaluate(predicate);
    return isTimePeriodLeaf(predicate)
      ? { bits, ...this.timePeriodExtent(predicate) }
      : { bits, from: 0, to: this.words };
  }

  /**
   * The bitset of one value: a frequent one (a whole time period, a common option or level: more than one row in
   * 32) is kept and shared (read only) while the cache has room, so later queries OR it in word by word.
   */
  private singleValueBits(
    column: string,
    raw: number | string,
    window?: Window,
  ): { bits: Uint32Array; shared: boolean } {
    const key = `${column}:${raw}`;
    const cached = this.bitsets.get(key);
    if (cached) return { bits: cached, shared: true };
    const bytes = 4 * this.words;
    const room = this.bitsetBytes + bytes <= MAX_BITSET_BYTES_PER_INDEX;
    const fewDistinct = column !== 'time_period_id' && this.codesOf(column).distinct <= POSTINGS_MIN_DISTINCT;
    // Under a narrower window, a value is worked out for the window's words only, unless it may be kept: a value of a
    // column of few distinct values (a level, a phase) not known to be rare, while the budget has room, is worked out
    // whole, once, so that later queries under any window AND its words instead of a pass over the window's codes.
    const narrower = window !== undefined && (window.from > 0 || window.to < this.words);
    if (narrower && !(room && fewDistinct && !this.infrequent.has(key) && this.mayCache(bytes)))
      return { bits: this.valueBits(column, [raw], window), shared: false };
    const bits = this.valueBits(column, [raw]);
    if (!room) return { bits, shared: false };
    let count = 0;
    for (let w = 0; w < this.words && count <= this.words; w++) if (bits[w]) count += popcount(bits[w]!);
    if (count <= this.words) {
      if (fewDistinct) this.infrequent.add(key);
      return { bits, shared: false };
    }
    // (Under a window the budget was asked before the pass.)
    if (!narrower && !this.mayCache(bytes)) return { bits, shared: false };
    this.bitsets.set(key, bits);
    this.bitsetBytes += bits.byteLength;
    return { bits, shared: true };
  }

  private invert(bits: Uint32Array, window?: Window): void {
    const { from, to } = window ?? { from: 0, to: this.words };
    for (let w = from; w < to; w++) bits[w] = ~bits[w]! >>> 0;
    if (to === this.words) this.maskTail(bits);
  }

  /** How many positions match a predicate. */
  count(predicate: Predicate): number {
    this.lastUsed = Date.now();
    const { bits, from, to } = this.matching(predicate);
    return this.countOf(bits, from, to);
  }

  /** Count and one page of row ids for a predicate under the given sorts. */
  select(predicate: Predicate, sorts: readonly SortKey[], offset: number, limit: number): Selection {
    this.lastUsed = Date.now();
    const { bits, from, to } = this.matching(predicate);
    if (isDefaultOrder(sorts)) {
      const { total, positions } = this.countAndWalk(bits, from, to, offset, limit);
      return { total, ids: positions.map((p) => this.ids.at(p)), positions };
    }
    const total = this.countOf(bits, from, to);
    if (offset >= total) return { total, ids: [], positions: [] };
    const positions = this.sorted(bits, total, sorts, offset, limit);
    return { total, ids: positions.map((p) => this.ids.at(p)), positions };
  }

  /**
   * Every matching position in result order (a CSV export's rows): 4 bytes per matching row, held while the export
   * is written.
   */
  matchingPositions(predicate: Predicate, sorts: readonly SortKey[]): Int32Array {
    this.lastUsed = Date.now();
    const bits = this.evaluate(predicate);
    const total = this.countOf(bits);
    return isDefaultOrder(sorts)
      ? this.positionsOf(bits, total)
      : Int32Array.from(this.sorted(bits, total, sorts, 0, total));
  }

  /**
   * `matchingPositions` a page of `pageRows` at a time. In the default order the pages are read off the predicate's
   * bitset as they are asked for, so an export of every row holds a page of positions, not all of them; other
   * orders sort them all first.
   */
  *matchingPositionPages(predicate: Predicate, sorts: readonly SortKey[], pageRows: number): Generator<Int32Array> {
    if (!isDefaultOrder(sorts)) {
      const positions = this.matchingPositions(predicate, sorts);
      for (let at = 0; at < positions.length; at += pageRows) yield positions.subarray(at, at + pageRows);
      return;
    }
    this.lastUsed = Date.now();
    yield* this.bitPages(this.evaluate(predicate), pageRows);
  }

  /** The positions of the set bits, ascending, `pageRows` at a time (the last page shorter, none empty). */
  private *bitPages(bits: Uint32Array, pageRows: number): Generator<Int32Array> {
    let page = new Int32Array(pageRows);
    let n = 0;
    for (let w = 0; w < this.words; w++) {
      let word = bits[w]!;
      while (word !== 0) {
        const low = word & -word;
        page[n++] = w * WORD + (31 - Math.clz32(low));
        word = (word ^ low) >>> 0;
        if (n === pageRows) {
          yield page;
          page = new Int32Array(pageRows);
          n = 0;
        }
      }
    }
    if (n > 0) yield page.subarray(0, n);
  }

  /** The set bits in the words [from, to) (the whole bitset by default). */
  private countOf(bits: Uint32Array, from = 0, to = this.words): number {
    let total = 0;
    for (let w = from; w < to; w++) if (bits[w]) total += popcount(bits[w]!);
    return total;
  }

  /** The positions of the `total` set bits, ascending. */
  private positionsOf(bits: Uint32Array, total: number): Int32Array {
    const positions = new Int32Array(total);
    let at = 0;
    for (const page of this.bitPages(bits, 65536)) {
      positions.set(page, at);
      at += page.length;
    }
    return positions;
  }

  /**
   * The number of set bits in the words [from, to), and the positions of set bits number offset … offset+limit-1:
   * one pass over the words (a count and then a walk to the page were two, and the walk went on to the end when
   * fewer rows than a page match).
   */
  private countAndWalk(
    bits: Uint32Array,
    from: number,
    to: number,
    offset: number,
    limit: number,
  ): { total: number; positions: number[] } {
    const positions: number[] = [];
    let total = 0;
    for (let w = from; w < to; w++) {
      let word = bits[w]!;
      if (word === 0) continue;
      const count = popcount(word);
      if (total + count > offset && positions.length < limit) {
        let skip = offset > total ? offset - total : 0;
        while (word !== 0 && positions.length < limit) {
          const low = word & -word;
          word = (word ^ low) >>> 0;
          if (skip > 0) skip--;
          else positions.push(w * WORD + (31 - Math.clz32(low)));
        }
      }
      total += count;
    }
    return { total, positions };
  }

  /**
   * A sort key's number per position: the time period id, else the column's code (codes follow the ids' order, and
   * the levels' order of first appearance is what their integer sort was), or the rank of its value.
   */
  private sortKey(sort: SortKey): (position: number) => number {
    let value: (position: number) => number;
    let codeOf: (raw: number | string) => number;
    if (sort.column === 'time_period_id') {
      value = (p) => this.timePeriodAt(p);
      codeOf = Number;
    } else {
      const column = this.codesOf(sort.column);
      value = (p) => column.codes[p]!;
      codeOf = column.codeOf;
    }
    if (sort.kind !== 'rank') return value;
    const ranks = new Map<number, number>();
    (sort.ranks ?? []).forEach((raw, rank) => ranks.set(codeOf(raw), rank));
    // Values without a rank sort after all others ascending (as NULLs do in PostgreSQL).
    const missing = sort.ranks?.length ?? 0;
    return (p) => ranks.get(value(p)) ?? missing;
  }

  private sorted(bits: Uint32Array, total: number, sorts: readonly SortKey[], offset: number, limit: number): number[] {
    const matching = this.positionsOf(bits, total);
    // Each key computed once per matching row, not once per comparison.
    const keys = sorts.map((sort) => {
      const sign = sort.direction === 'Asc' ? 1 : -1;
      const values = new Float64Array(total);
      if (sort.kind === 'indicator') {
        // As the SQL translation orders them: by number where the text is one (NaN: not one, after every number
        // ascending as NULLs are), then by the text itself (C collation: "1.50" and "1.5" are one number).
        const numberAt = this.indicatorNumber(sort.column);
        for (let i = 0; i < total; i++) values[i] = numberAt(matching[i]!);
        const text = (i: number) => this.indicatorText(sort.column, matching[i]!);
        return { sign, values, text };
      }
      const key = this.sortKey(sort);
      for (let i = 0; i < total; i++) values[i] = key(matching[i]!);
      return { sign, values, text: undefined };
    });
    const ids = new Int32Array(total);
    for (let i = 0; i < total; i++) ids[i] = this.ids.at(matching[i]!);
    const order = Array.from({ length: total }, (_, i) => i);
    order.sort((a, b) => {
      for (const { sign, values, text } of keys) {
        const x = values[a]!;
        const y = values[b]!;
        const d = x === y || (x !== x && y !== y) ? 0 : x !== x ? 1 : y !== y ? -1 : x - y;
        if (d !== 0) return sign * d;
        if (text) {
          const [s, t] = [text(a), text(b)];
          if (s !== t) return sign * (s < t ? -1 : 1);
        }
      }
      return ids[a]! - ids[b]!;
    });
    return order.slice(offset, offset + limit).map((i) => matching[i]!);
  }

  /** An indicator's value at a position as a number, NaN where its text is not one (NUMERIC_TEXT_PATTERN). */
  private indicatorNumber(column: string): (position: number) => number {
    const values = this.parts.indicators.get(column);
    if (!values) throw new Error(`Row index has no indicator column ${column}`);
    return (position) => {
      const k = binarySearch(values.textPositions, position);
      if (k < 0) return unscaled(values.values[position]!, values.scale);
      const text = values.texts[values.textCodes[k]!]!;
      return NUMERIC_TEXT.test(text) ? Number(text) : NaN;
    };
  }
}
