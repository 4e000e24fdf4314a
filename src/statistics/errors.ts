import type { FastifyRequest } from 'fastify';
import { AppError, ValidationError, type FieldError } from '../errors.js';
import { problemType, type ErrorFormatter } from '../plugins/problem.js';

/**
 * The statistics API's error bodies, as the reference service writes them:
 * - 400: ValidationProblem `{type, title, status, errors: [{message, code, path?, detail?}], traceId}`;
 * - everything else: ProblemDetails `{type, title, status, detail?, traceId}`.
 */

export const VALIDATION_TITLE = 'One or more validation errors occurred.';

/** The statistics API's messages, one per error code (a function where the message names a limit). */
export const ValidationMessages = {
  UnknownField: 'The field was not expected in the request and should be removed.',
  InvalidValue: 'Must be a valid value. Check that the type and format are correct.',
  RequiredValue: 'A value is required for this field.',
  NotEmptyBody: 'The request body must not be empty.',
  AllowedValue: 'Must be one of the allowed values.',
  NotEmpty: 'Must not be empty.',
  NotNull: 'Must not be empty.',
  greaterThanOrEqual: (comparisonValue: number) => `Must be greater than or equal to '${comparisonValue}'.`,
  lessThanOrEqual: (comparisonValue: number) => `Must be less than or equal to '${comparisonValue}'.`,
  inclusiveBetween: (from: number, to: number) => `Must be between ${from} and ${to} (inclusive).`,
  minimumLength: (minLength: number, totalLength: number) =>
    `Must be at least ${minLength} characters (was ${totalLength}).`,
  maximumLength: (maxLength: number, totalLength: number) =>
    `Must be ${maxLength} characters or fewer (was ${totalLength}).`,
  // The query's rules.
  LocationFormat: 'Must be a location in the correct format.',
  LocationAllowedLevel: 'Must be a location with an allowed level.',
  LocationAllowedProperty: 'Must be a location with an allowed identifying property.',
  SortFormat: 'Must be a sort in the correct format.',
  SortFieldNotEmpty: 'Must be a sort with a field that is not empty.',
  SortDirection: 'Must be a sort in an allowed direction.',
  IndicatorsNotFound: 'One or more indicators could not be found.',
  SortFieldsNotFound: 'One or more sort fields could not be found.',
  TimePeriodFormat: 'Must be a time period in the correct format.',
  TimePeriodAllowedCode: 'Must be a time period with an allowed code.',
  TimePeriodInvalidYear: 'Must be a time period for a valid year.',
  TimePeriodInvalidYearRange: 'Must be a valid time period range where the start year is one year before the end year.',
  criteriaMaxDepth: (maxDepth: number) => `Must not be nested more than ${maxDepth} levels deep.`,
  criteriaMaxConditions: (maxConditions: number) => `Must not contain more than ${maxConditions} conditions.`,
  bodyTooLarge: (maxBytes: number) => `The request body must not be larger than ${maxBytes} bytes.`,
} as const;

/** The codes whose message is fixed text. */
export type FixedMessageCode = {
  [K in keyof typeof ValidationMessages]: (typeof ValidationMessages)[K] extends string ? K : never;
}[keyof typeof ValidationMessages];

/** The messages of the query's warnings (200 responses that say what was ignored). */
export const WarningMessages = {
  FiltersNotFound: 'One or more filters could not be found.',
  GeographicLevelsNotFound: 'One or more geographic levels could not be found.',
  LocationsNotFound: 'One or more locations could not be found.',
  TimePeriodsNotFound: 'One or more time periods could not be found.',
  NoResults: 'The query did not match any results. You may need to refine your criteria.',
  DebugEnabled: 'Debug mode is enabled. Do not enable debug mode in a production environment.',
} as const;

/** Codes that come from reading the request (binding), which the reference never mixes with rule errors. */
const BINDING_CODES = new Set(['UnknownField', 'InvalidValue', 'RequiredValue', 'NotEmptyBody']);

export interface StatisticsErrorViewModel {
  message: string;
  code: string;
  path?: string;
  detail?: unknown;
}

