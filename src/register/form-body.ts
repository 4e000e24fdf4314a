/**
 * `application/x-www-form-urlencoded` bodies with Rails-style keys, read into the same shape as a JSON body, as the
 * real service's parameter parser reads them:
 *   `data[first_names]=Ann`               → { data: { first_names: 'Ann' } }
 *   `data[reasons][]=a&data[reasons][]=b` → { data: { reasons: ['a', 'b'] } }
 *   `data[p][][urn]=1&data[p][][urn]=2`   → { data: { p: [{ urn: '1' }, { urn: '2' }] } } (a repeated key starts a new item)
 *   `data[p][0][urn]=1`                   → { data: { p: { 0: { urn: '1' } } } } (index-keyed hashes, as Rails keeps them)
 *   `data[hesa_id]` (no `=`)              → { data: { hesa_id: null } }
 * A later scalar replaces an earlier one. Keys nest at most FORM_MAX_DEPTH levels; conflicting shapes (`a=1&a[b]=2`)
 * and deeper keys are refused with a FormBodyError (400).
 */

export const FORM_MAX_DEPTH = 32;

export class FormBodyError extends Error {}

type FormValue = string | null | FormObject | FormValue[];
interface FormObject {
  [key: string]: FormValue;
}

function decode(text: string): string {
  const plus = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(plus);
  } catch {
    throw new FormBodyError('The request body is not valid form data (bad percent-encoding).');
  }
}

/** `data[a][][b]` → ['data', 'a', '', 'b']; a key without brackets is one segment. */
function keySegments(key: string): string[] {
  const open = key.indexOf('[');
  if (open <= 0) return [key];
  const segments = [key.slice(0, open)];
  let rest = key.slice(open);
  while (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) break;
    segments.push(rest.slice(1, close));
    rest = rest.slice(close + 1);
  }
  // Text after the last bracket pair (`a[b]c`) is ignored, as Rack does.
  return segments;
}

/** Hashes without a prototype, so keys such as `__proto__` are plain keys. */
const newObject = (): FormObject => Object.create(null) as FormObject;

const isObject = (value: unknown): value is FormObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

function conflict(key: string): never {
  throw new FormBodyError(`The request body is not valid form data: conflicting shapes for '${key}'.`);
}

function assign(target: FormObject, segments: string[], value: string | null, fullKey: string): void {
  const [head, ...rest] = segments;
  if (head === undefined) return; // keySegments gives at least one segment
  if (rest.length === 0) {
    target[head] = value;
    return;
  }
  const [next, ...after] = rest;
  if (next === '') {
    // Array segment.
    const existing = target[head];
    const list = existing === undefined ? [] : Array.isArray(existing) ? existing : conflict(fullKey);
    target[head] = list;
    if (after.length === 0) {
      list.push(value);
      return;
    }
    // `a[][b]=…`: add to the last hash unless it already holds that key (then start a new one).
    const last = list[list.length - 1];
    if (isObject(last) && !(after.length === 1 && after[0]! in last) && !(after.length > 1 && keyTaken(last, after))) {
      assign(last, after, value, fullKey);
    } else {
      const item = newObject();
      list.push(item);
      assign(item, after, value, fullKey);
    }
    return;
  }
  const existing = target[head];
  const child = existing === undefined ? newObject() : isObject(existing) ? existing : conflict(fullKey);
  target[head] = child;
  assign(child, rest, value, fullKey);
}

/** Whether the nested path `segments` already ends at a value in `item` (Rack then starts a new array item). */
function keyTaken(item: FormObject, segments: string[]): boolean {
  let node: FormValue | undefined = item;
  for (const segment of segments) {
    if (segment === '') return false;
    if (!isObject(node)) return false;
    node = node[segment];
    if (node === undefined) return false;
  }
  return !isObject(node);
}

/**
 * The most `key=value` pairs a form body may have (a bound of ours; a full trainee with 20 degrees and 50
 * placements is under 1,000). A longer body is refused when the count is passed, before the rest is read.
 */
export const FORM_MAX_PAIRS = 4096;

const SEPARATOR = /[&;]/g;

export function parseRailsForm(body: string): Record<string, unknown> {
  const result = newObject();
  let pairs = 0;
  let start = 0;
  SEPARATOR.lastIndex = 0;
  while (start <= body.length) {
    const match = SEPARATOR.exec(body);
    const end = match ? match.index : body.length;
    const pair = body.slice(start, end);
    start = end + 1;
    if (pair === '') continue;
    if (++pairs > FORM_MAX_PAIRS)
      throw new FormBodyError(`The request body is not valid form data: more than ${FORM_MAX_PAIRS} parameters.`);
    const eq = pair.indexOf('=');
    const key = decode(eq < 0 ? pair : pair.slice(0, eq));
    if (key === '') continue;
    const value = eq < 0 ? null : decode(pair.slice(eq + 1));
    const segments = keySegments(key);
    if (segments.length > FORM_MAX_DEPTH)
      throw new FormBodyError(`The request body is not valid form data: '${key.slice(0, 100)}' nests too deeply.`);
    assign(result, segments, value, key);
  }
  return result;
}
