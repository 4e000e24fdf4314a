/**
 * SQL over a version's row table as a query engine: the reference the other engines are tested against, and what
 * answers a version that has a row table but no engine form (repository.ts holds the translation and its statements).
 */
import { withCursorAbort } from '../../../../db/database.js';
import { isLocationColumn } from '../../../standard/geographic-levels.js';
import type { RowIndex, Selection } from '../index/row-index.js';
import type { PageValuesSource } from '../index/engine.js';
import type { PageRows } from '../page-rows.js';
import { databasePageRows } from '../page-rows.js';
import type { EngineContext, EnginePage, PagesOptions, QueryEngine } from '../query-engine.js';
import type { Predicate, ResolvedQuery } from '../resolve.js';
import { resultColumns } from '../results.js';
import {
  countMatchingRows,
  findPageRows,
  findRowsById,
  leadWithTimePeriod,
  pageMatchesFirst,
  setTransactionStatementTimeout,
  streamMatchingRows,
} from './repository.js';

/** Rows fetched per cursor round trip of an export: bounds memory whatever the number of matching rows. */
const CURSOR_ROWS = 2000;

/** Whether every matching row is at one of some named locations (the predicate, or one of its AND terms, is one). */
function narrowsToLocations(predicate: Predicate): boolean {
  if (predicate.kind === 'in') return !predicate.negated && isLocationColumn(predicate.column);
  return predicate.kind === 'and' && predicate.items.some(narrowsToLocations);
}

export class SqlEngine implements QueryEngine {
  readonly name = 'sql';

  constructor(private readonly context: EngineContext) {}

  /** The predicate as the translation runs it (see leadWithTimePeriod); the version's rows per period unknown: many. */
  private predicateOf(query: ResolvedQuery): Predicate {
    const { meta } = this.context;
    return leadWithTimePeriod(
      query.predicate,
      meta.rowCount > 0 ? meta.rowCount / Math.max(1, meta.timePeriods.length) : Infinity,
    );
  }

  async count(query: ResolvedQuery): Promise<number> {
    const { db, meta } = this.context;
    const predicate = this.predicateOf(query);
    // No criteria: the version's row count is known (counting 5M rows took longer than DuckDB's whole query).
    if (predicate.kind === 'const' && predicate.value && meta.rowCount > 0) return meta.rowCount;
    return countMatchingRows(db, meta.rowsTable, predicate);
  }

  async page(query: ResolvedQuery, offset: number, limit: number): Promise<EnginePage> {
    const { db, meta } = this.context;
    const predicate = this.predicateOf(query);
    const columns = resultColumns(meta, query);
    let total: number;
    let rows: Record<string, unknown>[];
    if (predicate.kind === 'const' && predicate.value && meta.rowCount > 0) {
      total = meta.rowCount;
      rows = await findPageRows(db, meta.rowsTable, predicate, query.sorts, columns, limit, offset);
    } else if (narrowsToLocations(predicate)) {
      // A location's rows are seldom spread evenly over the years: how many match decides how the page is found.
      total = await countMatchingRows(db, meta.rowsTable, predicate);
      const matchesFirst = pageMatchesFirst(total, Math.max(meta.rowCount, total), offset, limit);
      rows =
        offset >= total
          ? []
          : await findPageRows(db, meta.rowsTable, predicate, query.sorts, columns, limit, offset, matchesFirst);
    } else {
      [total, rows] = await Promise.all([
        countMatchingRows(db, meta.rowsTable, predicate),
        findPageRows(db, meta.rowsTable, predicate, query.sorts, columns, limit, offset),
      ]);
    }
    return { total, rows: databasePageRows(rows) };
  }

  /**
   * Every matching row through a database cursor in a read-only transaction of its own, whose `statement_timeout` is
   * the export's bound (a cursor is one statement for as long as the client reads it).
   */
  async *pages(query: ResolvedQuery, size: number, options: PagesOptions = {}): AsyncGenerator<PageRows> {
    const { db, meta } = this.context;
    const trx = await db.startTransaction().setAccessMode('read only').execute();
    let finished = false;
    try {
      if (options.timeoutMs) await setTransactionStatementTimeout(trx, options.timeoutMs);
      const chunks = streamMatchingRows(
        trx,
        meta.rowsTable,
        query,
        resultColumns(meta, query),
        Math.max(1, Math.min(size, CURSOR_ROWS)),
      );
      const signal = options.signal ?? new AbortController().signal;
      try {
        while (true) {
          const step = await withCursorAbort(signal, () => chunks.next());
          if (step.done) break;
          yield databasePageRows(step.value.rows);
        }
      } finally {
        await chunks.return?.();
      }
      await trx.commit().execute();
      finished = true;
    } finally {
      // Abandoned (client gone, stalled, failed): the cursor is closed by now; end the transaction, give the connection back.
      if (!finished)
        await trx
          .rollback()
          .execute()
          .catch(() => {});
    }
  }
}

/**
 * A page the in-memory index chose, its values read from the row table by id: for a version whose index holds no
 * values and that has no stored columns to read them from.
 */
export function rowTableValues(context: EngineContext, index: RowIndex): PageValuesSource {
  return {
    async rowsAt(selection: Selection, indicators: readonly string[]): Promise<PageRows> {
      const fetched =
        indicators.length > 0
          ? await findRowsById(context.db, context.meta.rowsTable, selection.ids, ['id', ...indicators])
          : [];
      const byId = new Map(fetched.map((r) => [Number(r.id), r]));
      return databasePageRows(
        selection.positions.map((position, i) => {
          const row = index.facetRow(position);
          const values = byId.get(selection.ids[i]!);
          if (values) for (const column of indicators) row[column] = values[column];
          return row;
        }),
      );
    },
  };
}
