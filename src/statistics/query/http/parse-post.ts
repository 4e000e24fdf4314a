import { ValidationError } from '../../../errors.js';
import {
  DEFAULT_PAGE_SIZE,
  MAX_CRITERIA_CONDITIONS,
  MAX_CRITERIA_DEPTH,
  type Criteria,
  type Facets,
  type Located,
  type LocationRef,
  type QueryRequest,
  type SortRequest,
  type TimePeriodRef,
} from '../engine/index.js';
import {
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

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function join(path: string, member: string): string {
  return path ? `${path}.${member}` : member;
}

/** Every member name of a query body, by its lower-case form. */
const MEMBER_BY_LOWER_NAME = new Map(
  [
    'criteria',
    'indicators',
    'sorts',
    'debug',
    'labels',
    'page',
    'pageSize',
    'and',
    'or',
    'not',
    'filters',
    'geographicLevels',
    'locations',
    'timePeriods',
    'eq',
    'notEq',
    'in',
    'notIn',
    'gt',
    'gte',
    'lt',
    'lte',
    'field',
    'direction',
    'level',
    'id',
    'code',
    'oldCode',
    'urn',
    'laEstab',
    'ukprn',
    'period',
  ].map((name) => [name.toLowerCase(), name]),
);

/**
 * The body with its member names as documented, matched case-insensitively (`"Criteria"`, `"ID"`, `"Level"`), as
 * the reference's JSON reader matches them. A name that matches none stays as it is (and is reported unknown); of two
 * members that differ only in case, the later wins.
 */
export function canonicalMemberNames(value: unknown, depth = 0): unknown {
  // Deeper than any valid body can be (criteria nest at most MAX_CRITERIA_DEPTH): left as it is, and refused by
  // the depth check of the criteria, without recursing further here.
  if (depth > 3 * MAX_CRITERIA_DEPTH) return value;
  // Copied only where a name changes, so a large body that is already canonical costs no second copy.
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item = canonicalMemberNames(value[i], depth + 1);
      if (item !== value[i]) (copy ??= value.slice())[i] = item;
    }
    return copy ?? value;
  }
  if (!isObject(value)) return value;
  let changed = false;
  const result: JsonObject = {};
  for (const key in value) {
    const name = MEMBER_BY_LOWER_NAME.get(key.toLowerCase()) ?? key;
    const member = canonicalMemberNames(value[key], depth + 1) as Json;
    if (name !== key || member !== value[key]) changed = true;
    result[name] = member;
  }
  return changed ? result : value;
}

/** `"page": "2"`: the reference reads numbers from JSON strings too (its web defaults). */
function integerMember(value: Json): Json {
  return typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
}

/**
 * Parses a POST query body, its member names already canonical (`canonicalMemberNames`), into a QueryRequest. Shape problems (wrong JSON types, unknown or missing
 * members) are binding errors, reported alone; otherwise all validation errors are reported together. The criteria
 * tree is bounded in depth and size so a hostile body cannot exhaust the stack or build a runaway query.
 */
export function parsePostBody(body: unknown): QueryRequest {
  return parsePostQuery(body).query;
}