/** Builders for the common field errors, so every endpoint words them the same way. */
export const fieldErrors = {
  unknownField: (path: string): FieldError => ({
    path,
    code: 'UnknownField',
    message: ValidationMessages.UnknownField,
  }),
  invalidValue: (path: string, value?: unknown): FieldError => ({
    path,
    code: 'InvalidValue',
    message: ValidationMessages.InvalidValue,
    ...(value === undefined ? {} : { detail: { value } }),
  }),
  allowedValue: (path: string, value: unknown, allowed: readonly unknown[]): FieldError => ({
    path,
    code: 'AllowedValue',
    message: ValidationMessages.AllowedValue,
    detail: { value: value ?? null, allowed: [...allowed] },
  }),
  greaterThanOrEqual: (path: string, value: unknown, comparisonValue: number): FieldError => ({
    path,
    code: 'GreaterThanOrEqual',
    message: ValidationMessages.greaterThanOrEqual(comparisonValue),
    detail: { comparisonValue, value: value ?? null },
  }),
  lessThanOrEqual: (path: string, value: unknown, comparisonValue: number): FieldError => ({
    path,
    code: 'LessThanOrEqual',
    message: ValidationMessages.lessThanOrEqual(comparisonValue),
    detail: { comparisonValue, value: value ?? null },
  }),
  inclusiveBetween: (path: string, value: unknown, from: number, to: number): FieldError => ({
    path,
    code: 'InclusiveBetween',
    message: ValidationMessages.inclusiveBetween(from, to),
    detail: { from, to, value: value ?? null },
  }),
  minimumLength: (path: string, value: string, minLength: number): FieldError => ({
    path,
    code: 'MinimumLength',
    message: ValidationMessages.minimumLength(minLength, value.length),
    detail: { minLength, totalLength: value.length, value },
  }),
  maximumLength: (path: string, value: string, maxLength: number): FieldError => ({
    path,
    code: 'MaximumLength',
    message: ValidationMessages.maximumLength(maxLength, value.length),
    detail: { maxLength, totalLength: value.length, value },
  }),
  notEmpty: (path: string, value: unknown): FieldError => ({
    path,
    code: 'NotEmpty',
    message: ValidationMessages.NotEmpty,
    detail: { value: value ?? null },
  }),
};

/** A ValidationError in the statistics shape; binding errors win over rule errors, as in the reference. */
export function statisticsValidationError(errors: FieldError[]): ValidationError {
  const binding = errors.filter((e) => e.code !== undefined && BINDING_CODES.has(e.code));
  return new ValidationError(binding.length > 0 ? binding : errors, VALIDATION_TITLE);
}

// ---------------------------------------------------------------------------------------------------------------
// Ajv errors (Fastify schema validation) → statistics codes.
// toAppError turns Fastify's validation error into FieldErrors with path `<context>/<instancePath>` (plus the
// missing/additional property), code = Ajv keyword and detail = Ajv params. They are rewritten here with the
// route's schema at hand, so e.g. `minimum`+`maximum` on one field reads as InclusiveBetween with both bounds.

const AJV_CONTEXTS = ['querystring', 'body', 'params', 'headers'] as const;
type AjvContext = (typeof AJV_CONTEXTS)[number];

type JsonSchema = Record<string, unknown>;

function splitAjvPath(path: string): { context: AjvContext; segments: string[] } | undefined {
  for (const context of AJV_CONTEXTS) {
    if (path === context || path.startsWith(`${context}/`)) {
      const pointer = path.slice(context.length);
      const segments = pointer
        .split('/')
        .slice(1)
        .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
      return { context, segments };
    }
  }
  return undefined;
}

/** `['criteria','filters','in','2']` → `criteria.filters.in[2]` (the reference's camelCase JSON path). */
export function toStatisticsPath(segments: readonly string[]): string {
  let path = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) path += `[${segment}]`;
    else path += path === '' ? segment : `.${segment}`;
  }
  return path;
}

function subSchema(schema: unknown, segments: readonly string[]): JsonSchema | undefined {
  let current = schema as JsonSchema | undefined;
  for (const segment of segments) {
    if (!current || typeof current !== 'object') return undefined;
    const properties = current.properties as Record<string, JsonSchema> | undefined;
    if (properties && segment in properties) current = properties[segment];
    else if (/^\d+$/.test(segment) && current.items && typeof current.items === 'object')
      current = current.items as JsonSchema;
    else return undefined;
  }
  return current;
}

