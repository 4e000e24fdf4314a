/**
 * How the register reads the values of a request body, in one place: blank, codes, free text and dates, with the
 * real service's (Rails') meanings. Every module validates with these, so "blank" or "a date" mean one thing.
 */

/** Rails `blank?` for a scalar: undefined, null, or a string of white space only. */
export function isBlank(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/** `isBlank`, or an empty list (a list member such as withdrawal `reasons` sent as `[]`). */
export function isBlankOrEmptyList(value: unknown): boolean {
  return isBlank(value) || (Array.isArray(value) && value.length === 0);
}

/** A code as the API compares it: strings as sent, numbers as their text. */
export function codeText(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : JSON.stringify(value);
}

/**
 * A free-text field as stored: strings as sent, numbers and booleans as text, blank as null. Objects and
 * arrays count as absent, as the real service's parameter permit list drops them.
 */
export function scalarText(value: unknown): string | null {
  if (isBlank(value)) return null;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

/**
 * 'YYYY-MM-DD' when `value` is a real calendar date in ISO 8601 form, else undefined. A date-time's date part
 * counts (`T` or a space before the time, an optional zone), as Rails' date casting reads it.
 */
export function isoDate(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.exec(value.trim());
  if (!match) return undefined;
  const [, y, m, d] = match;
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  if (date.getUTCFullYear() !== Number(y) || date.getUTCMonth() !== Number(m) - 1 || date.getUTCDate() !== Number(d))
    return undefined;
  return `${y}-${m}-${d}`;
}

/** Today's date in UTC, 'YYYY-MM-DD' (the service's clock; dates compare as strings). */
export function todayUtc(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

/** Academic cycles run 1 August – 31 July; a cycle is named by its start year. */
export function academicCycleOf(date: string): number {
  const year = Number(date.slice(0, 4));
  return Number(date.slice(5, 7)) >= 8 ? year : year - 1;
}

/**
 * What every register validator returns: the real service's messages of what is wrong (none: valid), and the values
 * it read from the input, normalized. Only valid input's values may be written; with errors they are as far as they
 * could be read (the degree duplicate check compares them before the other refusals).
 */
export interface Checked<T> {
  values: T;
  errors: string[];
}
