/** A version's stored columns as a query engine: the cold path while its row index is not in memory (stored-columns.ts). */
import { ServiceUnavailableError } from '../../../../errors.js';
import { CorruptEngineFormError } from '../../../storage/engine-form.js';
import type { Selection } from '../index/row-index.js';
import type { PageValuesSource } from '../index/engine.js';
import type { PageRows } from '../page-rows.js';
import {
  boundedPages,
  type EngineContext,
  type EnginePage,
  type PagesOptions,
  type QueryEngine,
} from '../query-engine.js';
import type { ResolvedQuery } from '../resolve.js';
import type { StoredColumns } from './stored-columns.js';

export class StoredColumnsEngine implements QueryEngine, PageValuesSource {
  readonly name = 'stored';

  /**
   * `timeoutMs`: the bound of one query's reads (the requests' statement timeout); `onCorrupt`: told when a slice
   * fails its checksum (the store stops reading this form and rebuilds it).
   */
  constructor(
    private readonly context: EngineContext,
    private readonly stored: StoredColumns,
    private readonly timeoutMs: number,
    private readonly onCorrupt: (error: CorruptEngineFormError) => void = () => {},
  ) {}

  async count(query: ResolvedQuery): Promise<number> {
    return this.checked(
      async () => (await this.stored.query(this.context.db, this.timeoutMs, query.predicate, [], 0, 0, [])).total,
    );
  }

  async page(query: ResolvedQuery, offset: number, limit: number): Promise<EnginePage> {
    const indicators = query.indicators.map((i) => i.column);
    return this.checked(async () => {
      const { total, page } = await this.stored.query(
        this.context.db,
        this.timeoutMs,
        query.predicate,
        query.sorts,
        offset,
        limit,
        indicators,
      );
      return { total, rows: page };
    });
  }

  async *pages(query: ResolvedQuery, size: number, options?: PagesOptions): AsyncGenerator<PageRows> {
    const indicators = query.indicators.map((i) => i.column);
    const pages = boundedPages(
      this.stored.matchingPages(this.context.db, this.timeoutMs, query.predicate, query.sorts, indicators, size),
      options,
    );
    while (true) {
      const step = await this.checked(() => pages.next());
      if (step.done) return;
      yield step.value;
    }
  }

  /** A page the in-memory index chose, its values read from here (the index's values still loading). */
  rowsAt(selection: Selection, indicators: readonly string[]): Promise<PageRows> {
    return this.checked(() => this.stored.rowsAt(this.context.db, this.timeoutMs, selection.positions, indicators));
  }

  /** A read that found the engine form corrupt answers 503 (never the bytes it read) while the form is rebuilt. */
  private async checked<T>(read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      if (!(error instanceof CorruptEngineFormError)) throw error;
      this.onCorrupt(error);
      throw new ServiceUnavailableError(
        'The storage of this data set version failed a check and is being rebuilt; try again shortly.',
        { cause: error },
      );
    }
  }
}