function valueAt(data: unknown, segments: readonly string[]): unknown {
  let current = data;
  for (const segment of segments) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/** Ajv's keywords; a FieldError with another code was made by our own code and is kept as it is. */
const AJV_KEYWORDS = new Set([
  'additionalProperties',
  'required',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'type',
  'format',
  'pattern',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'multipleOf',
  'minProperties',
  'maxProperties',
  'propertyNames',
  'dependentRequired',
  'unevaluatedProperties',
  'unevaluatedItems',
  'contains',
  'items',
  'additionalItems',
  'false schema',
]);

function mapAjvFieldError(error: FieldError, request: FastifyRequest): FieldError {
  const split = splitAjvPath(error.path);
  if (!split || error.code === undefined || !AJV_KEYWORDS.has(error.code)) return error;
  const { context, segments } = split;
  const routeSchema = (request.routeOptions?.schema ?? {}) as Record<string, unknown>;
  const schema = subSchema(routeSchema[context], segments);
  const data =
    context === 'querystring'
      ? request.query
      : context === 'body'
        ? request.body
        : context === 'params'
          ? request.params
          : request.headers;
  const value = valueAt(data, segments);
  const path = toStatisticsPath(segments);
  const params = (error.detail ?? {}) as Record<string, unknown>;
  switch (error.code) {
    case 'additionalProperties':
      return fieldErrors.unknownField(path);
    case 'required':
      return fieldErrors.invalidValue(path);
    case 'enum':
    case 'const': {
      const allowed = (schema?.enum as unknown[] | undefined) ?? (schema && 'const' in schema ? [schema.const] : []);
      return fieldErrors.allowedValue(path, value, [...allowed].sort());
    }
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const minimum = typeof schema?.minimum === 'number' ? schema.minimum : undefined;
      const maximum = typeof schema?.maximum === 'number' ? schema.maximum : undefined;
      if (minimum !== undefined && maximum !== undefined)
        return fieldErrors.inclusiveBetween(path, value, minimum, maximum);
      if (minimum !== undefined) return fieldErrors.greaterThanOrEqual(path, value, minimum);
      if (maximum !== undefined) return fieldErrors.lessThanOrEqual(path, value, maximum);
      return fieldErrors.invalidValue(path);
    }
    case 'minLength':
      return typeof value === 'string' && value.length > 0
        ? fieldErrors.minimumLength(path, value, Number(params.limit))
        : fieldErrors.notEmpty(path, value);
    case 'maxLength':
      return typeof value === 'string'
        ? fieldErrors.maximumLength(path, value, Number(params.limit))
        : fieldErrors.invalidValue(path);
    case 'minItems':
      return fieldErrors.notEmpty(path, value);
    default:
      // type, format, pattern, anyOf/oneOf, ...: the value could not be read as the declared type.
      return fieldErrors.invalidValue(path);
  }
}

function dedupe(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => {
    const key = `${e.path}\u0000${e.code}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Codes of ours that other layers use for the same conditions (the hardening JSON parser). */
const FOREIGN_CODES: Record<string, (error: FieldError) => FieldError> = {
  InvalidJson: () => ({ path: '', code: 'InvalidValue', message: ValidationMessages.InvalidValue }),
  MaximumDepth: (e) => ({ path: '', code: 'InvalidValue', message: e.message }),
  MaximumItems: (e) => ({ path: '', code: 'InvalidValue', message: e.message }),
};

function toErrorViewModel(error: FieldError): StatisticsErrorViewModel {
  return {
    message: error.message,
    code: error.code ?? 'InvalidValue',
    ...(error.path ? { path: error.path } : {}),
    ...(error.detail === undefined ? {} : { detail: error.detail }),
  };
}

/** The formatter installed on the `/v1` scope (see src/statistics/index.ts). */
export const statisticsErrorFormatter: ErrorFormatter = (given: AppError, request: FastifyRequest) => {
  // Every 400 is a ValidationProblem (the shape the routes declare for 400), also the framework's own (a body that
  // does not decompress, a content type that does not parse): one error with the framework's message.
  const error =
    given.status === 400 && !(given instanceof ValidationError)
      ? new ValidationError([
          { path: '', code: 'InvalidValue', message: given.detail ?? ValidationMessages.InvalidValue },
        ])
      : given;
  if (error instanceof ValidationError) {
    const mapped = dedupe(
      error.errors.map((e) => {
        const foreign = e.code ? FOREIGN_CODES[e.code] : undefined;
        return foreign ? foreign(e) : mapAjvFieldError(e, request);
      }),
    );
    const binding = mapped.filter((e) => e.code !== undefined && BINDING_CODES.has(e.code));
    const errors = binding.length > 0 ? binding : mapped;
    return {
      status: 400,
      contentType: 'application/problem+json; charset=utf-8',
      headers: { 'cache-control': 'no-store' },
      body: {
        type: problemType(400),
        title: VALIDATION_TITLE,
        status: 400,
        errors: errors.map(toErrorViewModel),
        ...(error.omittedErrors > 0 ? { omittedErrors: error.omittedErrors } : {}),
        traceId: request.id,
      },
    };
  }
  const body: Record<string, unknown> = {
    type: problemType(error.status),
    title: error.title,
    status: error.status,
  };
  // 5xx texts never leave the process, except our own fixed 503/504 texts.
  if (error.detail && (error.status < 500 || error.status === 503 || error.status === 504)) body.detail = error.detail;
  Object.assign(body, error.extensions);
  body.traceId = request.id;
  return {
    status: error.status,
    contentType: 'application/problem+json; charset=utf-8',
    headers: { 'cache-control': 'no-store' },
    body,
  };
};
