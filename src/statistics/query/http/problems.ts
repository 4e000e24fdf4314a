import type { FieldError } from '../../../errors.js';
import { fieldErrors, ValidationMessages, type FixedMessageCode } from '../../errors.js';
import { MAX_PAGE_SIZE } from '../engine/criteria.js';
import { GEOGRAPHIC_LEVEL_CODES } from '../../standard/geographic-levels.js';

/** Collects every problem of a request so they are reported together. */
export class Problems {
  readonly errors: FieldError[] = [];

  add(path: string, code: FixedMessageCode, detail?: Record<string, unknown>): void {
    this.errors.push({ path, code, message: ValidationMessages[code], ...(detail ? { detail } : {}) });
  }

  custom(path: string, code: string, message: string, detail: Record<string, unknown>): void {
    this.errors.push({ path, code, message, detail });
  }

  notEmpty(path: string, value: unknown): void {
    this.add(path, 'NotEmpty', { value });
  }

  maximumLength(path: string, value: string, maxLength: number): void {
    this.errors.push(fieldErrors.maximumLength(path, value, maxLength));
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
  if (page < 1) problems.errors.push(fieldErrors.greaterThanOrEqual(pagePath, page, 1));
  if (pageSize < 1 || pageSize > MAX_PAGE_SIZE) problems.errors.push(fieldErrors.inclusiveBetween(pageSizePath, pageSize, 1, MAX_PAGE_SIZE));
}
