import { locationColumn } from '../../standard/geographic-levels.js';
import type { ResolvedQuery } from './resolve.js';
import { debugLocation, responseWarnings, totalPages } from './results.js';
import type { RowIndex } from './row-index.js';
import type { VersionMeta } from './version-meta-cache.js';

/**
 * Writes the JSON of a query response straight from the row index, without building result objects: every
 * `"key":"value"` fragment of a time period, location or filter option is made once per version (and debug flag)
 * and reused, so a page costs string concatenation only. The output is exactly JSON.stringify of the response
 * the object path (results.ts) builds.
 */
interface Fragments {
  timePeriods: Map<number, string>;
  /** Per location level: [column, location id → `"LA":"id"`]. */
  locations: Array<[string, Map<number, string>]>;
  /** Per filter: [column, option id → `"filterId":"optionId"`]. */
  filters: Array<[string, Map<number, string>]>;
}

const fragmentsCache = new WeakMap<VersionMeta, { plain?: Fragments; debug?: Fragments }>();

function fragmentsOf(meta: VersionMeta, debug: boolean): Fragments {
  let entry = fragmentsCache.get(meta);
  if (!entry) fragmentsCache.set(meta, (entry = {}));
  const cached = debug ? entry.debug : entry.plain;
  if (cached) return cached;
  const timePeriods = new Map(meta.timePeriods.map((t) => [t.id, JSON.stringify({ code: t.code, period: t.period })]));
  const locations = meta.locationLevels.map((level): [string, Map<number, string>] => {
    const map = new Map<number, string>();
    for (const location of meta.locationsByLevel.get(level) ?? []) {
      map.set(location.id, `${JSON.stringify(level)}:${JSON.stringify(debug ? debugLocation(location) : location.publicId)}`);
    }
    return [locationColumn(level), map];
  });
  const filters = meta.filters.map((filter): [string, Map<number, string>] => {
    const key = JSON.stringify(debug ? `${filter.publicId} :: ${filter.columnName}` : filter.publicId);
    const map = new Map<number, string>();
    for (const option of meta.optionsById.values()) {
      if (option.filter === filter) map.set(option.id, `${key}:${JSON.stringify(debug ? `${option.publicId} :: ${option.label}` : option.publicId)}`);
    }
    return [filter.column, map];
  });
  const built = { timePeriods, locations, filters };
  if (debug) entry.debug = built;
  else entry.plain = built;
  return built;
}

/** The response JSON of a page chosen by the index (which must hold the selected indicators' values). */
export function writeIndexedResponse(index: RowIndex, meta: VersionMeta, query: ResolvedQuery, positions: readonly number[], total: number): string {
  const { timePeriods, locations, filters } = fragmentsOf(meta, query.debug);
  const locationColumns = locations.map(([column, map]) => [index.facet(column), map] as const);
  const filterColumns = filters.map(([column, map]) => [index.facet(column), map] as const);
  const indicators = query.indicators.map((i) => [i.column, JSON.stringify(query.debug ? `${i.publicId} :: ${i.columnName}` : i.publicId)] as const);
  const paging = { page: query.page, pageSize: query.pageSize, totalResults: total, totalPages: totalPages(total, query.pageSize) };

  const rows: string[] = new Array(positions.length);
  for (let r = 0; r < positions.length; r++) {
    const p = positions[r]!;
    let locationPart = '';
    for (const [{ dictionary, codes }, map] of locationColumns) {
      const fragment = map.get(dictionary[codes[p]!]!);
      if (fragment) locationPart += locationPart ? `,${fragment}` : fragment;
    }
    let filterPart = '';
    for (const [{ dictionary, codes }, map] of filterColumns) {
      const fragment = map.get(dictionary[codes[p]!]!);
      if (fragment) filterPart += filterPart ? `,${fragment}` : fragment;
    }
    let valuePart = '';
    for (const [column, key] of indicators) {
      const fragment = `${key}:${JSON.stringify(index.indicatorText(column, p))}`;
      valuePart += valuePart ? `,${fragment}` : fragment;
    }
    rows[r] =
      `{"timePeriod":${timePeriods.get(index.timePeriodAt(p)) ?? '{"code":"","period":""}'},"geographicLevel":${JSON.stringify(index.levelCodeAt(p))},` +
      `"locations":{${locationPart}},"filters":{${filterPart}},"values":{${valuePart}}}`;
  }
  return `{"paging":${JSON.stringify(paging)},"results":[${rows.join(',')}],"warnings":${JSON.stringify(responseWarnings(query, total))}}`;
}
