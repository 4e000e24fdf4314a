/**
 * The explorer's permalink of a query given in the API's own shape (POST body criteria, indicators, sorts): the
 * explorer's query page with the same choices, in the explorer's own query-string form (its `stateToSearch`), so
 * that a person can open, check and continue what an assistant cited.
 *
 * The explorer says "these levels, these locations, these options of each filter, these periods": an `and` of facets
 * with `eq`/`in` (and `gte`/`lte` for periods). Criteria it cannot say (`or`, `not`, `notEq`, `notIn`, locations
 * without their level chosen) still get the nearest page, marked not exact.
 */
import { emptyState, locationKey, periodKey, stateToSearch, type QueryState } from '../explorer/client/query.js';
import type { DataSetMetaView } from '../statistics/schemas.js';

export interface Permalink {
  url: string;
  /** Whether the explorer's page shows exactly the query's rows. */
  exact: boolean;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function listOf(comparators: JsonObject): { items: Json[]; exact: boolean } {
  const items: Json[] = [];
  let exact = true;
  for (const [name, value] of Object.entries(comparators)) {
    if (value === null) continue;
    if (name === 'eq') items.push(value);
    else if (name === 'in' && Array.isArray(value)) items.push(...value);
    else exact = false;
  }
  return { items, exact };
}

export function explorerPermalink(
  origin: string,
  dataSetId: string,
  dataSetVersion: string | undefined,
  query: { criteria?: unknown; indicators?: string[]; sorts?: Array<{ field: string; direction: string }> },
  meta: DataSetMetaView,
): Permalink {
  const state: QueryState = emptyState();
  let exact = true;
  if (dataSetVersion) state.dataSetVersion = dataSetVersion;
  const optionFilter = new Map(meta.filters.flatMap((f) => f.options.map((o) => [o.id, f.id] as const)));
  const levels = new Set<string>();
  const locationLevels = new Set<string>();

  const facets = (criteria: unknown): JsonObject[] | undefined => {
    if (criteria === undefined || criteria === null) return [];
    if (!isObject(criteria)) return undefined;
    if (Array.isArray(criteria.and)) {
      const all: JsonObject[] = [];
      for (const item of criteria.and) {
        const inner = facets(item);
        if (!inner) return undefined;
        all.push(...inner);
      }
      return all;
    }
    if ('or' in criteria || 'not' in criteria) return undefined;
    return [criteria];
  };
  const terms = facets(query.criteria);
  if (!terms) exact = false;
  for (const term of terms ?? []) {
    for (const [facet, comparators] of Object.entries(term)) {
      if (!isObject(comparators)) continue;
      if (facet === 'timePeriods' && ('gte' in comparators || 'lte' in comparators)) {
        const { gte, lte, ...rest } = comparators;
        const key = (value: Json) =>
          isObject(value) && typeof value.period === 'string' && typeof value.code === 'string'
            ? periodKey({ period: value.period, code: value.code })
            : undefined;
        state.timePeriods = { mode: 'range', from: gte ? key(gte) : undefined, to: lte ? key(lte) : undefined };
        if (Object.values(rest).some((v) => v !== null)) exact = false;
        continue;
      }
      const { items, exact: listed } = listOf(comparators);
      if (!listed) exact = false;
      if (facet === 'filters') {
        for (const item of items) {
          const filterId = typeof item === 'string' ? optionFilter.get(item) : undefined;
          if (!filterId) {
            exact = false;
            continue;
          }
          (state.filters[filterId] ??= []).push(item as string);
        }
      } else if (facet === 'geographicLevels') {
        for (const item of items) if (typeof item === 'string') levels.add(item);
      } else if (facet === 'locations') {
        for (const item of items) {
          if (!isObject(item) || typeof item.level !== 'string') continue;
          const group = meta.locations.find((l) => l.level.code === item.level);
          const [property, value] = Object.entries(item).find(([k]) => k !== 'level') ?? [];
          const matches = (group?.options ?? []).filter(
            (o) => (o as Record<string, unknown>)[property ?? 'id'] === value,
          );
          if (matches.length === 0) exact = false;
          for (const location of matches) state.locations.push(locationKey(item.level, location.id));
          locationLevels.add(item.level);
        }
      } else if (facet === 'timePeriods') {
        state.timePeriods = {
          mode: 'list',
          items: items
            .filter(isObject)
            .map((t) => periodKey({ period: String(t.period as string), code: String(t.code as string) })),
        };
      }
    }
  }
  // The explorer counts a location only at a chosen level: the locations' levels are chosen with them, which the
  // query said only when it named those levels itself.
  for (const level of locationLevels) {
    if (!levels.has(level)) exact = false;
    levels.add(level);
  }
  state.geographicLevels = [...levels];
  state.indicators =
    query.indicators && query.indicators.length > 0 ? query.indicators : meta.indicators.map((i) => i.id);
  if (query.sorts && query.sorts.length > 0) {
    state.sort = `${query.sorts[0]!.field}|${query.sorts[0]!.direction}`;
    if (query.sorts.length > 1) exact = false;
  }
  return { url: `${origin}/data-sets/${encodeURIComponent(dataSetId)}/query?${stateToSearch(state)}`, exact };
}
