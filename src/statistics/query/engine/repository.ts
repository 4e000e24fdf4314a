import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { readBinaryCopy, streamBinaryCopyField } from '../../../db/binary-copy.js';
import type { Executor } from '../../../db/database.js';
import { NUMERIC_TEXT_PATTERN, type Predicate, type SortKey } from './resolve.js';
import type { RowIndexPart } from '../../tables.js';
import { GEOGRAPHIC_LEVEL_LABELS, isLocationColumn, locationColumn } from '../../standard/geographic-levels.js';

/**
 * All SQL of the query engine: the metadata of a version, and its row table `stats_data.<rowsTable>`.
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
      const column = !predicate.unindexed ? ref : predicate.column === 'geographic_level' ? sql`(${ref} || '')` : sql`(${ref} + 0)`;
      if (predicate.values.length === 1) {
        return predicate.negated ? sql<boolean>`${column} <> ${predicate.values[0]}` : sql<boolean>`${column} = ${predicate.values[0]}`;
      }
      // One array parameter however long the list: `= ANY` / `<> ALL`.
      const array = predicate.column === 'geographic_level' ? sql`${predicate.values}::text[]` : sql`${predicate.values}::integer[]`;
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
  if (predicate.kind === 'or') return { ...predicate, items: predicate.items.map((item) => leadWithTimePeriod(item, rowsPerTimePeriod)) };
  if (predicate.kind === 'not') return { ...predicate, item: leadWithTimePeriod(predicate.item, rowsPerTimePeriod) };
  if (predicate.kind !== 'and') return predicate;
  const leads = predicate.items.some(
    (item) => item.kind === 'in' && item.column === 'time_period_id' && !item.negated && item.values.length * rowsPerTimePeriod <= TIME_PERIOD_LEADS_MAX_ROWS,
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
      return predicate.column === 'time_period_id' || isLocationColumn(predicate.column) ? predicate : { ...predicate, unindexed: true };
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
  return sql<{ total: number }>`SELECT count(*)::integer AS total FROM ${rowsTableSql(rowsTable)} WHERE ${predicateSql(predicate)}`;
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
export function allRowsSql(rowsTable: string, predicate: Predicate, sorts: readonly SortKey[], columns: readonly string[]): RawBuilder<Record<string, unknown>> {
  const selected = sql.join(columns.map((c) => sql.ref(`data.${c}`)));
  return sql<Record<string, unknown>>`SELECT ${selected} FROM ${rowsTableSql(rowsTable)} WHERE ${predicateSql(predicate)} ORDER BY ${orderBySql(sorts)}`;
}

/** Rows by id (the in-memory engine picks the ids; this fetches their columns). */
export function rowsByIdSql(rowsTable: string, ids: readonly number[], columns: readonly string[]): RawBuilder<Record<string, unknown>> {
  const selected = sql.join(columns.map((c) => sql.ref(`data.${c}`)));
  return sql<Record<string, unknown>>`SELECT ${selected} FROM ${rowsTableSql(rowsTable)} WHERE data.id = ANY(${ids}::integer[])`;
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
export async function findRowsById(db: Executor, rowsTable: string, ids: readonly number[], columns: readonly string[]): Promise<Record<string, unknown>[]> {
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
  const query = sql<Record<string, unknown>>`SELECT ${selected} FROM ${rowsTableSql(rowsTable)} ORDER BY data.time_period_id DESC, data.id ASC`.compile(db);
  return db.getExecutor().stream(query, chunkRows);
}

/**
 * A version's rows in default result order as one `COPY … TO STDOUT (FORMAT binary)` stream, on a raw client (the
 * importer's, inside its transaction): the fast way to build its row index (src/db/binary-copy.ts reads it).
 */
export function copyRowsInDefaultOrder(client: pg.PoolClient, rowsTable: string, columns: readonly string[]): AsyncIterable<Buffer> {
  if (!/^[a-z0-9_]+$/.test(rowsTable) || !columns.every((c) => /^[a-z0-9_]+$/.test(c))) throw new Error(`Invalid rows table ${rowsTable}`);
  return client.query(copyTo(`COPY (SELECT ${columns.join(', ')} FROM stats_data.${rowsTable} ORDER BY time_period_id DESC, id) TO STDOUT (FORMAT binary)`));
}

/** The metadata rows the engine resolves a query against, and the levels of its location columns. */
export async function findVersionMetaRows(db: Executor, versionId: number, rowsTable: string) {
  const [filters, options, indicators, levels, locations, timePeriods, version] = await Promise.all([
    db.selectFrom('version_filters').select(['id', 'public_id', 'column_name', 'label', 'ordinal']).where('version_id', '=', versionId).execute(),
    db
      .selectFrom('version_filter_options as o')
      .innerJoin('version_filters as f', 'f.id', 'o.filter_id')
      .select(['o.id', 'o.public_id', 'o.label', 'o.filter_id'])
      .where('f.version_id', '=', versionId)
      .execute(),
    db.selectFrom('version_indicators').select(['public_id', 'column_name', 'label', 'ordinal']).where('version_id', '=', versionId).execute(),
    db.selectFrom('version_geographic_levels').select('code').where('version_id', '=', versionId).execute(),
    db
      .selectFrom('version_locations as vl')
      .innerJoin('locations as l', 'l.id', 'vl.location_id')
      .select(['l.id', 'l.level', 'l.label', 'l.public_id', 'l.code', 'l.old_code', 'l.urn', 'l.la_estab', 'l.ukprn'])
      .where('vl.version_id', '=', versionId)
      .execute(),
    db.selectFrom('version_time_periods').select(['id', 'period', 'code']).where('version_id', '=', versionId).orderBy('id').execute(),
    db.selectFrom('data_set_versions').select(['total_results', 'location_levels']).where('id', '=', versionId).executeTakeFirstOrThrow(),
  ]);
  // A version imported before its location levels were kept: its row table's columns say.
  const columns = version.location_levels
    ? undefined
    : (await sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
        WHERE table_schema = 'stats_data' AND table_name = ${rowsTable}`.execute(db)).rows.map((r) => r.column_name);
  return {
    filters, options, indicators, levels, locations, timePeriods,
    locationLevels: version.location_levels ?? Object.keys(GEOGRAPHIC_LEVEL_LABELS).filter((level) => columns!.includes(locationColumn(level))),
    rowCount: version.total_results,
  };
}

/**
 * Gives the rest of the transaction `timeoutMs` for its statements instead of the requests' statement timeout (a
 * literal, so the client-side deadline of src/db/database.ts follows it too).
 */
export async function setLocalStatementTimeout(trx: Executor, timeoutMs: number): Promise<void> {
  await sql`SET LOCAL statement_timeout = ${sql.raw(String(Math.max(1, Math.floor(timeoutMs))))}`.execute(trx);
}

/** The chunk numbers of a stored row index part, in order (none when it has no stored form). */
export async function findRowIndexChunkNumbers(db: Executor, rowsTable: string, part: RowIndexPart): Promise<number[]> {
  const rows = await db
    .selectFrom('version_row_index_chunks')
    .select('chunk')
    .where('rows_table', '=', rowsTable)
    .where('part', '=', part)
    .orderBy('chunk')
    .execute();
  return rows.map((r) => r.chunk);
}

/**
 * Stored chunks' (deflated) bytes, `first` … `first + count - 1` joined in order by PostgreSQL (one field: a 20M-row
 * version's index loaded in 1.6-2.1 s so, 2.4-3.2 s with a row per chunk), read on a raw client through a binary COPY
 * and handed to `write` as they arrive (views of what the connection received; never gathered into one buffer
 * here): as a bytea in a row they would come as hex text, twice their size, which PostgreSQL must write and the
 * client parse on its main thread (the 5,000,000-row version's 24 MB of values: 0.6-1.0 s as hex, 50-70 ms by COPY,
 * docs/performance.md). Fails unless every one of them is stored; resolves with their bytes.
 */
export async function streamRowIndexChunks(
  client: pg.PoolClient, rowsTable: string, part: RowIndexPart, chunks: { first: number; count: number }, write: (bytes: Buffer) => void,
): Promise<number> {
  const first = Math.trunc(chunks.first);
  const last = first + Math.trunc(chunks.count) - 1;
  const where = `rows_table = ${pg.escapeLiteral(rowsTable)} AND part = ${pg.escapeLiteral(part)} AND chunk BETWEEN ${first} AND ${last}`;
  const copy = copyTo(
    `COPY (SELECT string_agg(bytes, ''::bytea ORDER BY chunk) FROM version_row_index_chunks WHERE ${where} HAVING count(*) = ${last - first + 1}) TO STDOUT (FORMAT binary)`,
  );
  const length = await streamBinaryCopyField(client.query(copy), write);
  if (length === undefined) throw new Error(`Not all of the stored row index chunks ${first}-${last} of ${part} for ${rowsTable} are stored`);
  return length;
}

/**
 * Some stored chunks' (deflated) bytes, keyed `part:chunk`, read through one binary COPY (bytes as they are stored).
 * Chunks not stored are missing from the map.
 */
export async function readRowIndexChunks(client: pg.PoolClient, rowsTable: string, wanted: ReadonlyMap<RowIndexPart, Iterable<number>>): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  const terms: string[] = [];
  for (const [part, chunks] of wanted) {
    const list = [...chunks].map((c) => Math.trunc(c));
    if (list.length > 0) terms.push(`(part = ${pg.escapeLiteral(part)} AND chunk IN (${list.join(',')}))`);
  }
  if (terms.length === 0) return found;
  const copy = copyTo(
    `COPY (SELECT part, chunk, bytes FROM version_row_index_chunks WHERE rows_table = ${pg.escapeLiteral(rowsTable)} AND (${terms.join(' OR ')})) TO STDOUT (FORMAT binary)`,
  );
  await readBinaryCopy(client.query(copy), 3, (buffer, offsets, lengths) => {
    const part = buffer.toString('latin1', offsets[0]!, offsets[0]! + lengths[0]!);
    // A copy: the tuple's buffer is the connection's and is reused.
    found.set(`${part}:${buffer.readInt32BE(offsets[1]!)}`, Buffer.from(buffer.subarray(offsets[2]!, offsets[2]! + lengths[2]!)));
  });
  return found;
}

/** Replaces the stored row index of `rowsTable` with these pieces of its parts. */
export async function replaceRowIndexChunks(db: Executor, rowsTable: string, versionId: number, parts: ReadonlyArray<{ part: RowIndexPart; pieces: readonly Buffer[] }>): Promise<void> {
  await db.deleteFrom('version_row_index_chunks').where('rows_table', '=', rowsTable).execute();
  // Many chunks to a statement (a 5M-row version has about 3,000: one statement each was 1.3 s of its import), up to
  // about 16 MB of them.
  let batch: Array<{ rows_table: string; part: RowIndexPart; chunk: number; version_id: number; bytes: Buffer }> = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length > 0) await db.insertInto('version_row_index_chunks').values(batch).execute();
    batch = [];
    batchBytes = 0;
  };
  for (const { part, pieces } of parts) {
    for (const [chunk, bytes] of pieces.entries()) {
      if (batch.length >= 500 || batchBytes + bytes.length > 16 * 1024 * 1024) await flush();
      batch.push({ rows_table: rowsTable, part, chunk, version_id: versionId, bytes });
      batchBytes += bytes.length;
    }
  }
  await flush();
}

/** Versions with rows but no stored row index (imported before the stored form existed). */
export async function findVersionsWithoutStoredRowIndex(db: Executor): Promise<Array<{ id: number; rowsTable: string }>> {
  const rows = await db
    .selectFrom('data_set_versions as v')
    .select(['v.id', 'v.rows_table'])
    .where('v.rows_table', 'is not', null)
    .where(({ not, exists, selectFrom }) => not(exists(selectFrom('version_row_index_chunks as c').select('c.chunk').whereRef('c.rows_table', '=', 'v.rows_table'))))
    .orderBy('v.id')
    .execute();
  return rows.map((r) => ({ id: r.id, rowsTable: r.rows_table! }));
}

/** Notes that a version's row index was used now. */
export async function recordRowIndexUse(db: Executor, rowsTable: string, versionId: number): Promise<void> {
  await db
    .insertInto('version_row_index_uses')
    .values({ rows_table: rowsTable, version_id: versionId, used_at: sql<Date>`now()` })
    .onConflict((oc) => oc.column('rows_table').doUpdateSet({ used_at: sql<Date>`now()` }))
    .execute();
}

/**
 * The versions a starting instance loads first: those queried most recently (by any instance) or published most
 * recently, whichever was later, most recent first — a version just published is the one about to be queried.
 * Only tables that are still the version's; a withdrawn version only by its queries.
 */
export async function findVersionsToWarm(db: Executor, limit: number): Promise<Array<{ id: number; rowsTable: string }>> {
  const rows = await db
    .selectFrom('data_set_versions as v')
    .leftJoin('version_row_index_uses as u', (join) => join.onRef('u.version_id', '=', 'v.id').onRef('u.rows_table', '=', 'v.rows_table'))
    .select(['v.id', 'v.rows_table'])
    .where('v.rows_table', 'is not', null)
    .where((eb) => eb.or([eb('u.used_at', 'is not', null), eb('v.status', '=', 'Published')]))
    .orderBy(sql`greatest(u.used_at, CASE WHEN v.status = 'Published' THEN v.published_at END)`, (ob) => ob.desc().nullsLast())
    .orderBy('v.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, rowsTable: r.rows_table! }));
}
