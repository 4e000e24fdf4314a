import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import type { FieldError } from '../errors.js';
import { NotFoundError } from '../errors.js';
import { ifNoneMatchMatches } from '../http/conditional.js';
import { isUuid } from '../validators.js';
import { fieldErrors, statisticsValidationError } from './errors.js';

/**
 * Query-string handling shared by every statistics endpoint, modelled on the reference's model binding and FluentValidation rules:
 *
 * 1. binding: every key must name a declared parameter (else `UnknownField`, path = the key); list parameters accept
 *    repeated keys, indexed keys (`types[0]=`) and comma-separated values; values are trimmed; a blank list element
 *    becomes `null`; integers and booleans that do not parse are `InvalidValue`;
 * 2. rules, only when binding succeeded: `minimum`/`maximum` → `GreaterThanOrEqual`/`InclusiveBetween`,
 *    `minLength` → `MinimumLength`, `enum` (also on list items) → `AllowedValue` at `name[i]`.
 *
 * The TypeBox schema of the route's `querystring` is the single description of the parameters: the hook reads it,
 * and @fastify/swagger documents it. The hook replaces `request.query` with the bound, typed values, so Ajv's
 * own validation afterwards sees valid input.
 */

type JsonSchema = Record<string, unknown>;

export type BoundQuery = Record<string, unknown>;

export interface BindResult {
  values: BoundQuery;
  errors: FieldError[];
}

const INT32_MAX = 2147483647;

function schemaType(schema: JsonSchema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) return type.find((t) => t !== 'null') as string | undefined;
  if (Array.isArray(schema.anyOf)) {
    const first = (schema.anyOf as JsonSchema[]).find((s) => s.type !== 'null');
    return first ? schemaType(first) : undefined;
  }
  return undefined;
}

function rawValues(value: unknown): string[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return value.map(String);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a query value is a string; any other is echoed as JS writes it
  return [String(value)];
}

/** Splits list values on commas the way the reference's SeparatedQueryStringValueProvider does. */
export function splitListValues(values: readonly string[]): Array<string | null> {
  const needsSplit = values.some((v) => v.indexOf(',') > 0);
  const parts = needsSplit ? values.flatMap((v) => v.split(',').filter((s) => s !== '')) : [...values];
  return parts.map((p) => {
    const trimmed = p.trim();
    return trimmed === '' ? null : trimmed;
  });
}

function parseScalar(name: string, type: string | undefined, raw: string, errors: FieldError[]): unknown {
  // A version selector is not trimmed: ` 1.0` is not a version (404, see parseVersionSelector).
  if (name === 'dataSetVersion') return raw;
  const value = raw.trim();
  if (type === 'integer' || type === 'number') {
    if (!/^[+-]?\d+$/.test(value) || Math.abs(Number(value)) > INT32_MAX) {
      errors.push(fieldErrors.invalidValue(name, raw));
      return undefined;
    }
    return Number(value);
  }
  if (type === 'boolean') {
    const lower = value.toLowerCase();
    if (lower === 'true') return true;
    if (lower === 'false') return false;
    errors.push(fieldErrors.invalidValue(name, raw));
    return undefined;
  }
  return value;
}

/** Step 1: reads the raw query object against the declared parameters. */
export function bindQuery(raw: Record<string, unknown>, schema: TObject | JsonSchema | undefined): BindResult {
  const properties = ((schema)?.properties ?? {}) as Record<string, JsonSchema>;
  const errors: FieldError[] = [];
  const listInputs = new Map<string, Array<{ index: number; values: string[] }>>();
  const scalarInputs = new Map<string, string[]>();
  // Parameter names are matched case-insensitively, as ASP.NET's model binding does (`PageSize`, `DataSetVersion`).
  const byLowerName = new Map(Object.keys(properties).map((name) => [name.toLowerCase(), name]));

  for (const [key, value] of Object.entries(raw ?? {})) {
    const indexed = /^(.+?)\[(\d*)\]$/.exec(key);
    const name = byLowerName.get((indexed ? indexed[1]! : key).toLowerCase()) ?? key;
    const property = properties[name];
    if (!property) {
      errors.push(fieldErrors.unknownField(key));
      continue;
    }
    const type = schemaType(property);
    if (type === 'array') {
      const index = indexed && indexed[2] !== '' ? Number(indexed[2]) : -1;
      const entries = listInputs.get(name) ?? [];
      entries.push({ index, values: rawValues(value) });
      listInputs.set(name, entries);
    } else if (indexed) {
      errors.push(fieldErrors.unknownField(key));
    } else {
      // `page=1&Page=2` are one parameter given twice: the first value counts, as for a repeated key.
      scalarInputs.set(name, [...(scalarInputs.get(name) ?? []), ...rawValues(value)]);
    }
  }

  const values: BoundQuery = {};
  for (const [name, entries] of listInputs) {
    // Indexed keys in index order, then plain repeated keys in request order.
    const ordered = [...entries].sort((a, b) => (a.index === -1 ? Infinity : a.index) - (b.index === -1 ? Infinity : b.index));
    values[name] = splitListValues(ordered.flatMap((e) => e.values));
  }
  for (const [name, raws] of scalarInputs) {
    const first = raws[0] ?? '';
    // An empty top-level scalar is "not given" (ASP.NET binds an empty string to null); a member of a nested
    // parameter object (`filters.eq=`) keeps "" and fails the route's NotEmpty rule instead.
    if (first.trim() === '' && (schemaType(properties[name]!) !== 'string' || !name.includes('.'))) continue;
    const parsed = parseScalar(name, schemaType(properties[name]!), first, errors);
    if (parsed !== undefined) values[name] = parsed;
  }
  return { values, errors };
}

