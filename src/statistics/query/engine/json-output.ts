import { locationColumn } from '../../standard/geographic-levels.js';
import type { ResolvedQuery } from './resolve.js';
import { debugLocation, responseWarnings, totalPages } from './results.js';
import type { VersionMeta } from './model.js';
import type { PageRows } from './page-rows.js';
import { byteSink, putBytes, putText, reserve, utf8, written, type ByteSink } from './json-bytes.js';

/**
 * Writes the JSON of a query response straight from the page's rows (the row index's columns or rows from
 * PostgreSQL) into bytes, without building result objects or strings: every `"key":"value"` fragment of a time
 * period, location or filter option is made and encoded once per version (and debug flag) and copied, and the row
 * index writes its numbers' digits itself (json-bytes.ts). Locations and filters in the metadata's order, values in
 * the query's; an id not of the version (0, NULL) is left out.
 */
interface Fragments {
  timePeriods: Map<number, Uint8Array>;
  /** Per location level: [column, location id → `"LA":"id"`]. */
  locations: Array<[string, Map<number, Uint8Array>]>;
  /** Per filter: [column, option id → `"filterId":"optionId"`]. */
  filters: Array<[string, Map<number, Uint8Array>]>;
  /** The most bytes a row's time period, locations and filters take (commas included). */
  rowBytes: number;
  /** Per level code, `,"geographicLevel":"LA","locations":{`: made as a row first shows the code. */
  levels: Map<string, Uint8Array>;
}

const NO_TIME_PERIOD = utf8('{"code":"","period":""}');
const ROW_START = utf8('{"timePeriod":');
const FILTERS_START = utf8('},"filters":{');
const VALUES_START = utf8('},"values":{');
const COMMA = 44;
/** The most a page's buffer starts with: a 10,000-row page of the seeded data sets is 2–3 MB. */
const MAX_INITIAL_BYTES = 8 * 1024 * 1024;
const CLOSE_BRACE = 125;

/** The most bytes of any fragment of a map: what a row's copy of one may take. */
function longest(fragments: Iterable<Uint8Array>): number {
  let most = 0;
  for (const fragment of fragments) most = Math.max(most, fragment.length);
  return most;
}

const fragmentsCache = new WeakMap<VersionMeta, { plain?: Fragments; debug?: Fragments }>();

function fragmentsOf(meta: VersionMeta, debug: boolean): Fragments {
  let entry = fragmentsCache.get(meta);
  if (!entry) fragmentsCache.set(meta, (entry = {}));
  const cached = debug ? entry.debug : entry.plain;
  if (cached) return cached;
  const timePeriods = new Map(
    meta.timePeriods.map((t) => [t.id, utf8(JSON.stringify({ code: t.code, period: t.period }))]),
  );
  const locations = meta.locationLevels.map((level): [string, Map<number, Uint8Array>] => {
    const map = new Map<number, Uint8Array>();
    for (const location of meta.locationsByLevel.get(level) ?? []) {
      map.set(
        location.id,
        utf8(`${JSON.stringify(level)}:${JSON.stringify(debug ? debugLocation(location) : location.publicId)}`),
      );
    }
    return [locationColumn(level), map];
  });
  const filters = meta.filters.map((filter): [string, Map<number, Uint8Array>] => {
    const key = JSON.stringify(debug ? `${filter.publicId} :: ${filter.columnName}` : filter.publicId);
    const map = new Map<number, Uint8Array>();
    for (const option of meta.optionsById.values()) {
      if (option.filter === filter)
        map.set(
          option.id,
          utf8(`${key}:${JSON.stringify(debug ? `${option.publicId} :: ${option.label}` : option.publicId)}`),
        );
    }
    return [filter.column, map];
  });
  const rowBytes =
    Math.max(NO_TIME_PERIOD.length, longest(timePeriods.values())) +
    [...locations, ...filters].reduce((sum, [, map]) => sum + 1 + longest(map.values()), 0);
  const built = { timePeriods, locations, filters, rowBytes, levels: new Map<string, Uint8Array>() };
  if (debug) entry.debug = built;
  else entry.plain = built;
  return built;
}

/** Per row, its fragment of a location or filter column (none for an id not of the version). */
function fragmentsByRow(
  page: PageRows,
  [column, byId]: [string, Map<number, Uint8Array>],
): (r: number) => Uint8Array | undefined {
  if (page.byIdOf) return page.byIdOf(column, byId);
  const idAt = page.idsOf(column);
  return (r) => byId.get(idAt(r));
}

