import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';
import { nextTurn, whileBusy } from '../event-loop.js';

type CompilersFactory = Required<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
>;

type Serializer = (data: unknown) => string;
type Validator = ((data: unknown) => unknown) & { errors?: unknown };
interface RouteSchema {
  schema?: unknown;
  httpPart?: string;
}

/**
 * Route schemas compiled on a route's first request instead of when the app starts: Fastify compiles every route's
 * request validators (Ajv) and response serializers (fast-json-stringify) before it listens, and with 216 routes (the
 * statistics API at four prefixes, three register versions) that was nearly half of the server's start. A route's
 * first request now compiles its own, once (a few ms), and each schema is compiled once per app however many routes
 * share it (the statistics prefixes share theirs). `compileAll` compiles whatever is still pending, one schema per
 * turn of the event loop: the server's warm-up runs it before the instance says ready, paused while a row index loads
 * (compiling alongside delays the first row index; src/app.ts), and a test runs it on the whole app, so a
 * schema that does not compile fails there.
 */
export interface DeferredSchemaCompilers {
  /** For Fastify's `schemaController.compilersFactory`. */
  compilersFactory: CompilersFactory;
  /**
   * Compiles every schema not yet compiled, one per event-loop turn (waiting while `pauseWhile` says so); resolves
   * with how many it compiled.
   */
  compileAll: (options?: { pauseWhile?: () => boolean }) => Promise<number>;
}

export function deferredSchemaCompilers(): DeferredSchemaCompilers {
  const pending = new Set<() => void>();

  /** `compile` deferred until the first call (or compileAll); one per schema object. */
  function deferring<F extends (data: unknown) => unknown>(
    compileFor: (route: RouteSchema) => F,
    wrap: (get: () => F) => F,
  ) {
    const bySchema = new WeakMap<object, F>();
    return (route: RouteSchema): F => {
      const key = typeof route.schema === 'object' && route.schema !== null ? route.schema : undefined;
      const shared = key && bySchema.get(key);
      if (shared) return shared;
      let compiled: F | undefined;
      const compile = () => {
        pending.delete(compile);
        compiled ??= compileFor(route);
      };
      pending.add(compile);
      const deferred = wrap(() => {
        if (!compiled) compile();
        return compiled!;
      });
      if (key) bySchema.set(key, deferred);
      return deferred;
    };
  }

  const validators = AjvCompiler();
  const serializers = SerializerSelector();
  return {
    compilersFactory: {
      // The libraries' typings say a compiler takes a schema; Fastify calls it with the route's `{ schema, … }`.
      buildValidator: ((externalSchemas: unknown, options: unknown) => {
        // Its Ajv instance too (each schema scope gets one, and each compiles Ajv's meta-schema).
        let compiler: ((route: RouteSchema) => Validator) | undefined;
        const compileFor = (route: RouteSchema) => {
          compiler ??= validators(externalSchemas as never, options as never) as unknown as (
            route: RouteSchema,
          ) => Validator;
          return compiler(route);
        };
        return deferring(
          // A custom validator compiler gets header schemas as written: lower-cased here, as Fastify's own does.
          (route) =>
            compileFor(route.httpPart === 'headers' ? { ...route, schema: lowerCaseHeaderNames(route.schema) } : route),
          (get) => {
            // Fastify reads a failed validation's `errors` from the function it called.
            const validator: Validator = (data) => {
              const compiled = get();
              const result = compiled(data);
              validator.errors = compiled.errors;
              return result;
            };
            return validator;
          },
        );
      }) as unknown as CompilersFactory['buildValidator'],
      buildSerializer: (externalSchemas: unknown, options: unknown) => {
        // Only the shared schemas a response refers to: fast-json-stringify checks the depth and validity of every
        // one it is given on every compile (all the scope's: most of the time of compiling the whole app).
        const shared = (externalSchemas ?? {}) as Record<string, unknown>;
        const compileFor = (route: RouteSchema) =>
          (
            serializers(referencedSchemas(route.schema, shared), options as never) as (route: RouteSchema) => Serializer
          )(route);
        return deferring(compileFor, (get) => (data) => get()(data));
      },
    },
    async compileAll(options = {}) {
      let count = 0;
      for (const compile of [...pending]) {
        await nextTurn();
        if (options.pauseWhile) await whileBusy(options.pauseWhile);
        if (!pending.has(compile)) continue;
        compile();
        count++;
      }
      return count;
    },
  };
}

/**
 * The schemas of `shared` (by `$id`) that `schema` refers to with `$ref`, directly or through one another. A `$ref`
 * names a shared schema by its `$id`, possibly followed by a `#` pointer into it.
 */
export function referencedSchemas(schema: unknown, shared: Record<string, unknown>): Record<string, unknown> {
  const found: Record<string, unknown> = {};
  const pending: unknown[] = [schema];
  const seen = new Set<unknown>();
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== 'object' || value === null || seen.has(value)) continue;
    seen.add(value);
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') {
        const id = child.split('#')[0]!;
        if (id !== '' && !(id in found) && id in shared) {
          found[id] = shared[id];
          pending.push(shared[id]);
        }
      } else if (typeof child === 'object') {
        pending.push(child);
      }
    }
  }
  return found;
}

/** An object schema's property names (and `required`) in lower case: Node gives header names in lower case. */
function lowerCaseHeaderNames(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const { properties, required } = schema as { properties?: Record<string, unknown>; required?: string[] };
  return {
    ...schema,
    ...(properties
      ? {
          properties: Object.fromEntries(
            Object.entries(properties).map(([name, value]) => [name.toLowerCase(), value]),
          ),
        }
      : {}),
    ...(required ? { required: required.map((name) => name.toLowerCase()) } : {}),
  };
}
