import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { expect } from 'vitest';
import { HOSTILE_STRINGS } from './helpers.js';
import { scaledMs } from '../helpers/machine-speed.js';

/**
 * Adversarial request shapes shared by the per-API fuzz tests: deep and wide JSON, wrong types, objects where
 * strings are expected, and bodies whose encoding is not what their headers say. Each API's test maps these onto
 * its own endpoints and checks every answer for what any request may cost: no 5xx, a bounded body, a bounded time.
 */

/** The largest body any refusal may have, and the most a generated request may take on a loaded 2-core machine. */
export const MAX_BODY_BYTES = 64 * 1024;
/** A successful answer is a page: bounded by the largest page size, not by the error bound. */
export const MAX_PAGE_BODY_BYTES = 8 * 1024 * 1024;
/** Set on the reference machine; times its measured slowness here (test/helpers/machine-speed.ts). */
export const MAX_REQUEST_MS = scaledMs(3000);

export const scalarArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 12 }) },
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  // Objects where strings are expected: toString/valueOf traps and prototype keys.
  fc.constantFrom(
    { toString: 1 },
    { valueOf: 'x' },
    { __proto__: { polluted: true } },
    { constructor: { prototype: { polluted: true } } },
    {},
    [],
  ),
);

/** Nested `depth` levels of arrays or objects around `leaf`. */
function nest(depth: number, leaf: unknown, asArray: boolean, key: string): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = asArray ? [value] : { [key]: value };
  return value;
}

/** How wide a list or object is: mostly a few items, sometimes around the 10,000-item limit of the JSON parsers. */
const sizeArb = fc.oneof(
  { weight: 20, arbitrary: fc.integer({ min: 0, max: 200 }) },
  fc.integer({ min: 9_990, max: 10_010 }),
);

/** Deep (up to 150 levels), wide (up to 12,000 items or members), or random JSON of modest size. */
export const adversarialValueArb = (keys: readonly string[]): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 4, arbitrary: scalarArb },
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: 150 }), scalarArb, fc.boolean(), fc.constantFrom(...keys))
        .map(([d, leaf, a, k]) => nest(d, leaf, a, k)),
    },
    { weight: 2, arbitrary: fc.tuple(sizeArb, scalarArb).map(([n, item]) => new Array(n).fill(item)) },
    {
      weight: 1,
      arbitrary: sizeArb.map((n) =>
        Object.fromEntries(Array.from({ length: n }, (_, i) => [`${keys[i % keys.length]}${i}`, i])),
      ),
    },
    { weight: 2, arbitrary: fc.array(scalarArb, { maxLength: 6 }) },
    { weight: 2, arbitrary: fc.dictionary(fc.constantFrom(...keys), scalarArb, { maxKeys: 4 }) },
  );

/** A JSON body built from known member names: each member some adversarial value. */
export const adversarialObjectArb = (keys: readonly string[]): fc.Arbitrary<Record<string, unknown>> =>
  fc.dictionary(fc.constantFrom(...keys), adversarialValueArb(keys), { maxKeys: 4 });

export interface EncodedBody {
  headers: Record<string, string>;
  payload: string | Buffer;
}

/** The body as sent: JSON (mostly), or with a misleading content type or encoding, or as bytes that are not UTF-8. */
export const encodedBodyArb = (value: unknown): fc.Arbitrary<EncodedBody> => {
  const json = JSON.stringify(value) ?? 'null';
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant({ headers: { 'content-type': 'application/json' }, payload: json }) },
    fc.constant({
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: gzipSync(json),
    }),
    fc.constant({ headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: json }),
    fc.constant({ headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' }, payload: json }),
    fc.constant({ headers: { 'content-type': 'application/json', 'content-encoding': 'x-unknown' }, payload: json }),
    fc.constant({ headers: { 'content-type': 'application/json; charset=utf-16' }, payload: json }),
    fc.constant({
      headers: { 'content-type': 'application/json' },
      payload: Buffer.concat([
        Buffer.from(json.slice(0, 10)),
        Buffer.from([0xff, 0xfe, 0xc3]),
        Buffer.from(json.slice(10)),
      ]),
    }),
    fc.constant({
      headers: { 'content-type': 'application/json' },
      payload: `${json.slice(0, Math.max(1, json.length - 1))}`,
    }),
    fc.constant({ headers: { 'content-type': 'text/plain' }, payload: json }),
    fc.constant({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: formOf(value) }),
    fc.constant({ headers: {}, payload: json }),
  );
};

/** Rails-style form pairs for `value` (at most 5,000 pairs), brackets and all. */
function formOf(value: unknown, prefix = 'data', pairs: string[] = []): string {
  if (pairs.length > 5000) return pairs.join('&');
  if (Array.isArray(value)) for (const item of value.slice(0, 5000)) formOf(item, `${prefix}[]`, pairs);
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value).slice(0, 5000)) formOf(v, `${prefix}[${k}]`, pairs);
  else
    pairs.push(
      `${encodeURIComponent(prefix).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${encodeURIComponent(String(value))}`,
    );
  return pairs.join('&');
}

/** A query string of known and unknown keys with adversarial values, repeated and indexed keys included. */
export const queryStringArb = (keys: readonly string[]): fc.Arbitrary<string> =>
  fc
    .array(
      fc.tuple(
        fc.oneof(
          { weight: 5, arbitrary: fc.constantFrom(...keys) },
          fc.string({ maxLength: 8 }),
          fc.constantFrom(...keys).map((k) => `${k}[0]`),
        ),
        fc.oneof(
          fc.string({ maxLength: 10 }),
          fc.constantFrom(...HOSTILE_STRINGS),
          fc.integer().map(String),
          fc.constant(new Array(500).fill('X').join(',')),
        ),
      ),
      { maxLength: 6 },
    )
    .map((params) => params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));

/**
 * Sends every request (a few at once, so database round trips overlap) and checks each answer: not a 5xx, a body of
 * at most MAX_BODY_BYTES (a refusal; a page at most MAX_PAGE_BODY_BYTES), answered within MAX_REQUEST_MS. Returns the statuses seen, for the test to show the
 * requests reached more than the first refusal.
 */
export async function sendAll(
  app: FastifyInstance,
  requests: InjectOptions[],
  concurrency = 8,
): Promise<Map<number, number>> {
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const request = requests[next++]!;
      const started = performance.now();
      const response = await app.inject(request);
      const ms = performance.now() - started;
      const what = `${request.method} ${JSON.stringify(request.url ?? '').slice(0, 200)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
      expect(response.statusCode, what).toBeLessThan(500);
      expect(response.rawPayload.byteLength, what).toBeLessThanOrEqual(
        response.statusCode >= 400 ? MAX_BODY_BYTES : MAX_PAGE_BODY_BYTES,
      );
      expect(ms, what).toBeLessThan(MAX_REQUEST_MS);
      statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return statuses;
}
