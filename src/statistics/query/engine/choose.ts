/**
 * The one place that decides which engine answers a query, for a page and for an export alike: the version's row
 * index when it is in memory (and holds the values the query sorts by; for an export, those it shows too), else its
 * stored columns (the cold path), else SQL over its row table. A version with neither an engine form nor a row table
 * (its engine form missing, stale or corrupt) waits for its row index, which the store rebuilds from the version's
 * Parquet copy.
 */
import { ServiceUnavailableError } from '../../../errors.js';
import { RowIndexEngine } from './index/engine.js';
import type { RowIndexStore } from './index/row-index-store.js';
import type { EngineContext, QueryEngine } from './query-engine.js';
import type { ResolvedQuery } from './resolve.js';
import { rowTableValues, SqlEngine } from './sql/engine.js';
import { StoredColumnsEngine } from './stored/engine.js';
import type { StoredColumns } from './stored/stored-columns.js';

/** What a query is answered for: one page, or every matching row (an export reads every value it shows from memory). */
export type EnginePurpose = 'page' | 'export';

/** Chooses the engine of one query; the app's default is `StandardEngineChooser`, tests may register their own. */
export interface QueryEngineChooser {
  choose(context: EngineContext, query: ResolvedQuery, purpose: EnginePurpose): Promise<QueryEngine>;
}

/** How long a query waits for a version's row index being rebuilt before answering 503. */
const REBUILD_WAIT_MS = 20000;

export class StandardEngineChooser implements QueryEngineChooser {
  /** `rowIndexes`: the app's row indexes; without them every query runs on SQL. */
  constructor(private readonly rowIndexes?: RowIndexStore) {}

  async choose(context: EngineContext, query: ResolvedQuery, purpose: EnginePurpose): Promise<QueryEngine> {
    const { rowIndexes } = this;
    if (!rowIndexes) return new SqlEngine(context);
    const { db, meta } = context;
    const sorted = query.sorts.filter((s) => s.kind === 'indicator').map((s) => s.column);
    const shown = query.indicators.map((i) => i.column);
    const index = await rowIndexes.indexFor(db, meta);
    const stored = await rowIndexes.storedColumnsFor(db, meta);
    const storedEngine = stored?.hasIndicators([...sorted, ...shown]) ? this.storedEngine(context, stored) : undefined;
    if (index?.hasIndicators(purpose === 'export' ? [...sorted, ...shown] : sorted)) {
      // A page's values come from the stored columns (or the row table) while the index's values are not in memory.
      return new RowIndexEngine(
        index,
        index.hasIndicators(shown) ? undefined : (storedEngine ?? rowTableValues(context, index)),
      );
    }
    if (storedEngine) return storedEngine;
    if (meta.hasRowTable) return new SqlEngine(context);
    const rebuilt = await rowIndexes.ensureWithin(db, meta, REBUILD_WAIT_MS);
    if (rebuilt?.hasIndicators([...sorted, ...shown])) return new RowIndexEngine(rebuilt);
    // Rebuilt but not kept in memory (over the budget): its engine form is back.
    const restored = await rowIndexes.storedColumnsFor(db, meta);
    if (restored?.hasIndicators([...sorted, ...shown])) return this.storedEngine(context, restored);
    throw new ServiceUnavailableError(`The storage of this data set version is being rebuilt; try again shortly.`);
  }

  private storedEngine(context: EngineContext, stored: StoredColumns): StoredColumnsEngine {
    const rowIndexes = this.rowIndexes!;
    return new StoredColumnsEngine(context, stored, rowIndexes.storedReadTimeout, (error) =>
      rowIndexes.reportCorrupt(context.db, context.meta, error),
    );
  }
}
