/**
 * The explorer's query: what the user chose, as a permalink (the page's own query string), as the API's POST body
 * and, when the API's GET form can say the same thing, as a GET URL. Pure functions, unit tested.
 */
import { layoutParams, parseLayout, type TableLayout } from './layout.js';

/** A builder step, 1-based, as the page and its URL (`step=2`) number them (names: STEPS in steps.ts). */
export type StepNumber = 1 | 2 | 3 | 4;

export function parseStep(value: string | null): StepNumber | undefined {
  const n = Number(value);
  return n === 1 || n === 2 || n === 3 || n === 4 ? n : undefined;
}

/** A time period as the API's GET form writes it: `2020/2021|AY`. */
export type PeriodKey = string;
/** A location as the API's GET form writes it: `LA|id|Db3Qe`. */
export type LocationKey = string;

export type TimePeriodChoice =
  | { mode: 'range'; from?: PeriodKey; to?: PeriodKey }
  | { mode: 'list'; items: PeriodKey[] };

export interface QueryState {
  /** A pinned version (`1.1`); the latest published one when absent. */
  dataSetVersion?: string;
  timePeriods: TimePeriodChoice;
  /** Geographic level codes chosen (`LA`, `REG`, ...). */
  geographicLevels: string[];
  /** Locations chosen, at the levels chosen; a chosen level without locations means all of its locations. */
  locations: LocationKey[];
  /** Per filter id, the option ids chosen; a filter without options is not restricted. */
  filters: Record<string, string[]>;
  indicators: string[];
  /** One sort, `field|Asc` or `field|Desc` (timePeriod, geographicLevel, location|LA, filter|id, indicator|id). */
  sort?: string;
  page: number;
  pageSize: number;
  /** The cross-tab's layout when the user moved its header groups (the default layout otherwise). */
  layout?: TableLayout;
  /** The builder step open while choosing; absent once the results are shown. */
  step?: StepNumber;
  /** The chart's settings the user changed (the chart's defaults otherwise). */
  chart?: ChartSettings;
}

/**
 * The chart's settings as the permalink keeps them: `chartType` (`line` or `bar`), `chartIndicator` (an indicator
 * id), `chartPeriod` (the bars' period, `2021/2022|AY`), `chartLines` (`highlight` or `multiples`, for more than 6
 * lines) and `chartHighlight` (the highlighted series' key). Values the data set does not have are ignored by the
 * chart.
 */
export interface ChartSettings {
  type?: 'line' | 'bar';
  indicator?: string;
  period?: PeriodKey;
  lines?: 'highlight' | 'multiples';
  highlight?: string;
}

export const DEFAULT_PAGE_SIZE = 20;
export const PAGE_SIZES = [10, 20, 50, 100];

export function emptyState(): QueryState {
  return {
    timePeriods: { mode: 'list', items: [] },
    geographicLevels: [],
    locations: [],
    filters: {},
    indicators: [],
    page: 1,
    pageSize: DEFAULT_PAGE_SIZE,
  };
}

const list = (value: string | null): string[] =>
  value
    ? value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '')
    : [];

const positiveInt = (value: string | null, fallback: number, max: number): number => {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 && n <= max ? n : fallback;
};

/** The state a permalink's query string describes (unknown keys are ignored). */
export function parseState(search: string | URLSearchParams): QueryState {
  const params = typeof search === 'string' ? new URLSearchParams(search) : search;
  const state = emptyState();
  const version = params.get('dataSetVersion');
  if (version) state.dataSetVersion = version;
  const from = params.get('timePeriods.gte');
  const to = params.get('timePeriods.lte');
  if (from || to) state.timePeriods = { mode: 'range', from: from || undefined, to: to || undefined };
  else state.timePeriods = { mode: 'list', items: list(params.get('timePeriods.in')) };
  state.geographicLevels = list(params.get('geographicLevels.in'));
  state.locations = list(params.get('locations.in'));
  for (const [key, value] of params) {
    if (key.startsWith('filters.') && key !== 'filters.') {
      const options = list(value);
      if (options.length > 0) state.filters[key.slice('filters.'.length)] = options;
    }
  }
  state.indicators = list(params.get('indicators'));
  const sort = params.get('sorts');
  if (sort && /^[^|]+(\|[^|]+)?\|(Asc|Desc)$/.test(sort)) state.sort = sort;
  state.page = positiveInt(params.get('page'), 1, 1_000_000);
  state.pageSize = positiveInt(params.get('pageSize'), DEFAULT_PAGE_SIZE, 10000);
  const layout = parseLayout(params);
  if (layout) state.layout = layout;
  const step = parseStep(params.get('step'));
  if (step) state.step = step;
  const chart: ChartSettings = {};
  const type = params.get('chartType');
  if (type === 'line' || type === 'bar') chart.type = type;
  const lines = params.get('chartLines');
  if (lines === 'highlight' || lines === 'multiples') chart.lines = lines;
  for (const [key, name] of [
    ['indicator', 'chartIndicator'],
    ['period', 'chartPeriod'],
    ['highlight', 'chartHighlight'],
  ] as const) {
    const value = params.get(name);
    if (value) chart[key] = value;
  }
  if (Object.keys(chart).length > 0) state.chart = chart;
  return state;
}

