/** The in-memory row index as a query engine (row-index.ts holds the version's columns; row-index-store.ts keeps them). */
import type { PageRows } from '../page-rows.js';
import { boundedPages, type EnginePage, type PagesOptions, type QueryEngine } from '../query-engine.js';
import type { ResolvedQuery } from '../resolve.js';
import type { RowIndex, Selection } from './row-index.js';

/** Rows a page needs at once from memory; an export walks the matching positions this many at a time. */
const EXPORT_PAGE_ROWS = 2000;

/** Where the index engine reads the indicator values of a page when it does not hold them (yet). */
export interface PageValuesSource {
  rowsAt(selection: Selection, indicators: readonly string[]): Promise<PageRows>;
}

/** Per facet column's dictionary and map by id, the map's values by dictionary code (what `byIdOf` reads). */
const byCodeCache = new WeakMap<Int32Array, WeakMap<ReadonlyMap<number, unknown>, unknown[]>>();

function byCodeOf<T>(dictionary: Int32Array, byId: ReadonlyMap<number, T>): Array<T | undefined> {
  let maps = byCodeCache.get(dictionary);
  if (!maps) byCodeCache.set(dictionary, (maps = new WeakMap()));
  let byCode = maps.get(byId) as Array<T | undefined> | undefined;
  if (!byCode) maps.set(byId, (byCode = Array.from(dictionary, (id) => byId.get(id))));
  return byCode;
}

/** The rows at `positions` of the row index. */
export function indexedPageRows(index: RowIndex, positions: ArrayLike<number>): PageRows {
  return {
    count: positions.length,
    timePeriodId: (r) => index.timePeriodAt(positions[r]!),
    levelCode: (r) => index.levelCodeAt(positions[r]!),
    idsOf(column) {
      const { dictionary, codes } = index.facet(column);
      return (r) => dictionary[codes[positions[r]!]!]!;
    },
    byIdOf(column, byId) {
      const { dictionary, codes } = index.facet(column);
      const byCode = byCodeOf(dictionary, byId);
      return (r) => byCode[codes[positions[r]!]!];
    },
    textsOf: (column) => (r) => index.indicatorText(column, positions[r]!),
    numbersOf(column) {
      const numberAt = index.indicatorNumbers(column);
      return (r) => numberAt(positions[r]!);
    },
    jsonLiteralsOf(column) {
      const literals = index.indicatorJsonLiterals(column);
      return { maxBytes: literals.maxBytes, put: (sink, r) => literals.put(sink, positions[r]!) };
    },
  };
}

export class RowIndexEngine implements QueryEngine {
  readonly name = 'index';

  /** `values`: where a page's values come from while the index holds only the facets (its values part loading). */
  constructor(
    private readonly index: RowIndex,
    private readonly values?: PageValuesSource,
  ) {}

  async count(query: ResolvedQuery): Promise<number> {
    return this.index.count(query.predicate);
  }

  async page(query: ResolvedQuery, offset: number, limit: number): Promise<EnginePage> {
    const selection = this.index.select(query.predicate, query.sorts, offset, limit);
    const indicators = query.indicators.map((i) => i.column);
    if (this.index.hasIndicators(indicators) || !this.values || selection.positions.length === 0) {
      return { total: selection.total, rows: indexedPageRows(this.index, selection.positions) };
    }
    return { total: selection.total, rows: await this.values.rowsAt(selection, indicators) };
  }

  pages(query: ResolvedQuery, size: number, options?: PagesOptions): AsyncIterable<PageRows> {
    const index = this.index;
    const step = Math.max(1, Math.min(size, EXPORT_PAGE_ROWS));
    const positions = index.matchingPositionPages(query.predicate, query.sorts, step);
    function* walk() {
      for (const page of positions) yield indexedPageRows(index, page);
    }
    return boundedPages(walk(), options);
  }
}
