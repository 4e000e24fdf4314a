import { locationColumn } from '../../standard/geographic-levels.js';
import type { ResolvedQuery } from './resolve.js';
import { debugLocation, responseWarnings, totalPages } from './results.js';
import type { VersionMeta } from './model.js';
import type { PageRows } from './page-rows.js';

/**
 * Writes the JSON of a query response straight from the page's rows (the row index's columns or rows from
 * PostgreSQL), without building result objects: every `"key":"value"` fragment of a time period, location or filter
 * option is made once per version (and debug flag) and reused, so a page costs string concatenation only (on the
 * SQL engine, where result objects and their JSON.stringify were 12 ms of a 10,000-row page in a CPU profile, the
 * server's CPU for such pages fell by 7%). Locations and filters in the metadata's order, values in the query's; an
 * id not of the version (0, NULL) is left out.
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
      map.set(
        location.id,
        `${JSON.stringify(level)}:${JSON.stringify(debug ? debugLocation(location) : location.publicId)}`,
      );
    }
    return [locationColumn(level), map];
  });
  const filters = meta.filters.map((filter): [string, Map<number, string>] => {
    const key = JSON.stringify(debug ? `${filter.publicId} :: ${filter.columnName}` : filter.publicId);
    const map = new Map<number, string>();
    for (const option of meta.optionsById.values()) {
      if (option.filter === filter)
        map.set(
          option.id,
          `${key}:${JSON.stringify(debug ? `${option.publicId} :: ${option.label}` : option.publicId)}`,
        );
    }
    return [filter.column, map];
  });
  const built = { timePeriods, locations, filters };
  if (debug) entry.debug = built;
  else entry.plain = built;
  return built;
}

/** Text gathered per piece of the response before it becomes bytes: small enough to die young in V8. */
const PIECE_CHARS = 64 * 1024;

/**
 * The response JSON of a page: `{"paging":…,"results":[…],"warnings":[…]}`, as bytes. Written in pieces of
 * about 64 KB, not as one string: a 10,000-row page (2.4 MB) as one string, and its rows' strings kept alive for
 * it, went to V8's old generation on every request, and the heap grew by 100 MB or more over a run of such pages.
 */
export function writeResponseJson(meta: VersionMeta, query: ResolvedQuery, page: PageRows, total: number): Buffer {
  const { timePeriods, locations, filters } = fragmentsOf(meta, query.debug);
  const locationColumns = locations.map(([column, map]) => [page.idsOf(column), map] as const);
  const filterColumns = filters.map(([column, map]) => [page.idsOf(column), map] as const);
  const indicators = query.indicators.map((i) => {
    const textAt = page.textsOf(i.column);
    const literalAt = page.jsonTextsOf?.(i.column) ?? ((r: number) => JSON.stringify(textAt(r)));
    return [literalAt, `${JSON.stringify(query.debug ? `${i.publicId} :: ${i.columnName}` : i.publicId)}:`] as const;
  });
  const paging = {
    page: query.page,
    pageSize: query.pageSize,
    totalResults: total,
    totalPages: totalPages(total, query.pageSize),
  };

  const pieces: Buffer[] = [];
  let text = `{"paging":${JSON.stringify(paging)},"results":[`;
  for (let r = 0; r < page.count; r++) {
    let locationPart = '';
    for (const [idAt, map] of locationColumns) {
      const fragment = map.get(idAt(r));
      if (fragment) locationPart += locationPart ? `,${fragment}` : fragment;
    }
    let filterPart = '';
    for (const [idAt, map] of filterColumns) {
      const fragment = map.get(idAt(r));
      if (fragment) filterPart += filterPart ? `,${fragment}` : fragment;
    }
    let valuePart = '';
    for (const [literalAt, keyColon] of indicators) {
      valuePart += valuePart ? `,${keyColon}${literalAt(r)}` : keyColon + literalAt(r);
    }
    text +=
      `${r > 0 ? ',' : ''}{"timePeriod":${timePeriods.get(page.timePeriodId(r)) ?? '{"code":"","period":""}'},"geographicLevel":${JSON.stringify(page.levelCode(r))},` +
      `"locations":{${locationPart}},"filters":{${filterPart}},"values":{${valuePart}}}`;
    if (text.length >= PIECE_CHARS) {
      pieces.push(Buffer.from(text));
      text = '';
    }
  }
  text += `],"warnings":${JSON.stringify(responseWarnings(query, total))}}`;
  pieces.push(Buffer.from(text));
  return pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces);
}
