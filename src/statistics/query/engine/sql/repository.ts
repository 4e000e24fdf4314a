import { sql, type RawBuilder } from 'kysely';
import type { Executor } from '../../../../db/database.js';
import { NUMERIC_TEXT_PATTERN, type Predicate, type SortKey } from '../resolve.js';
import { isLocationColumn } from '../../../standard/geographic-levels.js';

/**
 * All SQL of the SQL engine: a version's row table `stats_data.<rowsTable>`, where it has one.
 *
 * First the pure translation of a resolved criteria tree into SQL over a version's row table (alias `data`).
 * Column names come from metadata and go through `sql.ref`; every value is a bound parameter.
 */
export function predicateSql(predicate: Predicate): RawBuilder<boolean> {
  switch (predicate.kind) {
    case 'const':
      return predicate.value ? sql<boolean>`TRUE` : sql<boolean>`FALSE`;
    case 'and':
      return sql<boolean>`(${sql.join(predicate.items.map(predicateSql), sql` AND `)})`;
    case 'or':
      return sql<boolean>`(${sql.join(predicate.items.map(predicateSql), sql` OR `)})`;
    case 'not':
      return sql<boolean>`NOT ${predicateSql(predicate.item)}`;
    case 'in': {
      const ref = sql.ref(`data.${predicate.column}`);
      // An expression of the column, not the column: no index matches it, so the plan's other terms lead.
      const column = !predicate.unindexed
        ? ref
        : predicate.column === 'geographic_level'
          ? sql`(${ref} || '')`
          : sql`(${ref} + 0)`;
      if (predicate.values.length === 1) {
        return predicate.negated
          ? sql<boolean>`${column} <> ${predicate.values[0]}`
          : sql<boolean>`${column} = ${predicate.values[0]}`;
      }
      // One array parameter however long the list: `= ANY` / `<> ALL`.
      const array =
        predicate.column === 'geographic_level'
          ? sql`${predicate.values}::text[]`
          : sql`${predicate.values}::integer[]`;
      return predicate.negated ? sql<boolean>`${column} <> ALL(${array})` : sql<boolean>`${column} = ANY(${array})`;
    }
    case 'compare':
      return sql<boolean>`${sql.ref(`data.${predicate.column}`)} ${sql.raw(predicate.op)} ${predicate.value}`;
  }
}

/** Above this many rows in an AND's time periods (estimated), its other terms keep their indexes. */
const TIME_PERIOD_LEADS_MAX_ROWS = 200000;

/**
 * The predicate with the filter and level terms of an AND that names a few time periods marked `unindexed`, when
 * those periods hold few rows (`rowsPerTimePeriod`, the version's rows over its periods, times the periods named).
 * A version's rows are stored in time period order, so a period is one run of the default-order index and of the
 * table; PostgreSQL would rather AND it with the bitmap of each filter's index, and a filter option of 128,000 rows
 * of the 5M-row version took 15–50 ms to read into a bitmap where filtering the period's 50,000 rows took 6 ms
 * (`EXPLAIN ANALYZE`). Location terms keep their indexes (a location's bitmap is small). Pure; the row index ignores
 * the mark.
 */
export function leadWithTimePeriod(predicate: Predicate, rowsPerTimePeriod: number): Predicate {
  if (predicate.kind === 'or')
    return { ...predicate, items: predicate.items.map((item) => leadWithTimePeriod(item, rowsPerTimePeriod)) };
  if (predicate.kind === 'not') return { ...predicate, item: leadWithTimePeriod(predicate.item, rowsPerTimePeriod) };
  if (predicate.kind !== 'and') return predicate;
  const leads = predicate.items.some(
    (item) =>
      item.kind === 'in' &&
      item.column === 'time_period_id' &&
      !item.negated &&
      item.values.length * rowsPerTimePeriod <= TIME_PERIOD_LEADS_MAX_ROWS,
  );
  return {
    ...predicate,
    items: predicate.items.map((item) => (leads ? markUnindexed(item) : leadWithTimePeriod(item, rowsPerTimePeriod))),
  };
}

