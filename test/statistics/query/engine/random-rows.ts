import fc from 'fast-check';
import type { Predicate, SortKey } from '../../../../src/statistics/query/engine/resolve.js';
import type { RowIndex } from '../../../../src/statistics/query/engine/index/row-index.js';
import { RowIndexBuilder } from '../../../../src/statistics/query/engine/index/row-index-builder.js';

/**
 * Random rows and query trees for the row index engines, and the plain row-by-row evaluation (the SQL semantics)
 * they are checked against.
 */
export interface Row {
  id: number;
  time_period_id: number;
  geographic_level: string;
  l_la: number;
  f1: number;
  f2: number;
}

export const LEVELS = ['LA', 'NAT', 'REG', 'SCH'];

export function matches(row: Row, p: Predicate): boolean {
  switch (p.kind) {
    case 'const':
      return p.value;
    case 'and':
      return p.items.every((i) => matches(row, i));
    case 'or':
      return p.items.some((i) => matches(row, i));
    case 'not':
      return !matches(row, p.item);
    case 'in': {
      const found = p.values.includes(row[p.column as keyof Row]);
      return p.negated ? !found : found;
    }
    case 'compare': {
      const v = row[p.column as keyof Row] as number;
      return p.op === '>' ? v > p.value : p.op === '>=' ? v >= p.value : p.op === '<' ? v < p.value : v <= p.value;
    }
  }
}

/** The rows `p` selects, sorted as the SQL translation sorts (indicators: as numbers where they are, then as text). */
export function naiveSelect<R extends Row>(rows: R[], p: Predicate, sorts: SortKey[], offset: number, limit: number) {
  const selected = rows.filter((r) => matches(r, p));
  const key = (row: R, sort: SortKey): number => {
    const value = row[sort.column as keyof R];
    if (sort.kind === 'rank') {
      const rank = sort.ranks!.indexOf(value as never);
      return rank < 0 ? sort.ranks!.length : rank;
    }
    return value as number;
  };
  const NUMERIC = /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/;
  const compareIndicator = (x: string, y: string): number => {
    // A text that is no number is NULL to ORDER BY: after every number ascending.
    const [m, n] = [NUMERIC.test(x) ? Number(x) : NaN, NUMERIC.test(y) ? Number(y) : NaN];
    if (Number.isNaN(m) !== Number.isNaN(n)) return Number.isNaN(m) ? 1 : -1;
    if (m !== n && !Number.isNaN(m)) return m - n;
    return x === y ? 0 : x < y ? -1 : 1;
  };
  selected.sort((a, b) => {
    for (const sort of sorts) {
      const d =
        sort.kind === 'indicator'
          ? compareIndicator(String(a[sort.column as keyof R]), String(b[sort.column as keyof R]))
          : key(a, sort) - key(b, sort);
      if (d !== 0) return sort.direction === 'Asc' ? d : -d;
    }
    return a.id - b.id;
  });
  return { total: selected.length, ids: selected.slice(offset, offset + limit).map((r) => r.id) };
}

export function buildIndex(rows: Row[]): RowIndex {
  const ordered = [...rows].sort((a, b) => b.time_period_id - a.time_period_id || a.id - b.id);
  const builder = new RowIndexBuilder(ordered.length, ['l_la', 'f1', 'f2'], []);
  for (const r of ordered) builder.add(r.id, r.time_period_id, r.geographic_level, [r.l_la, r.f1, r.f2], []);
  return builder.finish();
}

export const rowArb = fc.record({
  time_period_id: fc.integer({ min: 1, max: 4 }),
  geographic_level: fc.constantFrom(...LEVELS),
  // More than 16 distinct values: the column gets postings (f1, f2: a pass over their codes).
  l_la: fc.integer({ min: 0, max: 40 }),
  f1: fc.integer({ min: 0, max: 3 }),
  f2: fc.integer({ min: 4, max: 6 }),
});

export const leafArb: fc.Arbitrary<Predicate> = fc.oneof(
  fc.record({
    kind: fc.constant('in' as const),
    column: fc.constantFrom('l_la', 'f1', 'f2', 'time_period_id'),
    values: fc.array(fc.oneof(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 41 })), {
      minLength: 1,
      maxLength: 3,
    }),
    negated: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('in' as const),
    column: fc.constant('geographic_level'),
    values: fc.array(fc.constantFrom(...LEVELS, 'WARD'), { minLength: 1, maxLength: 2 }),
    negated: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('compare' as const),
    column: fc.constant('time_period_id'),
    op: fc.constantFrom('>' as const, '>=' as const, '<' as const, '<=' as const),
    value: fc.integer({ min: 0, max: 5 }),
  }),
  fc.record({ kind: fc.constant('const' as const), value: fc.boolean() }),
);

export const predicateArb: fc.Arbitrary<Predicate> = fc.letrec<{ node: Predicate }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafArb,
    fc.record({ kind: fc.constant('and' as const), items: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ kind: fc.constant('or' as const), items: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ kind: fc.constant('not' as const), item: tie('node') }),
  ),
})).node;

export const sortArb = fc.oneof(
  fc.constant<SortKey[]>([{ column: 'time_period_id', direction: 'Desc', kind: 'integer' }]),
  fc.array(
    fc.oneof(
      fc.record({
        column: fc.constantFrom('time_period_id', 'f1', 'f2'),
        direction: fc.constantFrom('Asc' as const, 'Desc' as const),
        kind: fc.constant('integer' as const),
      }),
      fc.record({
        column: fc.constant('geographic_level'),
        direction: fc.constantFrom('Asc' as const, 'Desc' as const),
        kind: fc.constant('rank' as const),
        ranks: fc.constant<Array<number | string>>(['LA', 'NAT', 'REG', 'SCH']),
      }),
      fc.record({
        column: fc.constant('l_la'),
        direction: fc.constantFrom('Asc' as const, 'Desc' as const),
        kind: fc.constant('rank' as const),
        ranks: fc.constant<Array<number | string>>([3, 1, 2]),
      }),
    ),
    { minLength: 1, maxLength: 3 },
  ),
);
