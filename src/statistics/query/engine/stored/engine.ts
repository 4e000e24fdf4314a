/** A version's stored columns as a query engine: the cold path while its row index is not in memory (stored-columns.ts). */
import type { Selection } from '../index/row-index.js';
import type { PageValuesSource } from '../index/engine.js';
import type { PageRows } from '../page-rows.js';
import { boundedPages, type EngineContext, type EnginePage, type PagesOptions, type QueryEngine } from '../query-engine.js';
import type { ResolvedQuery } from '../resolve.js';
import type { StoredColumns } from './stored-columns.js';

export class StoredColumnsEngine implements QueryEngine, PageValuesSource {
  readonly name = 'stored';

  /** `timeoutMs`: the bound of one query's reads (the requests' statement timeout). */
  constructor(
    private readonly context: EngineContext,
    private readonly stored: StoredColumns,
    private readonly timeoutMs: number,
  ) {}

  async count(query: ResolvedQuery): Promise<number> {
    return (await this.stored.query(this.context.db, this.timeoutMs, query.predicate, [], 0, 0, [])).total;
  }

  async page(query: ResolvedQuery, offset: number, limit: number): Promise<EnginePage> {
    const indicators = query.indicators.map((i) => i.column);
    const { total, page } = await this.stored.query(this.context.db, this.timeoutMs, query.predicate, query.sorts, offset, limit, indicators);
    return { total, rows: page };
  }

  pages(query: ResolvedQuery, size: number, options?: PagesOptions): AsyncIterable<PageRows> {
    const indicators = query.indicators.map((i) => i.column);
    return boundedPages(this.stored.matchingPages(this.context.db, this.timeoutMs, query.predicate, query.sorts, indicators, size), options);
  }

  /** A page the in-memory index chose, its values read from here (the index's values still loading). */
  rowsAt(selection: Selection, indicators: readonly string[]): Promise<PageRows> {
    return this.stored.rowsAt(this.context.db, this.timeoutMs, selection.positions, indicators);
  }
}