/** Filter and level terms marked `unindexed`, all through the tree (time period and location terms as they are). */
function markUnindexed(predicate: Predicate): Predicate {
  switch (predicate.kind) {
    case 'in':
      return predicate.column === 'time_period_id' || isLocationColumn(predicate.column)
        ? predicate
        : { ...predicate, unindexed: true };
    case 'and':
    case 'or':
      return { ...predicate, items: predicate.items.map(markUnindexed) };
    case 'not':
      return { ...predicate, item: markUnindexed(predicate.item) };
    default:
      return predicate;
  }
}

/**
 * ORDER BY of the sort keys plus the final tie-breaker `data.id`. Ranked columns order by the position of the
 * value in a bound array of values in label order; indicators order numerically where the value is a number
 * (numbers first), then as text.
 */
export function orderBySql(sorts: readonly SortKey[]): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [];
  for (const sort of sorts) {
    const direction = sql.raw(sort.direction === 'Asc' ? 'ASC' : 'DESC');
    const column = sql.ref(`data.${sort.column}`);
    if (sort.kind === 'rank') {
      const array = sort.column === 'geographic_level' ? sql`${sort.ranks}::text[]` : sql`${sort.ranks}::integer[]`;
      parts.push(sql`array_position(${array}, ${column}) ${direction}`);
    } else if (sort.kind === 'indicator') {
      parts.push(sql`(CASE WHEN ${column} ~ ${NUMERIC_TEXT_PATTERN} THEN ${column}::numeric END) ${direction}`);
      parts.push(sql`${column} COLLATE "C" ${direction}`);
    } else {
      parts.push(sql`${column} ${direction}`);
    }
  }
  parts.push(sql`data.id ASC`);
  return sql.join(parts, sql`, `);
}

export function rowsTableSql(rowsTable: string): RawBuilder<unknown> {
  if (!/^[a-z0-9_]+$/.test(rowsTable)) throw new Error(`Invalid rows table name ${rowsTable}`);
  return sql`${sql.table(`stats_data.${rowsTable}`)} AS data`;
}

/** `SELECT count(*) …` of the predicate. */
export function countSql(rowsTable: string, predicate: Predicate): RawBuilder<{ total: number }> {
  return sql<{
    total: number;
  }>`SELECT count(*)::integer AS total FROM ${rowsTableSql(rowsTable)} WHERE ${predicateSql(predicate)}`;
}

/**
 * One page of rows: the matching ids of the page first (narrow, index-friendly), then only those rows' columns
 * (the reference's "deferred join"). With `matchesFirst`, every matching row is found first (a MATERIALIZED CTE:
 * the predicate's own best plan, a bitmap of its indexes) and only those are sorted; without it PostgreSQL may walk
 * the default-order index and filter as it goes, which is right when many rows match and wrong when few do: one
 * LA of a 5,000,000-row version (8,314 rows, most of them in early years) read 1.3 million index entries in 143 ms
 * that way, and took 11 ms matches first.
 */
export function pageSql(
  rowsTable: string,
  predicate: Predicate,
  sorts: readonly SortKey[],
  columns: readonly string[],
  limit: number,
  offset: number,
  matchesFirst = false,
): RawBuilder<Record<string, unknown>> {
  const orderBy = orderBySql(sorts);
  const selected = sql.join(columns.map((c) => sql.ref(`data.${c}`)));
  const pageIds = matchesFirst
    ? sql`matched AS MATERIALIZED (
  SELECT ${sql.join(['id', ...new Set(sorts.map((s) => s.column))].map((c) => sql.ref(`data.${c}`)))} FROM ${rowsTableSql(rowsTable)} WHERE ${predicateSql(predicate)}
), page_ids AS (
  SELECT data.id FROM matched AS data ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}
)`
    : sql`page_ids AS (
  SELECT data.id FROM ${rowsTableSql(rowsTable)} WHERE ${predicateSql(predicate)} ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${offset}
)`;
  return sql<Record<string, unknown>>`WITH ${pageIds}
SELECT ${selected} FROM ${rowsTableSql(rowsTable)} JOIN page_ids ON page_ids.id = data.id ORDER BY ${orderBy}`;
}

