import { ValidationError, type FieldError } from '../../../errors.js';
import type {
  ComparatorSet,
  Criteria,
  Facets,
  Located,
  LocationRef,
  QueryRequest,
  SortRequest,
  TimePeriodComparatorSet,
  TimePeriodRef,
} from './criteria.js';
import { locationColumn, type LocationProperty } from '../../standard/geographic-levels.js';
import { ValidationMessages, WarningMessages } from '../../errors.js';
import { timePeriodKey, type IndicatorMeta, type LocationMeta, type VersionMeta } from './model.js';

/**
 * The criteria tree resolved against one version: public ids replaced by row-table values, unknown ones turned
 * into warnings and constant branches. Both engines (SQL and the in-memory bitmap index) evaluate this.
 */
export type Predicate =
  | { kind: 'const'; value: boolean }
  | { kind: 'and'; items: Predicate[] }
  | { kind: 'or'; items: Predicate[] }
  | { kind: 'not'; item: Predicate }
  /**
   * `column IN (values)` (or NOT IN when negated). Integer columns, or `geographic_level` with level codes.
   * `unindexed`: written so that PostgreSQL leaves the column's index alone (see leadWithTimePeriod).
   */
  | { kind: 'in'; column: string; values: Array<number | string>; negated: boolean; unindexed?: boolean }
  /** Chronological comparison on `time_period_id` (ids are assigned in chronological order). */
  | { kind: 'compare'; column: string; op: '>' | '>=' | '<' | '<='; value: number };

export interface Warning {
  code: string;
  message: string;
  path?: string;
  detail?: Record<string, unknown>;
}

/**
 * The indicator texts a sort by indicator values orders as numbers (the rest come after them ascending, as NULLs):
 * one pattern for the SQL translation (a POSIX regex) and the row index (a RegExp), so both order alike.
 */
export const NUMERIC_TEXT_PATTERN = '^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$';

/** A resolved sort key. `ranks` orders values of the column by label (values not listed sort last). */
export interface SortKey {
  column: string;
  direction: 'Asc' | 'Desc';
  kind: 'integer' | 'rank' | 'indicator';
  ranks?: Array<number | string>;
}

export interface ResolvedQuery {
  predicate: Predicate;
  warnings: Warning[];
  indicators: IndicatorMeta[];
  /** Requested sorts, then the default `timePeriod` DESC when none; the `id` tie-breaker is implied. */
  sorts: SortKey[];
  page: number;
  pageSize: number;
  debug: boolean;
}

export const TRUE: Predicate = { kind: 'const', value: true };
export const FALSE: Predicate = { kind: 'const', value: false };

export function and(items: Predicate[]): Predicate {
  const kept: Predicate[] = [];
  for (const item of items) {
    if (item.kind === 'const') {
      if (!item.value) return FALSE;
      continue;
    }
    if (item.kind === 'and') kept.push(...item.items);
    else kept.push(item);
  }
  if (kept.length === 0) return TRUE;
  return kept.length === 1 ? kept[0]! : { kind: 'and', items: kept };
}

export function or(items: Predicate[]): Predicate {
  const kept: Predicate[] = [];
  for (const item of items) {
    if (item.kind === 'const') {
      if (item.value) return TRUE;
      continue;
    }
    if (item.kind === 'or') kept.push(...item.items);
    else kept.push(item);
  }
  if (kept.length === 0) return FALSE;
  return kept.length === 1 ? kept[0]! : { kind: 'or', items: kept };
}

