import type { Predicate, SortKey } from './resolve.js';

/**
 * An in-process bitmap index over one version's rows, so the query engine answers count and page-of-ids without
 * scanning in PostgreSQL.
 *
 * Rows are held by position in the default result order (time period descending, then row id), one Int32Array
 * per facet column (time period, level, location per level, filter per filter) plus the row ids. A predicate is
 * evaluated to a bitset (one bit per position) by word-wise AND/OR/NOT over per-value bitsets built from postings
 * lists (positions grouped by value, built lazily per column); time period comparisons are contiguous position
 * ranges. The count is a popcount and the default-ordered page a walk to the k-th set bit. Other sorts (not by
 * indicator values, which the index does not hold) sort only the matching positions.
 *
 * Built by `buildRowIndex` and kept by the `RowIndexStore` (row-index-store.ts). One class on purpose: the
 * bitset operations share the typed arrays and their invariants, so splitting it would only spread one data
 * structure over several files.
 */
export interface Selection {
  total: number;
  /** Row ids of the requested page, in result order. */
  ids: number[];
  /** Their positions in the index (for facetRow). */
  positions: number[];
}

/** An indicator column held compactly: most values are numbers whose `String(n)` is the raw text. */
export interface IndicatorColumn {
  numbers: Float64Array;
  /** Raw texts that are not such numbers (symbols, `1.50`, blanks), by position. */
  texts: Map<number, string>;
}

interface Postings {
  /** Distinct values in ascending order. */
  values: Int32Array;
  /** `positions[offsets[k] .. offsets[k+1])` are the positions holding `values[k]`, ascending. */
  offsets: Int32Array;
  positions: Int32Array;
}

const WORD = 32;
/** Cap on the cached value bitsets of one index (beyond it, bitsets are built per query). */
const MAX_BITSET_BYTES_PER_INDEX = 256 * 1024 * 1024;

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

export class RowIndex {
  readonly size: number;
  private readonly words: number;
  private readonly postings = new Map<string, Postings>();
  /** Bitsets of frequent values (one bit per position), built on first use. */
  private readonly bitsets = new Map<string, Uint32Array>();
  private bitsetBytes = 0;
  /** Positions where each time period id starts and ends (exclusive); positions are in time period DESC order. */
  private readonly timePeriodRanges = new Map<number, [number, number]>();
  lastUsed = Date.now();

  constructor(
    readonly ids: Int32Array,
    private readonly columns: Map<string, Int32Array>,
    /** geographic_level codes ↔ the small integers stored in its column. */
    private readonly levelCodes: string[],
    /** Indicator columns: numbers that print back to the exact raw text, other raw texts by position. */
    private readonly indicatorValues: Map<string, IndicatorColumn> = new Map(),
  ) {
    this.size = ids.length;
    this.words = Math.ceil(this.size / WORD);
    const timePeriods = columns.get('time_period_id')!;
    for (let p = 0; p < this.size; p++) {
      const tp = timePeriods[p]!;
      const range = this.timePeriodRanges.get(tp);
      if (range) range[1] = p + 1;
      else this.timePeriodRanges.set(tp, [p, p + 1]);
    }
  }

  /** The arrays the index is made of, for its stored form (row-index-snapshot.ts); read, never changed. */
  parts(): { ids: Int32Array; columns: ReadonlyMap<string, Int32Array>; levelCodes: readonly string[]; indicators: ReadonlyMap<string, IndicatorColumn> } {
    return { ids: this.ids, columns: this.columns, levelCodes: this.levelCodes, indicators: this.indicatorValues };
  }

  /** Approximate bytes held (columns, ids, postings built so far). */
  get bytes(): number {
    let total = this.ids.byteLength;
    for (const column of this.columns.values()) total += column.byteLength;
    for (const column of this.indicatorValues.values()) total += column.numbers.byteLength + column.texts.size * 64;
    for (const p of this.postings.values()) total += p.positions.byteLength + p.offsets.byteLength + p.values.byteLength;
    return total + this.bitsetBytes;
  }

  private column(name: string): Int32Array {
    const column = this.columns.get(name);
    if (!column) throw new Error(`Row index has no column ${name}`);
    return column;
  }

  private encode(column: string, value: number | string): number {
    if (column === 'geographic_level') return this.levelCodes.indexOf(String(value));
    return Number(value);
  }

