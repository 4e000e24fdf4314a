import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import {
  AppError,
  CapacityError,
  capErrors,
  classifyInfrastructureError,
  MethodNotAllowedError,
  NotFoundError,
  NotReadyError,
  ValidationError,
  type FieldError,
} from '../errors.js';

/** RFC 9457 problem details, the default error body of the service. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'A URI reference that identifies the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    traceId: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(
        Type.Object(
          { pointer: Type.String(), detail: Type.String(), code: Type.Optional(Type.String()) },
          { additionalProperties: true },
        ),
      ),
    ),
    omittedErrors: Type.Optional(
      Type.Integer({ minimum: 1, description: 'Errors found beyond the first 100 listed in `errors`, only counted' }),
    ),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details' },
);
export type Problem = Static<typeof ProblemSchema>;

export interface FormattedError {
  status: number;
  body: unknown;
  contentType?: string;
  headers?: Record<string, string>;
}

/** Turns any error into one API's wire shape. Each API prefix installs its own (see installErrorHandling). */
export type ErrorFormatter = (error: AppError, request: FastifyRequest) => FormattedError;

const statusTypes: Record<number, string> = {
  400: 'https://tools.ietf.org/html/rfc9110#section-15.5.1',
  401: 'https://tools.ietf.org/html/rfc9110#section-15.5.2',
  403: 'https://tools.ietf.org/html/rfc9110#section-15.5.4',
  404: 'https://tools.ietf.org/html/rfc9110#section-15.5.5',
  405: 'https://tools.ietf.org/html/rfc9110#section-15.5.6',
  406: 'https://tools.ietf.org/html/rfc9110#section-15.5.7',
  409: 'https://tools.ietf.org/html/rfc9110#section-15.5.10',
  412: 'https://tools.ietf.org/html/rfc9110#section-15.5.13',
  413: 'https://tools.ietf.org/html/rfc9110#section-15.5.14',
  415: 'https://tools.ietf.org/html/rfc9110#section-15.5.16',
  422: 'https://tools.ietf.org/html/rfc9110#section-15.5.21',
  429: 'https://tools.ietf.org/html/rfc6585#section-4',
  500: 'https://tools.ietf.org/html/rfc9110#section-15.6.1',
  503: 'https://tools.ietf.org/html/rfc9110#section-15.6.4',
  504: 'https://tools.ietf.org/html/rfc9110#section-15.6.5',
};

export function problemType(status: number): string {
  return statusTypes[status] ?? 'about:blank';
}

/** The default formatter: application/problem+json with `errors[]` of `{pointer, detail}` for validation. */
export const defaultProblemFormatter: ErrorFormatter = (error, request) => {
  const body: Problem = {
    type: problemType(error.status),
    title: error.title,
    status: error.status,
    traceId: request.id,
    ...error.extensions,
  };
  if (error instanceof ValidationError) {
    body.errors = error.errors.map((e) => ({
      pointer: e.path,
      detail: e.message,
      ...(e.code ? { code: e.code } : {}),
    }));
    if (error.omittedErrors > 0) body.omittedErrors = error.omittedErrors;
  } else if (error.detail && error.status < 500) {
    body.detail = error.detail;
  } else if (error.status >= 500 && error.status !== 500 && error.detail) {
    // 503/504 details are fixed texts of ours, never internals.
    body.detail = error.detail;
  }
  return { status: error.status, body, contentType: 'application/problem+json; charset=utf-8' };
};

/**
 * Fastify's Ajv errors as field errors: one entry per problem, pointing at the offending input; the first
 * MAX_REPORTED_ERRORS only (the ValidationError counts the rest).
 */
export function fieldErrorsFromValidation(error: FastifyError): FieldError[] {
  const context = (error as { validationContext?: string }).validationContext ?? 'body';
  return capErrors(error.validation ?? []).listed.map((v) => {
    const params = v.params;
    const missing = typeof params?.missingProperty === 'string' ? `/${params.missingProperty}` : '';
    const extra = typeof params?.additionalProperty === 'string' ? `/${params.additionalProperty}` : '';
    const pointer = `${v.instancePath}${missing}${extra}`;
    return { path: `${context}${pointer}`, message: v.message ?? 'is invalid', code: v.keyword, detail: params };
  });
}