/** Step 2: the declarative rules of the schema (see the module comment), over bound values. */
export function validateQueryRules(values: BoundQuery, schema: TObject | JsonSchema | undefined): FieldError[] {
  const properties = ((schema)?.properties ?? {}) as Record<string, JsonSchema>;
  const errors: FieldError[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const value = values[name];
    if (value === undefined) continue;
    const type = schemaType(property);
    if (type === 'array') {
      const items = (property.items ?? {}) as JsonSchema;
      const list = value as Array<string | null>;
      if (Array.isArray(items.enum)) {
        const allowed = items.enum as string[];
        list.forEach((item, i) => {
          if (item === null || !allowed.includes(item)) errors.push(fieldErrors.allowedValue(`${name}[${i}]`, item, [...allowed].sort()));
        });
      }
      if (list.length === 0 && Array.isArray(items.enum)) errors.push(fieldErrors.allowedValue(`${name}[0]`, null, [...(items.enum as string[])].sort()));
      continue;
    }
    if (typeof value === 'number') {
      const minimum = typeof property.minimum === 'number' ? property.minimum : undefined;
      const maximum = typeof property.maximum === 'number' ? property.maximum : undefined;
      const tooSmall = minimum !== undefined && value < minimum;
      const tooBig = maximum !== undefined && value > maximum;
      if (tooSmall || tooBig) {
        if (minimum !== undefined && maximum !== undefined) errors.push(fieldErrors.inclusiveBetween(name, value, minimum, maximum));
        else if (minimum !== undefined) errors.push(fieldErrors.greaterThanOrEqual(name, value, minimum));
        else errors.push(fieldErrors.lessThanOrEqual(name, value, maximum!));
      }
      continue;
    }
    if (typeof value === 'string') {
      if (typeof property.minLength === 'number' && value.length < property.minLength) {
        errors.push(fieldErrors.minimumLength(name, value, property.minLength));
      }
      if (typeof property.maxLength === 'number' && value.length > property.maxLength) {
        errors.push(fieldErrors.maximumLength(name, value, property.maxLength));
      }
      if (Array.isArray(property.enum) && !property.enum.includes(value)) {
        errors.push(fieldErrors.allowedValue(name, value, [...(property.enum as string[])].sort()));
      }
    }
  }
  return errors;
}

// Path parameters whose value must be a uuid: anything else is a routing 404 in the reference (one check: src/validators.ts).
export { isUuid };

export interface StatisticsRequestOptions {
  /** Path parameters that must be uuids (404 otherwise, checked before anything else). */
  uuidParams?: readonly string[];
  /** Run only binding (step 1); the route validates its own rules later. */
  bindOnly?: boolean;
}

/**
 * The preValidation hook of a statistics route: uuid path parameters (404), then query binding and rules (400),
 * in the reference's order. Use on every `/v1` route; `request.query` is replaced by the bound values.
 */
