/**
 * The register API's one error taxonomy. The real service has several body shapes — `{"error":"Unauthorized"}`,
 * `{"errors":[{"error","message"}]}`, `{"message","errors":[...]}`, `{"errors":["..."]}` — and clients parse them,
 * so each is reproduced exactly: every refusal is a `RegisterError` carrying its exact body, made by one of the
 * functions below, and `registerErrorFormatter` (installed once on the `/api` scope) renders it, and every other
 * error (Fastify's, infrastructure), in the register's shapes.
 */
import type { FastifyRequest } from 'fastify';
import { AppError, capErrors, ValidationError } from '../errors.js';
import type { FormattedError } from '../plugins/problem.js';

/** One entry of the register's `{"errors":[{"error","message"}]}` bodies. */
export interface RegisterErrorEntry {
  error: string;
  message: string;
}

/** An error whose exact response body is known; the formatter sends `body` unchanged. */
export class RegisterError extends AppError {
  constructor(
    status: number,
    title: string,
    readonly body: unknown,
    detail?: string,
  ) {
    super(status, title, detail ?? title);
  }

  override get errorCount(): number | undefined {
    const { errors, omitted_errors: omitted } = (this.body ?? {}) as { errors?: unknown; omitted_errors?: number };
    if (!errors || typeof errors !== 'object') return undefined;
    return (Array.isArray(errors) ? errors.length : Object.values(errors).flat(2).length) + (omitted ?? 0);
  }
}

// The real message uses a typographic apostrophe (U+2019).
export const STATE_TRANSITION_MESSAGE =
  'It’s not possible to perform this action while the trainee is in its current state';

/** 422 `StateTransitionError`: a locked trainee, or a withdraw whose preconditions fail. */
export class StateTransitionError extends RegisterError {
  constructor() {
    super(
      422,
      'StateTransitionError',
      { errors: entries('StateTransitionError', [STATE_TRANSITION_MESSAGE]) },
      STATE_TRANSITION_MESSAGE,
    );
  }
}

export function entries(error: string, messages: string[]): RegisterErrorEntry[] {
  return messages.map((message) => ({ error, message }));
}

/** 401 `{"error":"Unauthorized"}` (singular key, string value). */
export function unauthorized(): RegisterError {
  return new RegisterError(401, 'Unauthorized', { error: 'Unauthorized' });
}

/** 404 `{"errors":[{"error":"NotFound","message":…}]}`. */
export function notFound(message = 'Not found'): RegisterError {
  return new RegisterError(404, 'Not Found', { errors: entries('NotFound', [message]) }, message);
}

export const traineeNotFound = () => notFound('Trainee(s) not found');
export const noTraineesFound = () => notFound('No trainees found');
export const placementNotFound = () => notFound('Placement(s) not found');
export const degreeNotFound = () => notFound('Degree(s) not found');

/** 404 for a path outside `/api/v{version}` syntax: `{"error":"Resource not found"}`. */
export function resourceNotFound(): RegisterError {
  return new RegisterError(404, 'Not Found', { error: 'Resource not found' });
}

/** 422 `{"errors":["Param is missing or the value is empty or invalid: data"]}`. */
export function missingData(): RegisterError {
  return new RegisterError(422, 'Unprocessable Entity', {
    errors: ['Param is missing or the value is empty or invalid: data'],
  });
}

/** 400 for a body that is not JSON: `{"errors":["<parser message>"]}`. */
export function malformedJson(message: string): RegisterError {
  return new RegisterError(400, 'Bad Request', { errors: [message] });
}

/**
 * The first MAX_REPORTED_ERRORS (src/errors.ts) messages, and `omitted_errors` (the count of the rest) for the body when there are
 * more: a refusal's body and log line stay small however many problems a request has (docs/compatibility.md).
 */
function capped(messages: string[]): { listed: string[]; omitted: { omitted_errors?: number }; detail: string } {
  const { listed, omitted: rest } = capErrors(messages);
  const detail =
    listed.slice(0, 5).join('; ').slice(0, 1000) + (messages.length > 5 ? `; and ${messages.length - 5} more` : '');
  return { listed, omitted: rest > 0 ? { omitted_errors: rest } : {}, detail };
}

/** 422 with one `{"error":"UnprocessableEntity","message"}` entry per message (nested endpoints and actions). */
export function unprocessableEntries(messages: string[]): RegisterError {
  const { listed, omitted, detail } = capped(messages);
  return new RegisterError(
    422,
    'Unprocessable Entity',
    { errors: entries('UnprocessableEntity', listed), ...omitted },
    detail,
  );
}

function pluralErrors(count: number): string {
  return `${count} ${count === 1 ? 'error' : 'errors'}`;
}

/**
 * 422 of trainee create/update: `{"message":"Validation failed: N errors prohibited this trainee from being saved",
 * "errors":[...]}`, or with `Enhanced-Errors: true` the messages as an object keyed by attribute.
 */
export function traineeValidationError(messages: string[], enhanced = false): RegisterError {
  const message = `Validation failed: ${pluralErrors(messages.length)} prohibited this trainee from being saved`;
  const { listed, omitted, detail } = capped(messages);
  return new RegisterError(
    422,
    'Unprocessable Entity',
    { message, errors: enhanced ? enhanceErrors(listed) : listed, ...omitted },
    detail,
  );
}

/** 422 of list filters: `{"message":"Validation failed: N errors prohibited this request being run","errors":{param:[...]}}`. */
export function filterValidationError(errors: Record<string, string[]>): RegisterError {
  const count = Object.values(errors).reduce((n, list) => n + list.length, 0);
  const message = `Validation failed: ${pluralErrors(count)} prohibited this request being run`;
  return new RegisterError(422, 'Unprocessable Entity', { message, errors }, JSON.stringify(errors));
}

