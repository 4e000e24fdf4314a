import {
  DEFAULT_PAGE_SIZE,
  type ComparatorSet,
  type Facets,
  type Located,
  type LocationRef,
  type QueryRequest,
  type SortRequest,
  type TimePeriodComparatorSet,
  type TimePeriodRef,
} from '../engine/index.js';
import {
  allowedLocationProperties,
  GEOGRAPHIC_LEVEL_CODES,
  isGeographicLevel,
  LOCATION_PROPERTY_MAX_LENGTH,
  type LocationProperty,
} from '../../standard/geographic-levels.js';
import {
  checkId,
  checkPaging,
  FILTER_OPTION_MAX_LENGTH,
  INDICATOR_MAX_LENGTH,
  isBlank,
  Problems,
  SORT_DIRECTIONS,
  SORT_FIELD_MAX_LENGTH,
} from './problems.js';
import { normaliseTimePeriod, validateTimePeriod } from '../../standard/time-periods.js';
import { ValidationMessages } from '../../errors.js';

export type RawQuery = Record<string, string | string[] | undefined>;

const FACETS = ['filters', 'geographicLevels', 'locations', 'timePeriods'] as const;
type FacetName = (typeof FACETS)[number];
const COMPARATORS: Record<FacetName, readonly string[]> = {
  filters: ['eq', 'notEq', 'in', 'notIn'],
  geographicLevels: ['eq', 'notEq', 'in', 'notIn'],
  locations: ['eq', 'notEq', 'in', 'notIn'],
  timePeriods: ['eq', 'notEq', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte'],
};
const LIST_COMPARATORS = new Set(['in', 'notIn']);

const LIST_PARAMS = new Set<string>(['indicators', 'sorts']);
const SCALAR_PARAMS = new Set<string>(['dataSetVersion', 'debug', 'labels', 'page', 'pageSize']);
for (const facet of FACETS) {
  for (const comparator of COMPARATORS[facet]) {
    (LIST_COMPARATORS.has(comparator) ? LIST_PARAMS : SCALAR_PARAMS).add(`${facet}.${comparator}`);
  }
}

/** Parameter names by their lower-case form: names are matched case-insensitively, as ASP.NET binds them. */
const PARAM_BY_LOWER_NAME = new Map([...LIST_PARAMS, ...SCALAR_PARAMS].map((name) => [name.toLowerCase(), name]));

export interface ParsedGetQuery {
  dataSetVersion?: string;
  request: QueryRequest;
  /** `labels=true`: the labels of the page's ids beside the results (labels.ts); a JSON page only. */
  labels: boolean;
  /**
   * The parameters as bound, under their documented names (lists split, values trimmed, numbers and booleans
   * typed): what the route's declared querystring schema describes.
   */
  parameters: Record<string, string | string[] | number | boolean>;
}

/** The query string's keys bound to the declared parameters: lists (with their indexes and order) and scalars. */
interface BoundKeys {
  lists: Map<string, Array<{ index: number; order: number; values: string[] }>>;
  scalars: Map<string, string>;
}

/** Binds every key to a declared parameter; unknown keys and repeated scalars are binding problems. */
function bindKeys(query: RawQuery, binding: Problems): BoundKeys {
  const lists: BoundKeys['lists'] = new Map();
  const scalars = new Map<string, string>();
  let order = 0;

  for (const [key, raw] of Object.entries(query)) {
    if (raw === undefined) continue;
    const values = Array.isArray(raw) ? raw : [raw];
    const indexed = /^(.+)\[(\d+)\]$/.exec(key);
    const given = indexed ? indexed[1]! : key;
    const name = PARAM_BY_LOWER_NAME.get(given.toLowerCase()) ?? given;
    if (LIST_PARAMS.has(name)) {
      const entries = lists.get(name) ?? [];
      entries.push({ index: indexed ? Number(indexed[2]) : -1, order: order++, values });
      lists.set(name, entries);
    } else if (!indexed && SCALAR_PARAMS.has(name)) {
      if (values.length > 1 || scalars.has(name)) binding.add(key, 'InvalidValue', { value: values });
      // A version selector is not trimmed: ` 1.0` is not a version (404), as anywhere else.
      else scalars.set(name, name === 'dataSetVersion' ? values[0]! : values[0]!.trim());
    } else {
      binding.add(key, 'UnknownField');
    }
  }
  return { lists, scalars };
}

/** A list parameter's values in index, then request order; undefined when not given. */
function listValues({ lists }: BoundKeys, name: string): Array<string | null> | undefined {
  const entries = lists.get(name);
  if (!entries) return undefined;
  entries.sort((a, b) => a.index - b.index || a.order - b.order);
  let values = entries.flatMap((e) => e.values);
  // Comma splitting applies only when some value has a comma after its first character; empty segments go.
  if (values.some((v) => v.indexOf(',') > 0)) values = values.flatMap((v) => v.split(',')).filter((v) => v !== '');
  return values.map((v) => (v.trim() === '' ? null : v.trim()));
}

/** `page`, `pageSize`, `debug` and `labels`: integers and booleans that do not parse are binding problems. */
function bindScalars(
  { scalars }: BoundKeys,
  binding: Problems,
): { page: number; pageSize: number; debug: boolean; labels: boolean } {
  const parseInteger = (name: string, fallback: number): number => {
    const value = scalars.get(name);
    if (value === undefined || value === '') return fallback;
    if (!/^[+-]?\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Math.abs(Number(value)) > 2147483647) {
      binding.add(name, 'InvalidValue', { value });
      return fallback;
    }
    return Number(value);
  };
  const page = parseInteger('page', 1);
  const pageSize = parseInteger('pageSize', DEFAULT_PAGE_SIZE);
  const parseBoolean = (name: string): boolean => {
    const value = scalars.get(name);
    if (value === undefined || value === '') return false;
    if (/^true$/i.test(value)) return true;
    if (!/^false$/i.test(value)) binding.add(name, 'InvalidValue', { value });
    return false;
  };
  return { page, pageSize, debug: parseBoolean('debug'), labels: parseBoolean('labels') };
}

/** The facet criteria (`filters.eq`, `timePeriods.gte`, …), each value checked. */
function parseFacets(bound: BoundKeys, problems: Problems): Facets {
  const facets: Facets = {};
  for (const facet of FACETS) {
    const set: Record<string, unknown> = { path: facet };
    let present = false;
    for (const comparator of COMPARATORS[facet]) {
      const name = `${facet}.${comparator}`;
      if (LIST_COMPARATORS.has(comparator)) {
        const values = listValues(bound, name);
        if (values === undefined) continue;
        present = true;
        if (values.length === 0) problems.notEmpty(name, values);
        set[comparator] = values.map((v, i) => parseFacetValue(problems, facet, `${name}[${i}]`, v)).filter(isDefined);
      } else {
        const value = bound.scalars.get(name);
        if (value === undefined) continue;
        present = true;
        set[comparator] = parseFacetValue(problems, facet, name, value);
      }
    }
    if (present) (facets as Record<string, unknown>)[facet] = set;
  }
  return facets;
}

/**
 * Parses the GET query string into a QueryRequest: list parameters as repeated keys, indexed keys
 * (`indicators[0]`) or comma-separated values; strings trimmed; blank list elements become null.
 * Unknown keys and unparseable values are reported first and alone (binding errors), as the reference does;
 * otherwise every validation error of the request is reported together.
 */
export function parseGetQuery(query: RawQuery): ParsedGetQuery {
  const binding = new Problems();
  const bound = bindKeys(query, binding);
  const { scalars, lists } = bound;
  const { page, pageSize, debug, labels } = bindScalars(bound, binding);
  if (binding.any) throw binding.error();

  const problems = new Problems();
  const facets = parseFacets(bound, problems);

  const indicatorValues = listValues(bound, 'indicators');
  let indicators: string[] | undefined;
  if (indicatorValues !== undefined) {
    if (indicatorValues.length === 0) problems.notEmpty('indicators', indicatorValues);
    indicatorValues.forEach((v, i) => checkId(problems, `indicators[${i}]`, v, INDICATOR_MAX_LENGTH));
    indicators = indicatorValues.filter(isDefined);
  }

  const sortValues = listValues(bound, 'sorts');
  let sorts: SortRequest[] | undefined;
  if (sortValues !== undefined) {
    if (sortValues.length === 0) problems.notEmpty('sorts', sortValues);
    sorts = sortValues.map((v, i) => parseSort(problems, `sorts[${i}]`, v)).filter(isDefined);
  }

  checkPaging(problems, page, pageSize);
  if (problems.any) throw problems.error();

  const parameters: ParsedGetQuery['parameters'] = {};
  for (const [name, value] of scalars) if (value !== '') parameters[name] = value;
  for (const name of lists.keys()) parameters[name] = listValues(bound, name)!.filter(isDefined);
  if (scalars.get('page')) parameters.page = page;
  if (scalars.get('pageSize')) parameters.pageSize = pageSize;
  if (scalars.get('debug')) parameters.debug = debug;
  if (scalars.get('labels')) parameters.labels = labels;

  const hasFacets = Object.keys(facets).length > 0;
  return {
    parameters,
    labels,
    dataSetVersion: scalars.get('dataSetVersion')?.trim() ? scalars.get('dataSetVersion') : undefined,
    request: {
      criteria: hasFacets ? { kind: 'facets', facets } : undefined,
      indicators,
      sorts,
      debug,
      page,
      pageSize,
    },
  };
}

function isDefined<T>(value: T | undefined | null): value is T {
  return value !== undefined && value !== null;
}

function parseFacetValue(
  problems: Problems,
  facet: FacetName,
  path: string,
  value: string | null,
): Located<unknown> | undefined {
  switch (facet) {
    case 'filters':
      checkId(problems, path, value, FILTER_OPTION_MAX_LENGTH);
      return value === null ? undefined : { value, shown: value };
    case 'geographicLevels':
      if (value === null || !isGeographicLevel(value)) {
        problems.allowedLevel(path, value);
        return undefined;
      }
      return { value, shown: value };
    case 'locations':
      return parseLocationString(problems, path, value);
    case 'timePeriods':
      return parseTimePeriodString(problems, path, value);
  }
}

/** `{level}|{property}|{value}`, validated stage by stage, stopping at the first failure. */
export function parseLocationString(
  problems: Problems,
  path: string,
  value: string | null,
): Located<LocationRef> | undefined {
  if (isBlank(value)) {
    problems.notEmpty(path, value);
    return undefined;
  }
  const text = value!;
  if (!/^[^|]*\|[^|]+\|[^|]*$/.test(text)) {
    problems.add(path, 'LocationFormat', { value: text, expectedFormat: '{level}|{property}|{value}' });
    return undefined;
  }
  const [level, property, identifier] = text.split('|') as [string, string, string];
  if (!isGeographicLevel(level)) {
    problems.add(path, 'LocationAllowedLevel', { value: level, allowedLevels: GEOGRAPHIC_LEVEL_CODES });
    return undefined;
  }
  const allowed = allowedLocationProperties(level);
  if (!allowed.includes(property as LocationProperty)) {
    problems.add(path, 'LocationAllowedProperty', { value: property, allowedProperties: allowed });
    return undefined;
  }
  const maxLength = LOCATION_PROPERTY_MAX_LENGTH[property as LocationProperty];
  if (identifier.trim() === '') {
    problems.custom(path, 'LocationValueNotEmpty', `Must be a location with '${property}' that is not empty.`, {
      property,
      value: identifier,
    });
    return undefined;
  }
  if (identifier.length > maxLength) {
    problems.custom(
      path,
      'LocationValueMaxLength',
      `Must be a location with '${property}' that is ${maxLength} characters or fewer.`,
      {
        property,
        maxLength,
        totalLength: identifier.length,
        value: identifier,
      },
    );
    return undefined;
  }
  return { value: { level, property: property as LocationProperty, value: identifier }, shown: text };
}

/** `{period}|{code}`. */
export function parseTimePeriodString(
  problems: Problems,
  path: string,
  value: string | null,
): Located<TimePeriodRef> | undefined {
  if (isBlank(value)) {
    problems.notEmpty(path, value);
    return undefined;
  }
  const text = value!;
  if (!/^[^|]*\|[^|]*$/.test(text)) {
    problems.custom(path, 'TimePeriodFormat', ValidationMessages.TimePeriodFormat, {
      value: text,
      expectedFormat: '{period}|{code}',
    });
    return undefined;
  }
  const [period, code] = text.split('|') as [string, string];
  const problem = validateTimePeriod(period, code);
  if (problem) {
    const { code: errorCode, ...rest } = problem;
    // The detail's value is the part that failed (the code or the period), as the reference's validator reports it.
    problems.custom(path, errorCode, ValidationMessages[errorCode], {
      ...rest,
      value: problem.property === 'code' ? code : period,
    });
    return undefined;
  }
  return { value: { period: normaliseTimePeriod(period, code), code }, shown: text };
}

/** `{field}|{direction}`; the field may itself contain one `|` (`location|REG|Asc`). */
function parseSort(problems: Problems, path: string, value: string | null): SortRequest | undefined {
  if (isBlank(value)) {
    problems.notEmpty(path, value);
    return undefined;
  }
  const text = value!;
  if (!/^[^|]*(\|[^|]+)?\|[^|]*$/.test(text)) {
    problems.add(path, 'SortFormat', { value: text, expectedFormat: '{field}|{direction}' });
    return undefined;
  }
  const split = text.lastIndexOf('|');
  const field = text.slice(0, split);
  const direction = text.slice(split + 1);
  let valid = true;
  if (field.trim() === '') {
    problems.add(path, 'SortFieldNotEmpty', { property: 'field', value: field });
    valid = false;
  } else if (field.length > SORT_FIELD_MAX_LENGTH) {
    problems.custom(
      path,
      'SortFieldMaxLength',
      `Must be a sort with a field that is ${SORT_FIELD_MAX_LENGTH} characters or fewer.`,
      {
        property: 'field',
        maxLength: SORT_FIELD_MAX_LENGTH,
        totalLength: field.length,
        value: field,
      },
    );
    valid = false;
  }
  if (direction !== 'Asc' && direction !== 'Desc') {
    problems.add(path, 'SortDirection', { property: 'direction', value: direction, allowed: [...SORT_DIRECTIONS] });
    valid = false;
  }
  return valid ? { field, direction: direction as 'Asc' | 'Desc', shown: text } : undefined;
}

export type { ComparatorSet, TimePeriodComparatorSet };