/** Row r's fragments of some columns, comma-separated (room reserved by the caller). */
function putFragments(sink: ByteSink, columns: ReadonlyArray<(r: number) => Uint8Array | undefined>, r: number): void {
  let first = true;
  for (const fragmentAt of columns) {
    const fragment = fragmentAt(r);
    if (!fragment) continue;
    if (!first) sink.buffer[sink.length++] = COMMA;
    putBytes(sink, fragment);
    first = false;
  }
}

/**
 * The response JSON of a page: `{"paging":…,"results":[…],"warnings":[…]}`, as bytes, in one buffer sized for the
 * page's rows at their longest, so a page is written without a copy (rows of texts of unknown length, and pages
 * past MAX_INITIAL_BYTES, make room as they go).
 */
export function writeResponseJson(meta: VersionMeta, query: ResolvedQuery, page: PageRows, total: number): Buffer {
  const fragments = fragmentsOf(meta, query.debug);
  const { timePeriods, locations, filters } = fragments;
  const locationColumns = locations.map((column) => fragmentsByRow(page, column));
  const filterColumns = filters.map((column) => fragmentsByRow(page, column));
  const indicators = query.indicators.map((indicator, i) => {
    const key = JSON.stringify(query.debug ? `${indicator.publicId} :: ${indicator.columnName}` : indicator.publicId);
    return {
      key: utf8(`${i > 0 ? ',' : ''}${key}:`),
      // The rows' own writer (the row index), else each text through JSON.stringify.
      literals: page.jsonLiteralsOf?.(indicator.column),
      textAt: page.textsOf(indicator.column),
    };
  });
  const { levels } = fragments;
  const levelFragment = (code: string) => {
    let fragment = levels.get(code);
    if (!fragment) levels.set(code, (fragment = utf8(`,"geographicLevel":${JSON.stringify(code)},"locations":{`)));
    return fragment;
  };
  // A row's bytes at most, but for its level's fragment and the texts of indicators without their own writer.
  const rowBytes =
    ROW_START.length +
    fragments.rowBytes +
    FILTERS_START.length +
    VALUES_START.length +
    indicators.reduce((sum, i) => sum + i.key.length + (i.literals?.maxBytes ?? 0), 0) +
    3;
  const paging = {
    page: query.page,
    pageSize: query.pageSize,
    totalResults: total,
    totalPages: totalPages(total, query.pageSize),
  };

  // Room for every row at its longest (the level's fragment is a few bytes), up to a bound: rows of long debug
  // labels make room as they go instead of one allocation for all of them.
  const sink = byteSink(Math.min(page.count * (rowBytes + 32) + 256, MAX_INITIAL_BYTES));
  putText(sink, `{"paging":${JSON.stringify(paging)},"results":[`);
  // Rows come a time period (and mostly a level) at a time: their fragments are looked up when they change.
  let periodId = Number.NaN;
  let period = NO_TIME_PERIOD;
  let levelCode = '';
  let level: Uint8Array = new Uint8Array(0);
  for (let r = 0; r < page.count; r++) {
    const rowPeriodId = page.timePeriodId(r);
    if (rowPeriodId !== periodId) {
      periodId = rowPeriodId;
      period = timePeriods.get(periodId) ?? NO_TIME_PERIOD;
    }
    const rowLevelCode = page.levelCode(r);
    if (rowLevelCode !== levelCode || r === 0) {
      levelCode = rowLevelCode;
      level = levelFragment(levelCode);
    }
    reserve(sink, rowBytes + level.length);
    if (r > 0) sink.buffer[sink.length++] = COMMA;
    putBytes(sink, ROW_START);
    putBytes(sink, period);
    putBytes(sink, level);
    putFragments(sink, locationColumns, r);
    putBytes(sink, FILTERS_START);
    putFragments(sink, filterColumns, r);
    putBytes(sink, VALUES_START);
    for (const { key, literals, textAt } of indicators) {
      putBytes(sink, key);
      if (literals) {
        literals.put(sink, r);
        continue;
      }
      const text = JSON.stringify(textAt(r));
      // Room for the text and still for the rest of the row, as reserved above.
      reserve(sink, 3 * text.length + rowBytes);
      putText(sink, text);
    }
    sink.buffer[sink.length++] = CLOSE_BRACE;
    sink.buffer[sink.length++] = CLOSE_BRACE;
    // Writes past a typed array's end are dropped without a word: a row longer than the room reserved for it is a
    // bug to report, not a page to send with bytes missing.
    if (sink.length > sink.buffer.length) throw new Error('A row of the query page outgrew the room reserved for it');
  }
  putText(sink, `],"warnings":${JSON.stringify(responseWarnings(query, total))}}`);
  return written(sink);
}
