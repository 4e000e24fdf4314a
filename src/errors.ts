/**
 * The service's one error taxonomy. Services and repositories throw these; each API's error handler
 * (src/plugins/problem.ts, and the per-API formatters) maps them to that API's wire shape.
 */
export interface ProblemExtensions {
  [key: string]: unknown;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail?: string,
    readonly extensions: ProblemExtensions = {},
    options?: { cause?: unknown },
  ) {
    super(detail ?? title, options);
    this.name = new.target.name;
  }

  /** How many problems the error reports (listed or only counted), for the log line; undefined when not a list. */
  get errorCount(): number | undefined {
    return undefined;
  }
}

/** One problem with one input field, as the 400/422 bodies list them. */
export interface FieldError {
  /** Where the problem is: a JSON pointer or the API's own path notation (e.g. `filters.eq`, `/trainee/sex`). */
  path: string;
  message: string;
  /** A stable machine-readable code (the statistics API's `code`, e.g. `InvalidValue`). */
  code?: string;
  detail?: unknown;
}

/**
 * The most errors one error body lists (both APIs, every parser and validator); the rest are only counted, so what
 * a refusal costs to build, send and log does not grow with the request (see docs/compatibility.md).
 */
export const MAX_REPORTED_ERRORS = 100;

/** The first MAX_REPORTED_ERRORS of `items` and how many were left out. */
export function capErrors<T>(items: readonly T[]): { listed: T[]; omitted: number } {
  const listed = items.length > MAX_REPORTED_ERRORS ? items.slice(0, MAX_REPORTED_ERRORS) : [...items];
  return { listed, omitted: items.length - listed.length };
}

/**
 * Collects problems up to MAX_REPORTED_ERRORS and counts the rest without keeping them.
 */
export class ErrorCollector<T> {
  readonly items: T[] = [];
  /** Problems found beyond the cap. */
  omitted = 0;

  constructor(readonly cap = MAX_REPORTED_ERRORS) {}

  push(item: T): void {
    if (this.items.length < this.cap) this.items.push(item);
    else this.omitted++;
  }

  get full(): boolean {
    return this.items.length >= this.cap;
  }
}

export class ValidationError extends AppError {
  readonly errors: FieldError[];
  /** Errors found but not listed (beyond MAX_REPORTED_ERRORS). */
  readonly omittedErrors: number;

  constructor(errors: FieldError[], title = 'One or more validation errors occurred.', status = 400, omitted = 0) {
    const { listed, omitted: over } = capErrors(errors);
    const omittedErrors = omitted + over;
    // The detail names the first few problems only: it is what logs and other formatters see.
    const shown = listed.slice(0, 5).map((e) => `${e.path}: ${e.message}`.slice(0, 200));
    const more = listed.length + omittedErrors - shown.length;
    super(status, title, more > 0 ? `${shown.join('; ')}; and ${more} more` : shown.join('; '));
    this.errors = listed;
    this.omittedErrors = omittedErrors;
  }

  /** Every problem found, listed or not. */
  override get errorCount(): number {
    return this.errors.length + this.omittedErrors;
  }
}

export class ForbiddenError extends AppError {
  constructor(detail?: string) {
    super(403, 'Forbidden', detail);
  }
}

export class NotFoundError extends AppError {
  constructor(detail?: string) {
    super(404, 'Not Found', detail);
  }
}

/** The path exists, but not for this method; `allow` lists the methods it has (sent as the `Allow` header). */
export class MethodNotAllowedError extends AppError {
  constructor(
    method: string,
    readonly allow: string[],
  ) {
    super(405, 'Method Not Allowed', `${method} is not supported here; use ${allow.join(', ')}.`);
  }
}

export class ConflictError extends AppError {
  constructor(detail?: string, extensions: ProblemExtensions = {}) {
    super(409, 'Conflict', detail, extensions);
  }
}

export class PreconditionFailedError extends AppError {
  constructor(detail = 'The resource has changed since it was read (If-Match does not match).') {
    super(412, 'Precondition Failed', detail);
  }
}

/** A `Range` that starts past the end of the resource (sent with `Content-Range: bytes *\/<size>`). */
export class RangeNotSatisfiableError extends AppError {
  constructor(
    readonly size: number,
    detail = `The requested range starts past the end of the file (${size} bytes).`,
  ) {
    super(416, 'Range Not Satisfiable', detail);
  }
}

export class UnprocessableError extends AppError {
  constructor(detail?: string, extensions: ProblemExtensions = {}) {
    super(422, 'Unprocessable Entity', detail, extensions);
  }
}

export class ServiceUnavailableError extends AppError {
  constructor(detail = 'The service is temporarily unavailable. Try again shortly.', options?: { cause?: unknown }) {
    super(503, 'Service Unavailable', detail, {}, options);
  }
}

/**
 * A limited resource (a live stream, a CSV export) has no slot free for the client: 429 when the client holds its
 * share, 503 when every slot is taken. An expected refusal, logged at warn in one line (no stack).
 */
export class CapacityError extends AppError {
  constructor(status: 429 | 503, detail: string) {
    super(status, status === 429 ? 'Too Many Requests' : 'Service Unavailable', detail);
  }
}

/**
 * `/health/ready` while the instance is still starting (row indexes loading, warm-up): an expected answer that a
 * balancer polls for, so it is not logged as a failed request (the health route says once that it is not ready yet).
 */
export class NotReadyError extends ServiceUnavailableError {}

export class GatewayTimeoutError extends AppError {
  constructor(detail = 'The request took too long to complete.', options?: { cause?: unknown }) {
    super(504, 'Gateway Timeout', detail, {}, options);
  }
}

const unavailableCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08006',
]);

/**
 * Errors that come from the database layer and mean "not now" rather than "bug": the database is down,
 * the pool had no free connection in time, or a statement hit `statement_timeout`.
 */
export function classifyInfrastructureError(error: unknown): AppError | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (code === '57014') return new GatewayTimeoutError(undefined, { cause: error });
  if (
    (typeof code === 'string' && unavailableCodes.has(code)) ||
    /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|the database system is (starting up|shutting down)|Client has encountered a connection error/i.test(
      text,
    )
  ) {
    return new ServiceUnavailableError(undefined, { cause: error });
  }
  return undefined;
}
