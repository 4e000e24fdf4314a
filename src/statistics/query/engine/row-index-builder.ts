import { RowIds, RowIndex, type Codes, type FacetColumn, type IndicatorColumn, type RowIndexParts } from './row-index.js';

/** The narrowest codes array for a dictionary of `distinct` values. */
function codesFor(distinct: number, size: number): Codes {
  return distinct <= 256 ? new Uint8Array(size) : distinct <= 65536 ? new Uint16Array(size) : new Int32Array(size);
}

/** A column of ids as dictionary codes (the dictionary ascending). */
function dictionaryEncode(values: Int32Array): FacetColumn {
  const seen = new Set<number>();
  for (let p = 0; p < values.length; p++) seen.add(values[p]!);
  const dictionary = Int32Array.from([...seen].sort((a, b) => a - b));
  const codeOf = new Map<number, number>();
  dictionary.forEach((id, code) => codeOf.set(id, code));
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

/**
 * Collects one indicator column's raw texts by position: a text that is the printing of its number (`String(n)`)
 * is kept as the number, any other text (a symbol such as `x`, `1.50`, a blank) as an exception by position.
 */
class IndicatorBuilder {
  private readonly numbers: Float64Array;
  private readonly textPositions: number[] = [];
  private readonly textCodes: number[] = [];
  private readonly texts: string[] = [];
  private readonly textCode = new Map<string, number>();
  /** Most decimals of a number's text, -1 once a text needs the exponent form (then kept as Float64). */
  private decimals = 0;
  private maxAbs = 0;

  constructor(size: number) {
    this.numbers = new Float64Array(size);
  }

  add(position: number, raw: string): void {
    const number = canonicalInteger(raw) ?? this.printedNumber(raw);
    if (number !== undefined) {
      this.numbers[position] = number;
      const abs = Math.abs(number);
      if (abs > this.maxAbs) this.maxAbs = abs;
      return;
    }
    let code = this.textCode.get(raw);
    if (code === undefined) {
      code = this.texts.push(raw) - 1;
      this.textCode.set(raw, code);
    }
    this.textPositions.push(position);
    this.textCodes.push(code);
  }

  /** The number `raw` is the printing of (`String(n) === raw`), noting its decimals; else undefined. */
  private printedNumber(raw: string): number | undefined {
    if (raw === '') return undefined;
    const number = Number(raw);
    if (String(number) !== raw) return undefined;
    if (this.decimals >= 0 && !Number.isInteger(number)) {
      if (raw.includes('e')) this.decimals = -1;
      else this.decimals = Math.max(this.decimals, raw.length - raw.indexOf('.') - 1);
    }
    return number;
  }

  /**
   * The column, its numbers as Int32 `m` with `m / 10^scale` the number when every number fits (then
   * `String(m / 10^scale)` is its text again: the division gives the double nearest the decimal, as parsing did).
   */
  finish(): IndicatorColumn {
    const scale = this.decimals;
    const exceptions = { textPositions: Int32Array.from(this.textPositions), textCodes: Uint32Array.from(this.textCodes), texts: this.texts };
    if (scale < 0 || scale > 9 || this.maxAbs * 10 ** scale >= 2 ** 31) return { values: this.numbers, scale: 0, ...exceptions };
    const values = new Int32Array(this.numbers.length);
    const factor = 10 ** scale;
    for (let p = 0; p < values.length; p++) values[p] = Math.round(this.numbers[p]! * factor);
    return { values, scale, ...exceptions };
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
    this.indicators = indicatorColumns.map(() => new IndicatorBuilder(size));
  }

  get rows(): number {
    return this.position;
  }

  /** The next row: its id, time period id (never above the previous row's), level code, facet ids and indicator texts in the builder's column order. */
  add(id: number, timePeriodId: number, levelCode: string, facets: ArrayLike<number>, indicators: ArrayLike<string>): void {
    const p = this.position++;
    if (p >= this.size) throw new Error('More rows than the row index was made for');
    this.ids[p] = id;
    const lastPeriod = this.timePeriodIds.at(-1);
    if (lastPeriod !== timePeriodId) {
      if (lastPeriod !== undefined && timePeriodId > lastPeriod) throw new Error('Rows must come in time period descending order');
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
    if (this.position !== this.size) throw new Error(`The row index was made for ${this.size} rows but got ${this.position}`);
    const timePeriodStarts = Int32Array.from([...this.timePeriodStarts, this.size]);
    const facets = new Map<string, FacetColumn>();
    this.facetColumns.forEach((column, c) => {
      facets.set(column, dictionaryEncode(this.facetValues[c]!));
      this.facetValues[c] = new Int32Array(0);
    });
    const indicators = new Map<string, IndicatorColumn>();
    this.indicatorColumns.forEach((column, c) => {
      indicators.set(column, this.indicators[c]!.finish());
      this.indicators[c] = new IndicatorBuilder(0);
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
