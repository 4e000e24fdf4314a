/**
 * A fourth query engine, for tests: every row of the version in memory as an object, each predicate evaluated row by
 * row and the result sorted with Array.prototype.sort — what a newcomer's first engine would be. Registered through
 * the QueryEngine interface (a chooser given to buildApp), it must answer as the other three do.
 */
import { sql } from 'kysely';
import type { Db } from '../../../../src/db/database.js';
import {
  NUMERIC_TEXT_PATTERN,
  rowIndexColumns,
  type EnginePage,
  type PageRows,
  type Predicate,
  type QueryEngine,
  type ResolvedQuery,
  type SortKey,
  type VersionMeta,
} from '../../../../src/statistics/query/engine/index.js';
import { databasePageRows } from '../../../../src/statistics/query/engine/page-rows.js';

type Row = Record<string, unknown>;

/** Every row of a version's row table, as objects. */
export async function loadAllRows(db: Db, meta: VersionMeta): Promise<Row[]> {
  const columns = rowIndexColumns(meta, true).read;
  const { rows } =
    await sql<Row>`SELECT ${sql.join(columns.map((c) => sql.ref(c)))} FROM ${sql.table(`stats_data.${meta.rowsTable}`)}`.execute(
      db,
    );
  return rows;
}

function matches(predicate: Predicate, row: Row): boolean {
  switch (predicate.kind) {
    case 'const':
      return predicate.value;
    case 'and':
      return predicate.items.every((item) => matches(item, row));
    case 'or':
      return predicate.items.some((item) => matches(item, row));
    case 'not':
      return !matches(predicate.item, row);
    case 'in': {
      const value = row[predicate.column];
      const found = predicate.values.some((v) => v === value || Number(v) === Number(value));
      return predicate.negated ? !found : found;
    }
    case 'compare': {
      const value = Number(row[predicate.column]);
      if (predicate.op === '>') return value > predicate.value;
      if (predicate.op === '>=') return value >= predicate.value;
      if (predicate.op === '<') return value < predicate.value;
      return value <= predicate.value;
    }
  }
}

const NUMERIC = new RegExp(NUMERIC_TEXT_PATTERN);

/** PostgreSQL's order: NULLs last ascending, first descending. */
function compareNullable(a: number | string | undefined, b: number | string | undefined, descending: boolean): number {
  if (a === undefined || b === undefined) {
    if (a === b) return 0;
    return (a === undefined ? 1 : -1) * (descending ? -1 : 1);
  }
  const order = a < b ? -1 : a > b ? 1 : 0;
  return descending ? -order : order;
}

function compareRows(sorts: readonly SortKey[], a: Row, b: Row): number {
  for (const sort of sorts) {
    const descending = sort.direction === 'Desc';
    const x = a[sort.column];
    const y = b[sort.column];
    let order: number;
    if (sort.kind === 'rank') {
      const rank = (v: unknown) => {
        const at = sort.ranks!.findIndex((r) => r === v || Number(r) === Number(v));
        return at < 0 ? undefined : at;
      };
      order = compareNullable(rank(x), rank(y), descending);
    } else if (sort.kind === 'indicator') {
      const number = (v: unknown) => (NUMERIC.test(String(v)) ? Number(v) : undefined);
      order = compareNullable(number(x), number(y), descending);
      // Then the text as bytes (COLLATE "C").
      if (order === 0)
        order = compareNullable(
          Buffer.from(String(x)).toString('latin1'),
          Buffer.from(String(y)).toString('latin1'),
          descending,
        );
    } else {
      order = compareNullable(Number(x), Number(y), descending);
    }
    if (order !== 0) return order;
  }
  return Number(a.id) - Number(b.id);
}

export class NaiveEngine implements QueryEngine {
  readonly name = 'naive';

  constructor(private readonly rows: readonly Row[]) {}

  private matching(query: ResolvedQuery): Row[] {
    return this.rows.filter((row) => matches(query.predicate, row)).sort((a, b) => compareRows(query.sorts, a, b));
  }

  async count(query: ResolvedQuery): Promise<number> {
    return this.rows.filter((row) => matches(query.predicate, row)).length;
  }

  async page(query: ResolvedQuery, offset: number, limit: number): Promise<EnginePage> {
    const all = this.matching(query);
    return { total: all.length, rows: databasePageRows(all.slice(offset, offset + limit)) };
  }

  async *pages(query: ResolvedQuery, size: number): AsyncGenerator<PageRows> {
    const all = this.matching(query);
    for (let at = 0; at < all.length; at += size) yield databasePageRows(all.slice(at, at + size));
  }
}