/** Any thrown thing as an AppError: ours as is, Fastify's by status code, database outages as 503/504, the rest 500. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError?.validation) {
    return new ValidationError(
      fieldErrorsFromValidation(fastifyError),
      undefined,
      undefined,
      capErrors(fastifyError.validation).omitted,
    );
  }
  const infrastructure = classifyInfrastructureError(error);
  if (infrastructure) return infrastructure;
  const status = fastifyError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const title = titleFor(status);
    return new AppError(status, title, fastifyError.message);
  }
  return new AppError(500, 'Internal Server Error', 'An unexpected error occurred.');
}

function titleFor(status: number): string {
  const titles: Record<number, string> = {
    400: 'Bad Request',
    401: 'Unauthorized',
    403: 'Forbidden',
    404: 'Not Found',
    405: 'Method Not Allowed',
    406: 'Not Acceptable',
    408: 'Request Timeout',
    409: 'Conflict',
    411: 'Length Required',
    412: 'Precondition Failed',
    413: 'Payload Too Large',
    414: 'URI Too Long',
    415: 'Unsupported Media Type',
    422: 'Unprocessable Entity',
    429: 'Too Many Requests',
    431: 'Request Header Fields Too Large',
  };
  return titles[status] ?? 'Error';
}

export function sendError(reply: FastifyReply, formatted: FormattedError) {
  reply.code(formatted.status);
  if (formatted.headers) reply.headers(formatted.headers);
  reply.type(formatted.contentType ?? 'application/json; charset=utf-8');
  return reply.send(formatted.body);
}

/**
 * The log line of a failed request: a 5xx with its error (the line is capped, see log-bounds.ts); a client refused
 * for want of a free slot (429/503) at warn in one line without a stack; a refusal with its status, code and error count only, never a message built from the input, which could be as large as the input.
 */
export function logRequestError(request: FastifyRequest, error: unknown, appError: AppError): void {
  if (appError instanceof CapacityError) {
    request.log.warn({ status: appError.status, code: appError.name }, appError.detail ?? 'no slot free');
    return;
  }
  if (appError instanceof NotReadyError) return;
  if (appError.status >= 500) {
    request.log.error({ err: error }, 'request failed');
    return;
  }
  const code = (error as FastifyError)?.code ?? appError.name;
  request.log.info({ status: appError.status, code, errors: appError.errorCount }, 'request rejected');
}

/**
 * The error handler of one scope (the root, or an API prefix), in that scope's error shape: every thrown thing
 * becomes an AppError (toAppError), 5xx are logged with their internals and the request id (which never leave the
 * process), refusals are logged in one line. The one error handler of the service: each API installs it with its
 * formatter.
 */
export function installErrorHandler(app: FastifyInstance, formatter: ErrorFormatter): void {
  app.setErrorHandler((error, request, reply) => {
    const appError = toAppError(error);
    logRequestError(request, error, appError);
    if (reply.sent || reply.raw.headersSent) return;
    // Keep headers that hooks set for this status (e.g. Retry-After on 429). Not returned: from a synchronous handler
    // Fastify awaits a returned reply as a thenable, watching the response's end once more per error (a full test run
    // drew "11 close listeners added to [ServerResponse]" warnings from it).
    sendError(reply, formatter(appError, request));
  });
}

/** The error handler and a not-found handler (405 with `Allow` for a path with other methods, else 404) of one scope. */
export function installErrorHandling(app: FastifyInstance, formatter: ErrorFormatter = defaultProblemFormatter) {
  installErrorHandler(app, formatter);
  app.setNotFoundHandler((request, reply) => {
    const error =
      methodNotAllowed(app, request, reply) ??
      new NotFoundError(`No resource at ${request.method} ${request.url.split('?')[0]}`);
    sendError(reply, formatter(error, request));
  });
}

const ROUTE_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/**
 * For a request the router found no route for: the 405 to answer when its path has routes for other methods (the
 * `Allow` header is set on `reply`), else undefined (a 404). OPTIONS is left out: CORS preflight routes match any
 * path of their scope.
 */
export function methodNotAllowed(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
): MethodNotAllowedError | undefined {
  const url = request.url.split('?')[0]!;
  const allow = ROUTE_METHODS.filter((method) => method !== request.method && app.findRoute({ method, url }) !== null);
  if (allow.length === 0) return undefined;
  reply.header('allow', allow.join(', '));
  return new MethodNotAllowedError(request.method, allow);
}