/**
 * Whether a page is found matches first (see pageSql) given how many rows match: sorting the matches costs about
 * their number, walking the ordered index about the rows it passes, `(offset + limit) × rows / matches` when the
 * matches are spread evenly (more when they are not). So matches first up to the square root of `rows × (offset +
 * limit)` matches, and always up to 20,000.
 */
export function pageMatchesFirst(matches: number, rows: number, offset: number, limit: number): boolean {
  return matches <= Math.max(20000, Math.sqrt(rows * (offset + limit)));
}

/** Every matching row in order, for the CSV export (read through a cursor). */
export function allRowsSql(
  rowsTable: string,
  predicate: Predicate,
  sorts: readonly SortKey[],
  columns: readonly string[],
): RawBuilder<Record<string, unknown>> {
  const selected = sql.join(columns.map((c) => sql.ref(`data.${c}`)));
  return sql<
    Record<string, unknown>
  >`SELECT ${selected} FROM ${rowsTableSql(rowsTable)} WHERE ${predicateSql(predicate)} ORDER BY ${orderBySql(sorts)}`;
}

/** Rows by id (the in-memory engine picks the ids; this fetches their columns). */
export function rowsByIdSql(
  rowsTable: string,
  ids: readonly number[],
  columns: readonly string[],
): RawBuilder<Record<string, unknown>> {
  const selected = sql.join(columns.map((c) => sql.ref(`data.${c}`)));
  return sql<
    Record<string, unknown>
  >`SELECT ${selected} FROM ${rowsTableSql(rowsTable)} WHERE data.id = ANY(${ids}::integer[])`;
}

/** The total of the rows matching `predicate`. */
export async function countMatchingRows(db: Executor, rowsTable: string, predicate: Predicate): Promise<number> {
  const { rows } = await countSql(rowsTable, predicate).execute(db);
  return rows[0]?.total ?? 0;
}

/** One page of matching rows (see pageSql). */
export async function findPageRows(
  db: Executor,
  rowsTable: string,
  predicate: Predicate,
  sorts: readonly SortKey[],
  columns: readonly string[],
  limit: number,
  offset: number,
  matchesFirst = false,
): Promise<Record<string, unknown>[]> {
  return (await pageSql(rowsTable, predicate, sorts, columns, limit, offset, matchesFirst).execute(db)).rows;
}

/** The given columns of rows by id, in no particular order. */
export async function findRowsById(
  db: Executor,
  rowsTable: string,
  ids: readonly number[],
  columns: readonly string[],
): Promise<Record<string, unknown>[]> {
  return (await rowsByIdSql(rowsTable, ids, columns).execute(db)).rows;
}

/** Every matching row in result order, `chunkRows` at a time through a cursor (the caller's transaction). */
export function streamMatchingRows(
  trx: Executor,
  rowsTable: string,
  query: { predicate: Predicate; sorts: readonly SortKey[] },
  columns: readonly string[],
  chunkRows: number,
): AsyncIterator<{ rows: Record<string, unknown>[] }> {
  const compiled = allRowsSql(rowsTable, query.predicate, query.sorts, columns).compile(trx);
  return trx.getExecutor().stream(compiled, chunkRows)[Symbol.asyncIterator]();
}

/** `statement_timeout` for the rest of the caller's transaction. */
export async function setTransactionStatementTimeout(trx: Executor, timeoutMs: number): Promise<void> {
  await sql`SELECT set_config('statement_timeout', ${String(timeoutMs)}, true)`.execute(trx);
}

/** The number of rows of a row table. */
export async function countAllRows(db: Executor, rowsTable: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::integer AS n FROM ${rowsTableSql(rowsTable)}`.execute(db);
  return rows[0]?.n ?? 0;
}

/** The given columns of every row, in default result order (newest time period first, then id), through a cursor. */
export function streamRowsInDefaultOrder(
  db: Executor,
  rowsTable: string,
  columns: readonly string[],
  chunkRows: number,
): AsyncIterable<{ rows: Record<string, unknown>[] }> {
  const selected = sql.join(columns.map((c) => sql.ref(`data.${c}`)));
  const query = sql<
    Record<string, unknown>
  >`SELECT ${selected} FROM ${rowsTableSql(rowsTable)} ORDER BY data.time_period_id DESC, data.id ASC`.compile(db);
  return db.getExecutor().stream(query, chunkRows);
}