/** Encodes a query-string value, keeping the API's separators (`|`, `,`, `/`, `:`) readable. */
export function encodeValue(value: string): string {
  return encodeURIComponent(value)
    .replace(/%3A/gi, ':')
    .replace(/%7C/gi, '|')
    .replace(/%2C/gi, ',')
    .replace(/%2F/gi, '/');
}

function toQueryString(pairs: Array<[string, string]>): string {
  return pairs.map(([k, v]) => `${k}=${encodeValue(v)}`).join('&');
}

/** The permalink's query string (without `?`): the same names as the API's GET parameters where they exist. */
export function stateToSearch(state: QueryState): string {
  const pairs: Array<[string, string]> = [];
  if (state.dataSetVersion) pairs.push(['dataSetVersion', state.dataSetVersion]);
  if (state.timePeriods.mode === 'range') {
    if (state.timePeriods.from) pairs.push(['timePeriods.gte', state.timePeriods.from]);
    if (state.timePeriods.to) pairs.push(['timePeriods.lte', state.timePeriods.to]);
  } else if (state.timePeriods.items.length > 0) {
    pairs.push(['timePeriods.in', state.timePeriods.items.join(',')]);
  }
  if (state.geographicLevels.length > 0) pairs.push(['geographicLevels.in', state.geographicLevels.join(',')]);
  if (state.locations.length > 0) pairs.push(['locations.in', state.locations.join(',')]);
  for (const [filterId, options] of Object.entries(state.filters)) {
    if (options.length > 0) pairs.push([`filters.${filterId}`, options.join(',')]);
  }
  if (state.indicators.length > 0) pairs.push(['indicators', state.indicators.join(',')]);
  if (state.sort) pairs.push(['sorts', state.sort]);
  if (state.page !== 1) pairs.push(['page', String(state.page)]);
  if (state.pageSize !== DEFAULT_PAGE_SIZE) pairs.push(['pageSize', String(state.pageSize)]);
  pairs.push(...layoutParams(state.layout));
  const chart = state.chart ?? {};
  if (chart.type) pairs.push(['chartType', chart.type]);
  if (chart.indicator) pairs.push(['chartIndicator', chart.indicator]);
  if (chart.period) pairs.push(['chartPeriod', chart.period]);
  if (chart.lines) pairs.push(['chartLines', chart.lines]);
  if (chart.highlight) pairs.push(['chartHighlight', chart.highlight]);
  if (state.step) pairs.push(['step', String(state.step)]);
  return toQueryString(pairs);
}

export function periodFromKey(key: PeriodKey): { period: string; code: string } {
  const split = key.lastIndexOf('|');
  return { period: key.slice(0, split), code: key.slice(split + 1) };
}

export function periodKey(t: { period: string; code: string }): PeriodKey {
  return `${t.period}|${t.code}`;
}

export function locationFromKey(key: LocationKey): { level: string; id: string } {
  const [level = '', , id = ''] = key.split('|');
  return { level, id };
}

export function locationKey(level: string, id: string): LocationKey {
  return `${level}|id|${id}`;
}

/** Levels chosen with specific locations, and levels chosen whole. */
function levelSplit(state: QueryState): { withLocations: string[]; whole: string[] } {
  const levelsWithLocations = new Set(state.locations.map((l) => locationFromKey(l).level));
  const withLocations = state.geographicLevels.filter((l) => levelsWithLocations.has(l));
  const whole = state.geographicLevels.filter((l) => !levelsWithLocations.has(l));
  return { withLocations, whole };
}

/** Only the locations whose level is chosen count. */
function chosenLocations(state: QueryState): LocationKey[] {
  return state.locations.filter((l) => state.geographicLevels.includes(locationFromKey(l).level));
}

type Facets = Record<string, unknown>;