/** 409 duplicate degree, with the existing degree(s) the new one duplicates in `data`. */
export function duplicateDegree(existing: unknown[]): RegisterError {
  return new RegisterError(409, 'Conflict', {
    errors: entries('Conflict', ['This is a duplicate degree']),
    data: existing,
  });
}

/** 409 duplicate trainee, with the existing records in `data`. */
export function duplicateTrainee(existing: unknown[]): RegisterError {
  return new RegisterError(409, 'Conflict', {
    errors: entries('Conflict', ['This trainee is already in Register']),
    data: existing,
  });
}

/** 400: an `Idempotency-Key` header that is empty, too long, repeated or not printable ASCII. */
export function invalidIdempotencyKey(maxLength: number): RegisterError {
  const message = `Idempotency-Key must be 1 to ${maxLength} printable ASCII characters, sent once`;
  return new RegisterError(400, 'Bad Request', { errors: entries('InvalidIdempotencyKey', [message]) }, message);
}

/** 409: the first request with this `Idempotency-Key` is still running (retry after it, as Retry-After says). */
export function idempotencyKeyInProgress(): RegisterError {
  const message = 'A request with this Idempotency-Key is still being processed; retry later';
  return new RegisterError(409, 'Conflict', { errors: entries('IdempotencyKeyInProgress', [message]) }, message);
}

/** 422: this `Idempotency-Key` was used with another request (method, path or body). */
export function idempotencyKeyReused(): RegisterError {
  const message = 'This Idempotency-Key was already used with a different request; use a new key for a new request';
  return new RegisterError(
    422,
    'Unprocessable Entity',
    { errors: entries('IdempotencyKeyReused', [message]) },
    message,
  );
}

/** 429: the provider holds as many unexpired `Idempotency-Key`s as it may. */
export function tooManyIdempotencyKeys(limit: number): RegisterError {
  const message = `At most ${limit} Idempotency-Keys are kept per provider; retry once older ones have expired`;
  return new RegisterError(429, 'Too Many Requests', { errors: entries('TooManyIdempotencyKeys', [message]) }, message);
}

const DEGREE_ATTRIBUTES = new Set([
  'id',
  'country',
  'grade',
  'grade_uuid',
  'uk_degree',
  'uk_degree_uuid',
  'non_uk_degree',
  'subject',
  'subject_uuid',
  'institution',
  'institution_uuid',
  'graduation_year',
  'locale_code',
  'other_grade',
]);
const PLACEMENT_ATTRIBUTES = new Set(['urn', 'name', 'postcode']);

type EnhancedErrors = Record<string, string[] | Record<string, string[]>>;

function push(target: EnhancedErrors, key: string, message: string, nested?: string) {
  if (nested) {
    const group = (target[key] ??= {}) as Record<string, string[]>;
    if (Array.isArray(group)) return;
    (group[nested] ??= []).push(message);
  } else {
    const list = (target[key] ??= []);
    if (Array.isArray(list)) list.push(message);
  }
}

/** The `Enhanced-Errors: true` form: "attr message" strings as `{attr:[message]}`, degree/placement ones nested. */
export function enhanceErrors(messages: string[]): EnhancedErrors {
  const result: EnhancedErrors = {};
  for (const full of messages) {
    const space = full.indexOf(' ');
    const attribute = space < 0 ? full : full.slice(0, space);
    const rest = space < 0 ? '' : full.slice(space + 1);
    if (attribute === 'degrees_attributes' || attribute === 'placements_attributes') {
      const childSpace = rest.indexOf(' ');
      const child = childSpace < 0 ? rest : rest.slice(0, childSpace);
      const known = attribute === 'degrees_attributes' ? DEGREE_ATTRIBUTES : PLACEMENT_ATTRIBUTES;
      if (known.has(child)) push(result, attribute, rest.slice(childSpace + 1), child);
      else push(result, attribute, rest);
    } else if (DEGREE_ATTRIBUTES.has(attribute)) {
      push(result, 'degrees_attributes', rest, attribute);
    } else if (PLACEMENT_ATTRIBUTES.has(attribute)) {
      push(result, 'placements_attributes', rest, attribute);
    } else {
      push(result, attribute, rest);
    }
  }
  return result;
}

/** Renders any error in the register's wire shape (installed on the `/api` scope). */
export function registerErrorFormatter(error: AppError, _request: FastifyRequest): FormattedError {
  const json = 'application/json; charset=utf-8';
  if (error instanceof RegisterError) return { status: error.status, body: error.body, contentType: json };
  switch (error.status) {
    case 400: {
      const message =
        error instanceof ValidationError ? (error.errors[0]?.message ?? error.title) : (error.detail ?? error.title);
      return { status: 400, body: { errors: [message] }, contentType: json };
    }
    case 401:
      return { status: 401, body: { error: 'Unauthorized' }, contentType: json };
    case 404:
      return { status: 404, body: { errors: entries('NotFound', ['Not found']) }, contentType: json };
    case 429:
      // Rack::Attack's throttled response.
      return { status: 429, body: 'Retry later\n', contentType: 'text/plain; charset=utf-8' };
    case 500:
      return { status: 500, body: { error: 'Internal server error' }, contentType: json };
    default:
      if (error.status >= 500)
        return { status: error.status, body: { error: error.detail ?? error.title }, contentType: json };
      return {
        status: error.status,
        body: { errors: [{ error: error.title.replace(/\s+/g, ''), message: error.detail ?? error.title }] },
        contentType: json,
      };
  }
}