export function statisticsRequestHook(options: StatisticsRequestOptions = {}): preValidationAsyncHookHandler {
  return async function statisticsRequest(request: FastifyRequest) {
    const params = (request.params ?? {}) as Record<string, unknown>;
    for (const name of options.uuidParams ?? []) {
      if (!isUuid(params[name])) {
        const noun = name === 'publicationId' ? 'publication' : name === 'dataSetId' ? 'data set' : name;
        throw new NotFoundError(`No ${noun} ${String(params[name])}: ids are uuids.`);
      }
    }
    const schema = (request.routeOptions.schema?.querystring ?? undefined) as JsonSchema | undefined;
    const { values, errors } = bindQuery((request.query ?? {}) as Record<string, unknown>, schema);
    if (errors.length > 0) throw statisticsValidationError(errors);
    if (!options.bindOnly) {
      const ruleErrors = validateQueryRules(values, schema);
      if (ruleErrors.length > 0) throw statisticsValidationError(ruleErrors);
    }
    request.query = values;
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Paging

/** `page` and `pageSize` query parameters with the reference's defaults and bounds. */
export function pagingParameters(defaultPageSize: number, maxPageSize: number) {
  return {
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1, description: 'The page of results to fetch. Minimum 1.' })),
    pageSize: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: maxPageSize,
        default: defaultPageSize,
        description: `The maximum number of results per page (1 to ${maxPageSize}, default ${defaultPageSize}).`,
      }),
    ),
  } satisfies TProperties;
}

export interface PagingViewModel {
  page: number;
  pageSize: number;
  totalResults: number;
  totalPages: number;
}

/** The paging object; `totalPages` is 1 when there are no results, as in the reference. */
export function pagingOf(page: number, pageSize: number, totalResults: number): PagingViewModel {
  return { page, pageSize, totalResults, totalPages: Math.trunc((totalResults - 1) / pageSize) + 1 };
}

// ---------------------------------------------------------------------------------------------------------------
// Caching: ETag, Cache-Control, If-None-Match → 304.

/** Published responses change only when a new version is published, so shared caches may keep them a short while. */
export const PUBLIC_CACHE_CONTROL = 'public, max-age=300, must-revalidate';
/** Responses that depend on a preview token must not be cached by shared caches. */
export const PRIVATE_CACHE_CONTROL = 'private, no-cache';

export function cacheControlFor(request: FastifyRequest): string {
  return request.headers['preview-token'] ? PRIVATE_CACHE_CONTROL : PUBLIC_CACHE_CONTROL;
}

/** A weak entity tag (weak: the same entity may be sent gzip-compressed or not). */
export function weakEtag(...parts: Array<string | number>): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(String(part)).update('\u0000');
  return `W/"${hash.digest('base64url').slice(0, 32)}"`;
}

/** Adds names to the `Vary` header, keeping those already there (CORS adds `Origin`). */
export function addVary(reply: FastifyReply, ...names: string[]): void {
  const current = String(reply.getHeader('vary') ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  for (const name of names) {
    if (!current.some((n) => n.toLowerCase() === name.toLowerCase())) current.push(name);
  }
  reply.header('vary', current.join(', '));
}

// One conditional-request helper for both APIs.
export { ifNoneMatchMatches };

/**
 * Sends a JSON body with `ETag` and `Cache-Control`, or `304 Not Modified` when the client already has it.
 * The tag is a hash of the serialised body, so it changes exactly when the response would.
 */
export function sendCacheable<T>(request: FastifyRequest, reply: FastifyReply, body: T): T | FastifyReply {
  const etag = weakEtag(request.routeOptions.url ?? '', JSON.stringify(body));
  reply.header('etag', etag);
  reply.header('cache-control', cacheControlFor(request));
  addVary(reply, 'Accept-Encoding', 'preview-token');
  if (ifNoneMatchMatches(request, etag)) {
    return reply.code(304).send();
  }
  return body;
}

/** The `preview-token` header of a request (the first one when repeated). */
export function previewTokenOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers['preview-token'];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() || undefined;
}

/** Whether the request's Accept-Encoding allows gzip (RFC 9110 §12.5.3: `gzip`, `x-gzip` or `*`, with q > 0). */
export function acceptsGzip(acceptEncoding: string | string[] | undefined): boolean {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding;
  if (!header) return false;
  let gzip: number | undefined;
  let star: number | undefined;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (name === 'gzip' || name === 'x-gzip') gzip = Number.isNaN(q) ? 0 : q;
    else if (name === '*') star = Number.isNaN(q) ? 0 : q;
  }
  return (gzip ?? star ?? 0) > 0;
}

/** `Content-Disposition` of a download named `fileName` (plain and RFC 8187 forms). */
export function attachmentDisposition(fileName: string): string {
  return `attachment; filename=${fileName}; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