/** A POST query body as the query (`parsePostBody`) and `labels` (the labels of the page's ids beside the results). */
export function parsePostQuery(body: unknown): { query: QueryRequest; labels: boolean } {
  const binding = new Problems();
  const problems = new Problems();
  const request: QueryRequest = { debug: false, page: 1, pageSize: DEFAULT_PAGE_SIZE };
  let labels = false;
  if (body === null || body === undefined) return { query: request, labels };
  if (!isObject(body))
    throw new ValidationError([
      {
        path: '',
        code: 'InvalidValue',
        message: 'Must be a valid value. Check that the type and format are correct.',
        detail: { value: null },
      },
    ]);

  const parser = new CriteriaParser(binding, problems);
  for (const [key, member] of Object.entries(body)) {
    const value = key === 'page' || key === 'pageSize' ? integerMember(member) : member;
    switch (key) {
      case 'criteria':
        if (value !== null) request.criteria = parser.criteria(value, 'criteria', 1);
        break;
      case 'indicators':
        if (value === null) break;
        if (!Array.isArray(value)) {
          binding.add(key, 'InvalidValue');
          break;
        }
        request.indicators = [];
        value.forEach((item, i) => {
          if (item !== null && typeof item !== 'string') binding.add(`indicators[${i}]`, 'InvalidValue');
          else {
            checkId(problems, `indicators[${i}]`, item, INDICATOR_MAX_LENGTH);
            if (item !== null) request.indicators!.push(item);
          }
        });
        break;
      case 'sorts':
        if (value === null) break;
        request.sorts = parseSorts(binding, problems, value);
        break;
      case 'debug':
        if (value === null) break;
        if (typeof value !== 'boolean') binding.add(key, 'InvalidValue');
        else request.debug = value;
        break;
      case 'labels':
        if (value === null) break;
        if (typeof value !== 'boolean') binding.add(key, 'InvalidValue');
        else labels = value;
        break;
      case 'page':
      case 'pageSize':
        if (value === null) break;
        if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 2147483647)
          binding.add(key, 'InvalidValue');
        else request[key] = value;
        break;
      default:
        binding.add(key, 'UnknownField');
    }
  }
  if (binding.any) throw binding.error();
  if (parser.conditions > MAX_CRITERIA_CONDITIONS) {
    problems.custom(
      'criteria',
      'CriteriaMaxConditions',
      ValidationMessages.criteriaMaxConditions(MAX_CRITERIA_CONDITIONS),
      {
        maxConditions: MAX_CRITERIA_CONDITIONS,
        conditions: parser.conditions,
      },
    );
  }
  checkPaging(problems, request.page, request.pageSize);
  if (problems.any) throw problems.error();
  return { query: request, labels };
}

function parseSorts(binding: Problems, problems: Problems, value: Json): SortRequest[] | undefined {
  if (!Array.isArray(value)) {
    binding.add('sorts', 'InvalidValue');
    return undefined;
  }
  if (value.length === 0) problems.notEmpty('sorts', []);
  const sorts: SortRequest[] = [];
  value.forEach((item, i) => {
    const path = `sorts[${i}]`;
    if (item === null) {
      problems.add(path, 'NotNull', { value: null });
      return;
    }
    if (!isObject(item)) {
      binding.add(path, 'InvalidValue');
      return;
    }
    for (const key of Object.keys(item))
      if (key !== 'field' && key !== 'direction') binding.add(`${path}.${key}`, 'UnknownField');
    const { field, direction } = item;
    if (typeof field !== 'string') binding.add(`${path}.field`, 'InvalidValue');
    if (typeof direction !== 'string') binding.add(`${path}.direction`, 'InvalidValue');
    if (typeof field !== 'string' || typeof direction !== 'string') return;
    let valid = true;
    if (isBlank(field)) {
      problems.notEmpty(`${path}.field`, field);
      valid = false;
    } else if (field.length > SORT_FIELD_MAX_LENGTH) {
      problems.maximumLength(`${path}.field`, field, SORT_FIELD_MAX_LENGTH);
      valid = false;
    }
    if (direction !== 'Asc' && direction !== 'Desc') {
      problems.add(`${path}.direction`, 'AllowedValue', { value: direction, allowed: [...SORT_DIRECTIONS] });
      valid = false;
    }
    if (valid) sorts.push({ field, direction: direction as 'Asc' | 'Desc', shown: { field, direction } });
  });
  return sorts;
}

const FACET_COMPARATORS = ['eq', 'notEq', 'in', 'notIn'] as const;
const TIME_PERIOD_COMPARATORS = ['eq', 'notEq', 'in', 'notIn', 'gt', 'gte', 'lt', 'lte'] as const;

class CriteriaParser {
  /** Criteria nodes plus comparators seen, bounded by MAX_CRITERIA_CONDITIONS. */
  conditions = 0;
  private depthReported = false;

