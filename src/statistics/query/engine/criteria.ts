import type { LocationProperty } from '../../standard/geographic-levels.js';

/**
 * The parsed, validated form of a query request: a typed criteria tree with no SQL in it.
 * GET and POST both parse into this; every comparator keeps its request path and the form the client sent
 * (a string for GET, an object for POST), because warnings quote both.
 */
export interface Located<T> {
  value: T;
  /** What the client sent, echoed in warning `detail.items`. */
  shown: unknown;
}

export interface ComparatorSet<T> {
  eq?: Located<T>;
  notEq?: Located<T>;
  in?: Located<T>[];
  notIn?: Located<T>[];
  /** Request path of this facet's comparators, e.g. `criteria.and[1].filters` or `filters`. */
  path: string;
}

export interface LocationRef {
  level: string;
  property: LocationProperty;
  value: string;
}

/** A time period as stored: `period` normalised (`2020` with AY → `2020/2021`). */
export interface TimePeriodRef {
  period: string;
  code: string;
}

export interface TimePeriodComparatorSet extends ComparatorSet<TimePeriodRef> {
  gt?: Located<TimePeriodRef>;
  gte?: Located<TimePeriodRef>;
  lt?: Located<TimePeriodRef>;
  lte?: Located<TimePeriodRef>;
}

export interface Facets {
  filters?: ComparatorSet<string>;
  geographicLevels?: ComparatorSet<string>;
  locations?: ComparatorSet<LocationRef>;
  timePeriods?: TimePeriodComparatorSet;
}

export type Criteria =
  | { kind: 'and'; items: Criteria[] }
  | { kind: 'or'; items: Criteria[] }
  | { kind: 'not'; item: Criteria }
  | { kind: 'facets'; facets: Facets };

export type SortDirection = 'Asc' | 'Desc';

export interface SortRequest {
  field: string;
  direction: SortDirection;
  /** What the client sent (`field|direction` string or `{field, direction}` object), for SortFieldsNotFound. */
  shown: unknown;
}

export interface QueryRequest {
  /** Undefined means no filtering. */
  criteria?: Criteria;
  /** Undefined means every indicator. */
  indicators?: string[];
  sorts?: SortRequest[];
  debug: boolean;
  page: number;
  pageSize: number;
}

/** Protective bounds of a criteria tree (beyond the reference, which has none). */
export const MAX_CRITERIA_DEPTH = 32;
export const MAX_CRITERIA_CONDITIONS = 1000;
export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 10000;