  /** Positions grouped by value (a counting sort of the column), built on first use. */
  private postingsOf(name: string): Postings {
    const cached = this.postings.get(name);
    if (cached) return cached;
    const column = this.column(name);
    const counts = new Map<number, number>();
    for (let p = 0; p < this.size; p++) counts.set(column[p]!, (counts.get(column[p]!) ?? 0) + 1);
    const values = Int32Array.from([...counts.keys()].sort((a, b) => a - b));
    const offsets = new Int32Array(values.length + 1);
    const slot = new Map<number, number>();
    values.forEach((v, k) => {
      offsets[k + 1] = offsets[k]! + counts.get(v)!;
      slot.set(v, offsets[k]!);
    });
    const positions = new Int32Array(this.size);
    for (let p = 0; p < this.size; p++) {
      const v = column[p]!;
      const at = slot.get(v)!;
      positions[at] = p;
      slot.set(v, at + 1);
    }
    const built = { values, offsets, positions };
    this.postings.set(name, built);
    return built;
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

  private valueBits(column: string, values: Array<number | string>): Uint32Array {
    const bits = this.empty();
    if (column === 'time_period_id') {
      for (const v of values) {
        const range = this.timePeriodRanges.get(Number(v));
        if (range) this.setRange(bits, range[0], range[1]);
      }
      return bits;
    }
    const postings = this.postingsOf(column);
    for (const raw of values) {
      const v = this.encode(column, raw);
      const k = binarySearch(postings.values, v);
      if (k < 0) continue;
      const start = postings.offsets[k]!;
      const end = postings.offsets[k + 1]!;
      // A frequent value is cheaper as a cached bitset OR-ed word by word than as its positions set one by one.
      if (end - start > this.words) {
        const cached = this.valueBitset(column, v, postings, start, end);
        for (let w = 0; w < this.words; w++) bits[w]! |= cached[w]!;
        continue;
      }
      const { positions } = postings;
      for (let i = start; i < end; i++) {
        const p = positions[i]!;
        bits[p >>> 5]! |= 1 << (p & 31);
      }
    }
    return bits;
  }

  private valueBitset(column: string, value: number, postings: Postings, start: number, end: number): Uint32Array {
    const key = `${column}:${value}`;
    const cached = this.bitsets.get(key);
    if (cached) return cached;
    const bits = this.empty();
    for (let i = start; i < end; i++) {
      const p = postings.positions[i]!;
      bits[p >>> 5]! |= 1 << (p & 31);
    }
    if (this.bitsetBytes + bits.byteLength <= MAX_BITSET_BYTES_PER_INDEX) {
      this.bitsets.set(key, bits);
      this.bitsetBytes += bits.byteLength;
    }
    return bits;
  }

  private compareBits(op: '>' | '>=' | '<' | '<=', value: number): Uint32Array {
    // Positions run from the latest time period to the earliest: `> v` is a prefix, `< v` a suffix.
    const bits = this.empty();
    const timePeriods = this.column('time_period_id');
    // The first position past the prefix of time periods `before` the boundary.
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const tp = timePeriods[mid]!;
      const before = op === '>' || op === '<=' ? tp > value : tp >= value;
      if (before) lo = mid + 1;
      else hi = mid;
    }
    if (op === '>' || op === '>=') this.setRange(bits, 0, lo);
    else this.setRange(bits, lo, this.size);
    return bits;
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
  private evaluateShared(predicate: Predicate): { bits: Uint32Array; shared: boolean } {
    switch (predicate.kind) {
      case 'const':
        return { bits: predicate.value ? this.full() : this.empty(), shared: false };
      case 'in': {
        const cached = predicate.values.length === 1 ? this.cachedLeaf(predicate.column, predicate.values[0]!) : undefined;
        if (cached && !predicate.negated) return { bits: cached, shared: true };
        const bits = cached ? cached.slice() : this.valueBits(predicate.column, predicate.values);
        if (predicate.negated) this.invert(bits);
        return { bits, shared: false };
      }
      case 'compare':
        return { bits: this.compareBits(predicate.op, predicate.value), shared: false };
      case 'not': {
        const bits = this.evaluate(predicate.item);
        this.invert(bits);
        return { bits, shared: false };
      }
      case 'and':
      case 'or': {
        const bits = this.evaluate(predicate.items[0]!);
        for (let i = 1; i < predicate.items.length; i++) {
          const other = this.evaluateShared(predicate.items[i]!).bits;
          if (predicate.kind === 'and') for (let w = 0; w < this.words; w++) bits[w]! &= other[w]!;
          else for (let w = 0; w < this.words; w++) bits[w]! |= other[w]!;
        }
        return { bits, shared: false };
      }
    }
  }

  /** The cached bitset of one frequent value (a whole time period, a common option or level), if it has one. */
  private cachedLeaf(column: string, raw: number | string): Uint32Array | undefined {
    if (column === 'time_period_id') {
      const key = `${column}:${raw}`;
      const cached = this.bitsets.get(key);
      if (cached) return cached;
      const range = this.timePeriodRanges.get(Number(raw));
      if (!range || range[1] - range[0] <= this.words) return undefined;
      const bits = this.empty();
      this.setRange(bits, range[0], range[1]);
      if (this.bitsetBytes + bits.byteLength <= MAX_BITSET_BYTES_PER_INDEX) {
        this.bitsets.set(key, bits);
        this.bitsetBytes += bits.byteLength;
      }
      return bits;
    }
    const postings = this.postingsOf(column);
    const v = this.encode(column, raw);
    const k = binarySearch(postings.values, v);
    if (k < 0) return undefined;
    const start = postings.offsets[k]!;
    const end = postings.offsets[k + 1]!;
    return end - start > this.words ? this.valueBitset(column, v, postings, start, end) : undefined;
  }

  private invert(bits: Uint32Array): void {
    for (let w = 0; w < this.words; w++) bits[w] = ~bits[w]! >>> 0;
    this.maskTail(bits);
  }

  /** Count and one page of row ids for a predicate under the given sorts. */
  select(predicate: Predicate, sorts: readonly SortKey[], offset: number, limit: number): Selection {
    this.lastUsed = Date.now();
    const bits = this.evaluate(predicate);
    let total = 0;
    for (let w = 0; w < this.words; w++) if (bits[w]) total += popcount(bits[w]!);
    if (offset >= total) return { total, ids: [], positions: [] };
    const isDefault = sorts.length === 1 && sorts[0]!.column === 'time_period_id' && sorts[0]!.direction === 'Desc';
    const positions = isDefault ? this.walk(bits, offset, limit) : this.sorted(bits, total, sorts, offset, limit);
    return { total, ids: positions.map((p) => this.ids[p]!), positions };
  }

  /** The facet columns of the row at a position, as the row table holds them (so results need only indicators from the database). */
  facetRow(position: number): Record<string, unknown> {
    const row: Record<string, unknown> = { id: this.ids[position] };
    for (const [name, column] of this.columns) {
      row[name] = name === 'geographic_level' ? this.levelCodes[column[position]!] : column[position];
    }
    for (const [name, column] of this.indicatorValues) {
      row[name] = column.texts.get(position) ?? String(column.numbers[position]);
    }
    return row;
  }

  /** A facet column's values by position (geographic_level as indexes into levelCodes). */
  columnValues(name: string): Int32Array | undefined {
    return this.columns.get(name);
  }

  levelCodeAt(position: number): string {
    return this.levelCodes[this.columns.get('geographic_level')![position]!]!;
  }

  /** The raw text of an indicator value (the column must be held: see hasIndicators). */
  indicatorText(column: string, position: number): string {
    const values = this.indicatorValues.get(column)!;
    return values.texts.get(position) ?? String(values.numbers[position]);
  }

  /** Whether the index holds these indicator columns (else their values come from the database). */
  hasIndicators(columns: readonly string[]): boolean {
    return columns.every((c) => this.indicatorValues.has(c));
  }

  /** Positions of the set bits number offset … offset+limit-1, skipping whole words by popcount. */
  private walk(bits: Uint32Array, offset: number, limit: number): number[] {
    const ids: number[] = [];
    let skip = offset;
    for (let w = 0; w < this.words && ids.length < limit; w++) {
      let word = bits[w]!;
      if (word === 0) continue;
      if (skip > 0) {
        const count = popcount(word);
        if (count <= skip) {
          skip -= count;
          continue;
        }
      }
      while (word !== 0 && ids.length < limit) {
        const low = word & -word;
        const bit = 31 - Math.clz32(low);
        word = (word ^ low) >>> 0;
        if (skip > 0) {
          skip--;
          continue;
        }
        ids.push(w * WORD + bit);
      }
    }
    return ids;
  }

  private sorted(bits: Uint32Array, total: number, sorts: readonly SortKey[], offset: number, limit: number): number[] {
    const matching = new Int32Array(total);
    let n = 0;
    for (let w = 0; w < this.words; w++) {
      let word = bits[w]!;
      while (word !== 0) {
        const low = word & -word;
        matching[n++] = w * WORD + (31 - Math.clz32(low));
        word = (word ^ low) >>> 0;
      }
    }
    const keys = sorts.map((sort) => {
      const column = this.column(sort.column);
      const sign = sort.direction === 'Asc' ? 1 : -1;
      if (sort.kind === 'rank') {
        const ranks = new Map<number, number>();
        (sort.ranks ?? []).forEach((value, rank) => ranks.set(this.encode(sort.column, value), rank));
        // Values without a rank sort after all others ascending (as NULLs do in PostgreSQL).
        const missing = ranks.size;
        return { sign, key: (p: number) => ranks.get(column[p]!) ?? missing };
      }
      return { sign, key: (p: number) => column[p]! };
    });
    const ids = this.ids;
    const order = Array.from(matching);
    order.sort((a, b) => {
      for (const { sign, key } of keys) {
        const d = key(a) - key(b);
        if (d !== 0) return sign * d;
      }
      return ids[a]! - ids[b]!;
    });
    return order.slice(offset, offset + limit);
  }
}

function binarySearch(values: Int32Array, value: number): number {
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