  constructor(
    private readonly binding: Problems,
    private readonly problems: Problems,
  ) {}

  criteria(value: Json, path: string, depth: number): Criteria | undefined {
    if (depth > MAX_CRITERIA_DEPTH) {
      if (!this.depthReported) {
        this.problems.custom(path, 'CriteriaMaxDepth', ValidationMessages.criteriaMaxDepth(MAX_CRITERIA_DEPTH), {
          maxDepth: MAX_CRITERIA_DEPTH,
        });
      }
      this.depthReported = true;
      return undefined;
    }
    if (!isObject(value)) {
      this.binding.add(path, 'InvalidValue');
      return undefined;
    }
    this.conditions++;
    // The discriminator is which member is present: and, then or, then not, else a facets object.
    for (const kind of ['and', 'or'] as const) {
      if (!(kind in value)) continue;
      this.unknownMembers(value, [kind], path);
      const list = value[kind];
      const listPath = join(path, kind);
      if (list === null || (Array.isArray(list) && list.length === 0)) {
        this.problems.notEmpty(listPath, list);
        return undefined;
      }
      if (!Array.isArray(list)) {
        this.binding.add(listPath, 'InvalidValue');
        return undefined;
      }
      const items: Criteria[] = [];
      list.forEach((item, i) => {
        if (item === null) this.problems.add(`${listPath}[${i}]`, 'NotNull', { value: null });
        else {
          const child = this.criteria(item, `${listPath}[${i}]`, depth + 1);
          if (child) items.push(child);
        }
      });
      return { kind, items };
    }
    if ('not' in value) {
      this.unknownMembers(value, ['not'], path);
      const child = value.not;
      if (child === null) {
        this.problems.add(join(path, 'not'), 'NotNull', { value: null });
        return undefined;
      }
      const item = this.criteria(child, join(path, 'not'), depth + 1);
      return item ? { kind: 'not', item } : undefined;
    }
    return { kind: 'facets', facets: this.facets(value, path) };
  }

  private unknownMembers(value: JsonObject, allowed: readonly string[], path: string): void {
    for (const key of Object.keys(value)) if (!allowed.includes(key)) this.binding.add(join(path, key), 'UnknownField');
  }

  private facets(value: JsonObject, path: string): Facets {
    this.unknownMembers(value, ['filters', 'geographicLevels', 'locations', 'timePeriods'], path);
    const facets: Facets = {};
    const filters = this.comparators(value.filters, join(path, 'filters'), FACET_COMPARATORS, (item, p) =>
      this.filterOption(item, p),
    );
    if (filters) facets.filters = filters;
    const levels = this.comparators(
      value.geographicLevels,
      join(path, 'geographicLevels'),
      FACET_COMPARATORS,
      (item, p) => this.level(item, p),
    );
    if (levels) facets.geographicLevels = levels;
    const locations = this.comparators(value.locations, join(path, 'locations'), FACET_COMPARATORS, (item, p) =>
      this.location(item, p),
    );
    if (locations) facets.locations = locations;
    const timePeriods = this.comparators(
      value.timePeriods,
      join(path, 'timePeriods'),
      TIME_PERIOD_COMPARATORS,
      (item, p) => this.timePeriod(item, p),
    );
    if (timePeriods) facets.timePeriods = timePeriods;
    return facets;
  }

