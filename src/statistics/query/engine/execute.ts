import type { Executor } from '../../../db/database.js';
import { resultColumns } from './results.js';
import { countMatchingRows, findPageRows, findRowsById, leadWithTimePeriod, pageMatchesFirst } from './repository.js';
import type { Predicate, ResolvedQuery } from './resolve.js';
import { isLocationColumn } from '../../standard/geographic-levels.js';
import type { VersionMeta } from './version-meta-cache.js';
import type { RowIndex } from './row-index.js';
import type { RowIndexStore } from './row-index-store.js';
import type { StoredColumns } from './stored-columns.js';
import { databasePageRows, indexedPageRows, writeResponseJson } from './json-output.js';

export interface QueryEngineOptions {
  /** The app's in-memory row indexes for count and page ids; without it every query runs on SQL. */
  rowIndexes?: RowIndexStore;
}

/** A page of query results as the response's JSON (UTF-8 bytes), and which engine chose its rows. */
export interface QueryPage {
  json: Buffer;
  /** The in-memory row index, the version's stored columns read for this query (the cold path), or SQL alone. */
  engine: 'index' | 'stored' | 'sql';
}

/** Which engine answers a query (a page or a CSV export): see `runQuery`. */
export type QueryEngine = { kind: 'index'; index: RowIndex } | { kind: 'stored'; stored: StoredColumns; timeoutMs: number } | { kind: 'sql' };

/**
 * The version's row index when it is in memory (with the values of the indicators the query sorts by; with
 * `valuesFromIndex`, a CSV export's, of those it shows too: a page reads the values it lacks from the stored
 * columns), else its stored columns, else SQL (a version without a stored form).
 */
export async function chooseEngine(
  db: Executor, meta: VersionMeta, query: ResolvedQuery, rowIndexes: RowIndexStore | undefined, options: { valuesFromIndex?: boolean } = {},
): Promise<QueryEngine> {
  if (!rowIndexes) return { kind: 'sql' };
  const sortedIndicators = query.sorts.filter((s) => s.kind === 'indicator').map((s) => s.column);
  const needed = options.valuesFromIndex ? [...sortedIndicators, ...query.indicators.map((i) => i.column)] : sortedIndicators;
  const index = await rowIndexes.indexFor(db, meta);
  if (index?.hasIndicators(needed)) return { kind: 'index', index };
  const stored = await rowIndexes.storedColumnsFor(db, meta);
  if (stored?.hasIndicators([...sortedIndicators, ...query.indicators.map((i) => i.column)])) return { kind: 'stored', stored, timeoutMs: rowIndexes.storedReadTimeout };
  return { kind: 'sql' };
}

/**
 * Runs a resolved query: the total and the page's row ids from the version's in-memory row index when it is
 * loaded (and holds the values of the indicators it sorts by), else from its stored columns (the cold path,
 * stored-columns.ts), else from SQL; with the index, the page's values from the stored columns when the index does
 * not hold them (yet). Either way the JSON is written from the rows as they are, with no result objects in between
 * (json-output.ts).
 */
export async function runQuery(db: Executor, meta: VersionMeta, query: ResolvedQuery, options: QueryEngineOptions = {}): Promise<QueryPage> {
  const columns = resultColumns(meta, query);
  const offset = (query.page - 1) * query.pageSize;
  let total: number;
  let rows: Record<string, unknown>[];

  const engine = await chooseEngine(db, meta, query, options.rowIndexes);
  if (engine.kind === 'stored') {
    const result = await engine.stored.query(db, engine.timeoutMs, query.predicate, query.sorts, offset, query.pageSize, query.indicators.map((i) => i.column));
    return { json: writeResponseJson(meta, query, result.page, result.total), engine: 'stored' };
  }
  const index = engine.kind === 'index' ? engine.index : undefined;
  if (index) {
    const selection = index.select(query.predicate, query.sorts, offset, query.pageSize);
    total = selection.total;
    if (index.hasIndicators(query.indicators.map((i) => i.column))) {
      return { json: writeResponseJson(meta, query, indexedPageRows(index, selection.positions), total), engine: 'index' };
    }
    // The values are not in memory (yet, or not at all): the page's rows from the stored columns (the same
    // positions), or for a version without them from its row table by id.
    const stored = await options.rowIndexes?.storedColumnsFor(db, meta);
    if (stored) {
      const page = await stored.rowsAt(db, options.rowIndexes!.storedReadTimeout, selection.positions, query.indicators.map((i) => i.column));
      return { json: writeResponseJson(meta, query, page, total), engine: 'index' };
    }
    rows = [];
    if (selection.ids.length > 0) {
      // The index holds every facet column, and the indicator values unless it was built without them.
      const indicatorColumns = query.indicators.map((i) => i.column);
      const inMemory = index.hasIndicators(indicatorColumns);
      const fetched =
        indicatorColumns.length > 0 && !inMemory ? await findRowsById(db, meta.rowsTable, selection.ids, ['id', ...indicatorColumns]) : [];
      const byId = new Map(fetched.map((r) => [Number(r.id), r]));
      rows = selection.positions.map((position, i) => {
        const row = index.facetRow(position);
        const values = byId.get(selection.ids[i]!);
        if (values) for (const column of indicatorColumns) row[column] = values[column];
        return row;
      });
    }
  } else {
    // The version's rows per time period: unknown (0 rows counted) is taken as many.
    const predicate = leadWithTimePeriod(query.predicate, meta.rowCount > 0 ? meta.rowCount / Math.max(1, meta.timePeriods.length) : Infinity);
    if (predicate.kind === 'const' && predicate.value && meta.rowCount > 0) {
      // No criteria: the version's row count is known (counting 5M rows took longer than DuckDB's whole query).
      total = meta.rowCount;
      rows = await findPageRows(db, meta.rowsTable, predicate, query.sorts, columns, query.pageSize, offset);
    } else if (narrowsToLocations(predicate)) {
      // A location's rows are seldom spread evenly over the years: how many match decides how the page is found.
      total = await countMatchingRows(db, meta.rowsTable, predicate);
      const matchesFirst = pageMatchesFirst(total, Math.max(meta.rowCount, total), offset, query.pageSize);
      rows = offset >= total ? [] : await findPageRows(db, meta.rowsTable, predicate, query.sorts, columns, query.pageSize, offset, matchesFirst);
    } else {
      [total, rows] = await Promise.all([
        countMatchingRows(db, meta.rowsTable, predicate),
        findPageRows(db, meta.rowsTable, predicate, query.sorts, columns, query.pageSize, offset),
      ]);
    }
  }

  return { json: writeResponseJson(meta, query, databasePageRows(rows), total), engine: index ? 'index' : 'sql' };
}

/** Whether every matching row is at one of some named locations (the predicate, or one of its AND terms, is one). */
function narrowsToLocations(predicate: Predicate): boolean {
  if (predicate.kind === 'in') return !predicate.negated && isLocationColumn(predicate.column);
  return predicate.kind === 'and' && predicate.items.some(narrowsToLocations);
}