export function not(item: Predicate): Predicate {
  if (item.kind === 'const') return { kind: 'const', value: !item.value };
  if (item.kind === 'not') return item.item;
  if (item.kind === 'in') return { ...item, negated: !item.negated };
  return { kind: 'not', item };
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

/** Groups values by column, keeping first-seen column order. */
function byColumn(pairs: Array<{ column: string; value: number | string }>): Map<string, Array<number | string>> {
  const groups = new Map<string, Array<number | string>>();
  for (const { column, value } of pairs) {
    const list = groups.get(column) ?? [];
    if (!list.includes(value)) list.push(value);
    groups.set(column, list);
  }
  return groups;
}

type Lookup<T> = (value: T) => Array<{ column: string; value: number | string }>;

class Resolver {
  readonly warnings: Warning[] = [];

  constructor(private readonly meta: VersionMeta) {}

  criteria(criteria: Criteria): Predicate {
    switch (criteria.kind) {
      case 'and':
        return and(criteria.items.map((c) => this.criteria(c)));
      case 'or':
        return or(criteria.items.map((c) => this.criteria(c)));
      case 'not': {
        if (criteria.item.kind !== 'facets') return not(this.criteria(criteria.item));
        // Quirk of the reference: directly under `not`, a facets object's facet types are OR-joined.
        const fragments = this.facetFragments(criteria.item.facets);
        // `{}` matches everything, so `{ "not": {} }` matches nothing (docs/compatibility.md), not NOT(empty OR).
        return fragments.length === 0 ? FALSE : not(or(fragments));
      }
      case 'facets':
        return and(this.facetFragments(criteria.facets));
    }
  }

  /** One predicate per facet type present, in the order filters, levels, locations, time periods. */
  private facetFragments(facets: Facets): Predicate[] {
    const fragments: Predicate[] = [];
    if (facets.filters)
      fragments.push(this.comparators(facets.filters, 'FiltersNotFound', (id) => this.filterOption(id)));
    if (facets.geographicLevels) {
      fragments.push(
        this.comparators(facets.geographicLevels, 'GeographicLevelsNotFound', (code) => this.level(code), true),
      );
    }
    if (facets.locations)
      fragments.push(this.comparators(facets.locations, 'LocationsNotFound', (ref) => this.location(ref)));
    if (facets.timePeriods) fragments.push(this.timePeriods(facets.timePeriods));
    return fragments;
  }

  private filterOption(publicId: string) {
    const option = this.meta.optionsByPublicId.get(publicId);
    return option ? [{ column: option.filter.column, value: option.id }] : [];
  }

  private level(code: string) {
    return this.meta.levels.has(code) ? [{ column: 'geographic_level', value: code }] : [];
  }

  private location(ref: LocationRef) {
    const column = locationColumn(ref.level);
    if (!this.meta.locationLevels.includes(ref.level)) return [];
    const candidates = this.meta.locationsByLevel.get(ref.level) ?? [];
    // A code may identify several locations of a level; all of them match (as the API documentation describes).
    return candidates
      .filter((l) => locationProperty(l, ref.property) === ref.value)
      .map((l) => ({ column, value: l.id }));
  }

  private timePeriod(ref: TimePeriodRef) {
    const id = this.meta.timePeriodIdByKey.get(timePeriodKey(ref.period, ref.code));
    return id === undefined ? [] : [{ column: 'time_period_id', value: id }];
  }

  private warn(code: keyof typeof WarningMessages, path: string, items: unknown[]): void {
    this.warnings.push({ code, message: WarningMessages[code], path, detail: { items } });
  }

  /**
   * eq / notEq / in / notIn of one facet: unknown values warn; an unknown `eq` (or an `in` with nothing known)
   * matches nothing, an unknown `notEq` (or `notIn`) excludes nothing. `in` over several columns is an OR,
   * `notIn` an AND.
   */
  private comparators<T>(
    set: ComparatorSet<T>,
    warning: keyof typeof WarningMessages,
    lookup: Lookup<T>,
    countDuplicates = false,
  ): Predicate {
    const parts: Predicate[] = [];
    const single = (located: Located<T> | undefined, name: 'eq' | 'notEq') => {
      if (!located) return;
      const found = lookup(located.value);
      if (found.length === 0) {
        this.warn(warning, `${set.path}.${name}`, [located.shown]);
        parts.push(name === 'eq' ? FALSE : TRUE);
        return;
      }
      const groups = [...byColumn(found)].map(([column, values]) => ({
        kind: 'in' as const,
        column,
        values,
        negated: false,
      }));
      parts.push(name === 'eq' ? or(groups) : not(or(groups)));
    };
    const list = (items: Located<T>[] | undefined, name: 'in' | 'notIn') => {
      if (!items || items.length === 0) return;
      const found: Array<{ column: string; value: number | string }> = [];
      const missing: unknown[] = [];
      const seen = new Set<string>();
      for (const item of items) {
        const key = JSON.stringify(item.shown);
        const matches = lookup(item.value);
        if (matches.length === 0) {
          if (!seen.has(key)) missing.push(item.shown);
        } else {
          found.push(...matches);
        }
        seen.add(key);
      }
      void countDuplicates;
      if (missing.length > 0) this.warn(warning, `${set.path}.${name}`, missing);
      if (found.length === 0) {
        parts.push(name === 'in' ? FALSE : TRUE);
        return;
      }
      const groups = [...byColumn(found)].map(([column, values]) => ({
        kind: 'in' as const,
        column,
        values,
        negated: name === 'notIn',
      }));
      parts.push(name === 'in' ? or(groups) : and(groups));
    };
    single(set.eq, 'eq');
    single(set.notEq, 'notEq');
    list(set.in, 'in');
    list(set.notIn, 'notIn');
    return and(parts);
  }

  private timePeriods(set: TimePeriodComparatorSet): Predicate {
    const base = this.comparators<TimePeriodRef>(set, 'TimePeriodsNotFound', (ref) => this.timePeriod(ref));
    const parts: Predicate[] = [base];
    const ops = [
      ['gt', '>'],
      ['gte', '>='],
      ['lt', '<'],
      ['lte', '<='],
    ] as const;
    for (const [name, op] of ops) {
      const located = set[name];
      if (!located) continue;
      const id = this.meta.timePeriodIdByKey.get(timePeriodKey(located.value.period, located.value.code));
      if (id === undefined) {
        this.warn('TimePeriodsNotFound', `${set.path}.${name}`, [located.shown]);
        parts.push(FALSE);
      } else {
        parts.push({ kind: 'compare', column: 'time_period_id', op, value: id });
      }
    }
    return and(parts);
  }
}

export function locationProperty(location: LocationMeta, property: LocationProperty): string | null {
  switch (property) {
    case 'id':
      return location.publicId;
    case 'code':
      return location.code;
    case 'oldCode':
      return location.oldCode;
    case 'urn':
      return location.urn;
    case 'laEstab':
      return location.laEstab;
    case 'ukprn':
      return location.ukprn;
  }
}

/** Resolves a sort field or returns undefined when it names nothing sortable in this query. */
function resolveSort(meta: VersionMeta, sort: SortRequest, selected: IndicatorMeta[]): SortKey | undefined {
  const { field, direction } = sort;
  if (field === 'timePeriod') return { column: 'time_period_id', direction, kind: 'integer' };
  if (field === 'geographicLevel')
    return { column: 'geographic_level', direction, kind: 'rank', ranks: meta.levelsByLabel };
  const split = field.indexOf('|');
  if (split < 0) return undefined;
  const kind = field.slice(0, split);
  const id = field.slice(split + 1);
  if (kind === 'location') {
    if (!meta.locationLevels.includes(id)) return undefined;
    const ranks = (meta.locationsByLevel.get(id) ?? []).map((l) => l.id);
    return { column: locationColumn(id), direction, kind: 'rank', ranks };
  }
  if (kind === 'filter') {
    const filter = meta.filtersByPublicId.get(id);
    // Option ids are assigned in label order within a filter, so the column orders by label.
    return filter ? { column: filter.column, direction, kind: 'integer' } : undefined;
  }
  if (kind === 'indicator') {
    const indicator = selected.find((i) => i.publicId === id);
    return indicator ? { column: indicator.column, direction, kind: 'indicator' } : undefined;
  }
  return undefined;
}

/** Resolves a parsed request against a version; unknown indicators and sort fields are one 400. */
export function resolveQuery(meta: VersionMeta, request: QueryRequest): ResolvedQuery {
  const resolver = new Resolver(meta);
  const predicate = request.criteria ? resolver.criteria(request.criteria) : TRUE;
  const errors: FieldError[] = [];

  let indicators = meta.indicators;
  if (request.indicators) {
    const missing = unique(request.indicators.filter((id) => !meta.indicatorsByPublicId.has(id)));
    if (missing.length > 0) {
      errors.push({
        path: 'indicators',
        code: 'IndicatorsNotFound',
        message: ValidationMessages.IndicatorsNotFound,
        detail: { items: missing },
      });
    }
    const wanted = new Set(request.indicators);
    indicators = meta.indicators.filter((i) => wanted.has(i.publicId));
  }

  const sorts: SortKey[] = [];
  const missingSorts: unknown[] = [];
  for (const sort of request.sorts ?? []) {
    const key = resolveSort(meta, sort, indicators);
    if (key) sorts.push(key);
    else missingSorts.push(sort.shown);
  }
  if (missingSorts.length > 0) {
    errors.push({
      path: 'sorts',
      code: 'SortFieldsNotFound',
      message: ValidationMessages.SortFieldsNotFound,
      detail: { items: missingSorts },
    });
  }
  if (errors.length > 0) throw new ValidationError(errors);

  if (sorts.length === 0) sorts.push({ column: 'time_period_id', direction: 'Desc', kind: 'integer' });
  return {
    predicate,
    warnings: resolver.warnings,
    indicators,
    sorts,
    page: request.page,
    pageSize: request.pageSize,
    debug: request.debug,
  };
}