  private comparators<T>(
    value: Json | undefined,
    path: string,
    names: readonly string[],
    item: (value: Json, path: string) => Located<T> | undefined,
  ): ({ path: string } & Record<string, unknown>) | undefined {
    if (value === undefined || value === null) return undefined;
    if (!isObject(value)) {
      this.binding.add(path, 'InvalidValue');
      return undefined;
    }
    this.unknownMembers(value, names, path);
    const set: { path: string } & Record<string, unknown> = { path };
    for (const name of names) {
      const comparator = value[name];
      if (comparator === undefined || comparator === null) continue;
      this.conditions++;
      const comparatorPath = `${path}.${name}`;
      if (name === 'in' || name === 'notIn') {
        if (!Array.isArray(comparator)) {
          this.binding.add(comparatorPath, 'InvalidValue');
          continue;
        }
        if (comparator.length === 0) this.problems.notEmpty(comparatorPath, []);
        set[name] = comparator.map((c, i) => item(c, `${comparatorPath}[${i}]`)).filter((c) => c !== undefined);
      } else {
        set[name] = item(comparator, comparatorPath);
      }
    }
    return set;
  }

  private filterOption(value: Json, path: string): Located<string> | undefined {
    if (typeof value !== 'string') {
      this.binding.add(path, 'InvalidValue');
      return undefined;
    }
    checkId(this.problems, path, value, FILTER_OPTION_MAX_LENGTH);
    return { value, shown: value };
  }

  private level(value: Json, path: string): Located<string> | undefined {
    if (typeof value !== 'string') {
      this.binding.add(path, 'InvalidValue');
      return undefined;
    }
    // POST strings are not trimmed: " LA" is not a level.
    if (!isGeographicLevel(value)) {
      this.problems.allowedLevel(path, value);
      return undefined;
    }
    return { value, shown: value };
  }

  private location(value: Json, path: string): Located<LocationRef> | undefined {
    if (!isObject(value) || typeof value.level !== 'string') {
      this.binding.add(isObject(value) ? `${path}.level` : path, 'InvalidValue');
      return undefined;
    }
    const level = value.level;
    const has = (member: string) => value[member] !== undefined;
    // The reference's discrimination: level-specific properties first, then a generic code, else an id.
    let property: LocationProperty;
    if (level === 'LA' && has('code')) property = 'code';
    else if (level === 'LA' && has('oldCode')) property = 'oldCode';
    else if (level === 'SCH' && has('laEstab')) property = 'laEstab';
    else if (level === 'SCH' && has('urn')) property = 'urn';
    else if (level === 'PROV' && has('ukprn')) property = 'ukprn';
    else if (has('code')) property = 'code';
    else property = 'id';
    this.unknownMembers(value, ['level', property], path);
    const identifier = value[property];
    if (typeof identifier !== 'string') {
      this.binding.add(`${path}.${property}`, 'InvalidValue');
      return undefined;
    }
    let valid = true;
    if (isBlank(identifier)) {
      this.problems.notEmpty(`${path}.${property}`, identifier);
      valid = false;
    } else if (identifier.length > LOCATION_PROPERTY_MAX_LENGTH[property]) {
      this.problems.maximumLength(`${path}.${property}`, identifier, LOCATION_PROPERTY_MAX_LENGTH[property]);
      valid = false;
    }
    if (!isGeographicLevel(level)) {
      this.problems.allowedLevel(`${path}.level`, level);
      valid = false;
    }
    return valid
      ? { value: { level, property, value: identifier }, shown: { level, [property]: identifier } }
      : undefined;
  }

  private timePeriod(value: Json, path: string): Located<TimePeriodRef> | undefined {
    if (!isObject(value)) {
      this.binding.add(path, 'InvalidValue');
      return undefined;
    }
    this.unknownMembers(value, ['period', 'code'], path);
    const { period, code } = value;
    if (typeof period !== 'string') this.binding.add(`${path}.period`, 'InvalidValue');
    if (typeof code !== 'string') this.binding.add(`${path}.code`, 'InvalidValue');
    if (typeof period !== 'string' || typeof code !== 'string') return undefined;
    const problem = validateTimePeriod(period, code);
    if (problem) {
      const { code: errorCode, property, ...rest } = problem;
      const value = property === 'code' ? code : period;
      this.problems.custom(`${path}.${property}`, errorCode, ValidationMessages[errorCode], { value, ...rest });
      return undefined;
    }
    return { value: { period: normaliseTimePeriod(period, code), code }, shown: { period, code } };
  }
}
