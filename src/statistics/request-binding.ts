/**
 * Query-string binding and rules shared by every statistics endpoint (and its uuid path parameters), modelled on the reference's model binding and FluentValidation rules:
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

import type { FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { TObject } from '@sinclair/typebox';
import type { FieldError } from '../errors.js';
import { NotFoundError } from '../errors.js';
import { isUuid } from '../validators.js';
import { fieldErrors, statisticsValidationError } from './errors.js';

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
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
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
    const ordered = [...entries].sort(
      (a, b) => (a.index === -1 ? Infinity : a.index) - (b.index === -1 ? Infinity : b.index),
    );
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
  const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
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
          if (item === null || !allowed.includes(item))
            errors.push(fieldErrors.allowedValue(`${name}[${i}]`, item, [...allowed].sort()));
        });
      }
      if (list.length === 0 && Array.isArray(items.enum))
        errors.push(fieldErrors.allowedValue(`${name}[0]`, null, [...(items.enum as string[])].sort()));
      continue;
    }
    if (typeof value === 'number') {
      const minimum = typeof property.minimum === 'number' ? property.minimum : undefined;
      const maximum = typeof property.maximum === 'number' ? property.maximum : undefined;
      const tooSmall = minimum !== undefined && value < minimum;
      const tooBig = maximum !== undefined && value > maximum;
      if (tooSmall || tooBig) {
        if (minimum !== undefined && maximum !== undefined)
          errors.push(fieldErrors.inclusiveBetween(name, value, minimum, maximum));
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