/** The criteria of the POST body, or undefined when nothing is chosen (every row). */
export function criteria(state: QueryState, extraFilters: Record<string, string[]> = {}): unknown {
  const facets: Facets = {};
  const tp = state.timePeriods;
  if (tp.mode === 'range') {
    const range: Record<string, unknown> = {};
    if (tp.from) range.gte = periodFromKey(tp.from);
    if (tp.to) range.lte = periodFromKey(tp.to);
    if (Object.keys(range).length > 0) facets.timePeriods = range;
  } else if (tp.items.length > 0) {
    facets.timePeriods = { in: tp.items.map(periodFromKey) };
  }
  const parts: unknown[] = [];
  const locations = chosenLocations(state);
  const { withLocations, whole } = levelSplit({ ...state, locations });
  if (whole.length > 0 && withLocations.length > 0) {
    // Some levels whole, others narrowed to some locations: either matches.
    parts.push({
      or: [
        { geographicLevels: { in: whole } },
        { geographicLevels: { in: withLocations }, locations: { in: locations.map(locationFromKey) } },
      ],
    });
  } else if (state.geographicLevels.length > 0) {
    facets.geographicLevels = { in: state.geographicLevels };
    if (locations.length > 0) facets.locations = { in: locations.map(locationFromKey) };
  }
  const filters = Object.entries({ ...state.filters, ...extraFilters }).filter(([, options]) => options.length > 0);
  if (filters.length === 1) facets.filters = { in: filters[0]![1] };
  else for (const [, options] of filters) parts.push({ filters: { in: options } });
  if (parts.length === 0) return Object.keys(facets).length > 0 ? facets : undefined;
  return { and: Object.keys(facets).length > 0 ? [facets, ...parts] : parts };
}

export function sortOf(state: QueryState): Array<{ field: string; direction: 'Asc' | 'Desc' }> | undefined {
  if (!state.sort) return undefined;
  const split = state.sort.lastIndexOf('|');
  return [{ field: state.sort.slice(0, split), direction: state.sort.slice(split + 1) as 'Asc' | 'Desc' }];
}

/** The POST body of the query (page and page size of the table unless given). */
export function postBody(
  state: QueryState,
  paging: { page?: number; pageSize?: number } = {},
  extraFilters?: Record<string, string[]>,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const c = criteria(state, extraFilters);
  if (c !== undefined) body.criteria = c;
  if (state.indicators.length > 0) body.indicators = state.indicators;
  const sorts = sortOf(state);
  if (sorts) body.sorts = sorts;
  body.page = paging.page ?? state.page;
  body.pageSize = paging.pageSize ?? state.pageSize;
  return body;
}

/** The path of the POST (and GET) query, with the pinned version when there is one. */
export function queryPath(dataSetId: string, state: QueryState): string {
  const version = state.dataSetVersion ? `?dataSetVersion=${encodeValue(state.dataSetVersion)}` : '';
  return `/v1/data-sets/${encodeURIComponent(dataSetId)}/query${version}`;
}

/**
 * The GET URL of the same query, or the reason there is none: GET ANDs different facets but has one list per
 * comparator, so options of two filters (or whole levels beside narrowed ones) need the POST body.
 */
export function getUrl(
  origin: string,
  dataSetId: string,
  state: QueryState,
  paging: { page?: number; pageSize?: number } = {},
): { url?: string; reason?: string } {
  const filters = Object.entries(state.filters).filter(([, options]) => options.length > 0);
  if (filters.length > 1)
    return { reason: 'Options of more than one filter must all match, which only the POST body can say.' };
  const locations = chosenLocations(state);
  const { withLocations, whole } = levelSplit({ ...state, locations });
  if (whole.length > 0 && withLocations.length > 0) {
    return {
      reason:
        'Some geographic levels are chosen whole and others narrowed to some locations, which only the POST body can say.',
    };
  }
  const pairs: Array<[string, string]> = [];
  if (state.dataSetVersion) pairs.push(['dataSetVersion', state.dataSetVersion]);
  const tp = state.timePeriods;
  if (tp.mode === 'range') {
    if (tp.from) pairs.push(['timePeriods.gte', tp.from]);
    if (tp.to) pairs.push(['timePeriods.lte', tp.to]);
  } else if (tp.items.length > 0) pairs.push(['timePeriods.in', tp.items.join(',')]);
  if (state.geographicLevels.length > 0) pairs.push(['geographicLevels.in', state.geographicLevels.join(',')]);
  if (locations.length > 0) pairs.push(['locations.in', locations.join(',')]);
  if (filters.length === 1) pairs.push(['filters.in', filters[0]![1].join(',')]);
  if (state.indicators.length > 0) pairs.push(['indicators', state.indicators.join(',')]);
  if (state.sort) pairs.push(['sorts', state.sort]);
  if (paging.page !== undefined) pairs.push(['page', String(paging.page)]);
  if (paging.pageSize !== undefined) pairs.push(['pageSize', String(paging.pageSize)]);
  const query = toQueryString(pairs);
  return { url: `${origin}/v1/data-sets/${encodeURIComponent(dataSetId)}/query${query ? `?${query}` : ''}` };
}
