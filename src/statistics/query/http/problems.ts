import { ErrorCollector, ValidationError, type FieldError } from '../../../errors.js';
import { fieldErrors, ValidationMessages, type FixedMessageCode } from '../../errors.js';
import { MAX_PAGE_SIZE } from '../engine/index.js';
import { GEOGRAPHIC_LEVEL_CODES } from '../../standard/geographic-levels.js';

/**
 * Collects the problems of a request so they are reported together: the first MAX_REPORTED_ERRORS, the rest only
 * counted (no error object is made for them).
 */
export class Problems {
  private readonly collected = new ErrorCollector<FieldError>();

  get errors(): readonly FieldError[] {
    return this.collected.items;
  }

  add(path: string, code: FixedMessageCode, detail?: Record<string, unknown>): void {
    if (this.collected.full) this.collected.omitted++;
    else this.collected.push({ path, code, message: ValidationMessages[code], ...(detail ? { detail } : {}) });
  }

  custom(path: string, code: string, message: string, detail: Record<string, unknown>): void {
    this.push({ path, code, message, detail });
  }

  /** One error as it is, or only counted once the report is full. */
  push(error: FieldError): void {
    if (this.collected.full) this.collected.omitted++;
    else this.collected.push(error);
  }

  /** The 400 listing what was collected, with the count of the rest. */
  error(): ValidationError {
    return new ValidationError([...this.collected.items], undefined, undefined, this.collected.omitted);
  }

  notEmpty(path: string, value: unknown): void {
    this.add(path, 'NotEmpty', { value });
  }

  maximumLength(path: string, value: string, maxLength: number): void {
    this.push(fieldErrors.maximumLength(path, value, maxLength));
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

export function checkPaging(
  problems: Problems,
  page: number,
  pageSize: number,
  pagePath = 'page',
  pageSizePath = 'pageSize',
): void {
  if (page < 1) problems.push(fieldErrors.greaterThanOrEqual(pagePath, page, 1));
  if (pageSize < 1 || pageSize > MAX_PAGE_SIZE)
    problems.push(fieldErrors.inclusiveBetween(pageSizePath, pageSize, 1, MAX_PAGE_SIZE));
}
