import { ErrorCollector, ValidationError, type FieldError } from '../../errors.js';
import { MAX_PAGE_SIZE } from './criteria.js';
import { GEOGRAPHIC_LEVEL_CODES } from './levels.js';

/** Error messages and detail shapes of shared by the GET and POST parsers. */
export const MESSAGES = {
  UnknownField: 'The field was not expected in the request and should be removed.',
  InvalidValue: 'Must be a valid value. Check that the type and format are correct.',
  NotEmpty: 'Must not be empty.',
  NotNull: 'Must not be empty.',
  AllowedValue: 'Must be one of the allowed values.',
  LocationFormat: 'Must be a location in the correct format.',
  LocationAllowedLevel: 'Must be a location with an allowed level.',
  LocationAllowedProperty: 'Must be a location with an allowed identifying property.',
  SortFormat: 'Must be a sort in the correct format.',
  SortFieldNotEmpty: 'Must be a sort with a field that is not empty.',
  SortDirection: 'Must be a sort in an allowed direction.',
  IndicatorsNotFound: 'One or more indicators could not be found.',
  SortFieldsNotFound: 'One or more sort fields could not be found.',
  CriteriaMaxDepth: 'Must not be nested more than 32 levels deep.',
  CriteriaMaxConditions: 'Must not contain more than 1000 conditions.',
  BodyTooLarge: 'The request body must not be larger than 1048576 bytes.',
} as const;

/**
 * Collects the problems of a request so they are reported together: the first MAX_REPORTED_ERRORS, the rest only
 * counted (no error object is made for them).
 */
export class Problems {
  private readonly collected = new ErrorCollector<FieldError>();

  get errors(): readonly FieldError[] {
    return this.collected.items;
  }

  add(path: string, code: keyof typeof MESSAGES, detail?: Record<string, unknown>): void {
    if (this.collected.full) this.collected.omitted++;
    else this.collected.push({ path, code, message: MESSAGES[code], ...(detail ? { detail } : {}) });
  }

  custom(path: string, code: string, message: string, detail: Record<string, unknown>): void {
    if (this.collected.full) this.collected.omitted++;
    else this.collected.push({ path, code, message, detail });
  }

  /** The 400 listing what was collected, with the count of the rest. */
  error(): ValidationError {
    return new ValidationError([...this.collected.items], undefined, undefined, this.collected.omitted);
  }

  notEmpty(path: string, value: unknown): void {
    this.add(path, 'NotEmpty', { value });
  }

  maximumLength(path: string, value: string, maxLength: number): void {
    this.custom(path, 'MaximumLength', `Must be ${maxLength} characters or fewer (was ${value.length}).`, {
      maxLength,
      totalLength: value.length,
      value,
    });
  }

  allowedLevel(path: string, value: unknown): void {
    this.add(path, 'AllowedValue', { value, allowed: GEOGRAPHIC_LEVEL_CODES });
  }

  get any(): boolean {
    return this.errors.length > 0;
  }
}

export const SORT_DIRECTIONS = ['Asc', 'Desc'] as const;
export const SORT_FIELD_MAX_LENGTH = 40;
export const INDICATOR_MAX_LENGTH = 40;
export const FILTER_OPTION_MAX_LENGTH = 10;

/** FluentValidation's NotEmpty: null, empty and whitespace-only strings are empty. */
export function isBlank(value: string | null | undefined): boolean {
  return value === null || value === undefined || value.trim() === '';
}

/** Validates one string id (filter option or indicator): NotEmpty, then MaximumLength. */
export function checkId(problems: Problems, path: string, value: string | null, maxLength: number): void {
  if (isBlank(value)) problems.notEmpty(path, value);
  else if (value!.length > maxLength) problems.maximumLength(path, value!, maxLength);
}

export function checkPaging(problems: Problems, page: number, pageSize: number, pagePath = 'page', pageSizePath = 'pageSize'): void {
  if (page < 1) {
    problems.custom(pagePath, 'GreaterThanOrEqual', "Must be greater than or equal to '1'.", { comparisonValue: 1, value: page });
  }
  if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    problems.custom(pageSizePath, 'InclusiveBetween', `Must be between 1 and ${MAX_PAGE_SIZE} (inclusive).`, { from: 1, to: MAX_PAGE_SIZE, value: pageSize });
  }
}
