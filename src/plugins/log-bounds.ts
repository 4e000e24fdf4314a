/**
 * Bounds on what one log line may hold, so no request can make the service write more log than a few KB however
 * large or odd its input: values are shortened before a line is built (strings, lists, objects, nesting), and a line
 * that is still over LOG_LINE_MAX_BYTES is replaced by a short line saying so. See docs/operations.md (Logs).
 */
import type { LoggerOptions } from 'pino';

/** The longest log line written, in bytes (a 5xx with its stack fits; a line built from a request body does not). */
export const LOG_LINE_MAX_BYTES = 8192;
/** The longest string value logged; longer ones keep their start and say how much was cut. */
export const LOG_STRING_MAX_CHARS = 1024;
const LOG_LIST_MAX_ITEMS = 20;
const LOG_OBJECT_MAX_KEYS = 40;
const LOG_MAX_DEPTH = 4;

function boundString(value: string): string {
  return value.length > LOG_STRING_MAX_CHARS
    ? `${value.slice(0, LOG_STRING_MAX_CHARS)}…(+${value.length - LOG_STRING_MAX_CHARS} chars)`
    : value;
}

/** A copy of `value` within the bounds above; errors are left to pino's error serializer (their line is capped). */
export function boundLogValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return boundString(value);
  if (value === null || typeof value !== 'object' || value instanceof Error || value instanceof Date) return value;
  if (depth >= LOG_MAX_DEPTH) return Array.isArray(value) ? `[list of ${value.length}]` : '[object]';
  if (Array.isArray(value)) {
    const items = value.slice(0, LOG_LIST_MAX_ITEMS).map((item) => boundLogValue(item, depth + 1));
    if (value.length > LOG_LIST_MAX_ITEMS) items.push(`…(+${value.length - LOG_LIST_MAX_ITEMS} items)`);
    return items;
  }
  const result: Record<string, unknown> = {};
  let keys = 0;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (++keys > LOG_OBJECT_MAX_KEYS) {
      result['…'] = 'more keys left out';
      break;
    }
    result[key] = boundLogValue((value as Record<string, unknown>)[key], depth + 1);
  }
  return result;
}

export interface LineDestination {
  write(line: string): unknown;
}

/** Writes lines to `destination`, replacing one over `maxBytes` by a short valid JSON line with its level and size. */
export function cappedLines(destination: LineDestination, maxBytes = LOG_LINE_MAX_BYTES): LineDestination {
  return {
    write(line: string) {
      // Characters ≤ bytes ≤ 3 × characters (UTF-16 to UTF-8): the exact count only near the cap.
      if (line.length * 3 <= maxBytes || (line.length <= maxBytes && Buffer.byteLength(line) <= maxBytes))
        return destination.write(line);
      const head = /^\{"level":(\d+),"time":(\d+)/.exec(line);
      const msg = /"msg":"((?:[^"\\]|\\.){0,200})/.exec(line);
      return destination.write(
        `${JSON.stringify({
          level: head ? Number(head[1]) : 30,
          time: head ? Number(head[2]) : Date.now(),
          msg: `log line of ${Buffer.byteLength(line)} bytes left out (over ${maxBytes})`,
          start: line.slice(0, 500),
          ...(msg ? { originalMsg: msg[1] } : {}),
        })}\n`,
      );
    },
  };
}

/** The service's logger options: `level`, redaction, and the bounds above, writing to `destination`. */
export function boundedLoggerOptions(
  options: { level: string; redact: string[] },
  destination: LineDestination = process.stdout,
): LoggerOptions & { stream: LineDestination } {
  return {
    level: options.level,
    redact: { paths: options.redact, censor: '[redacted]' },
    formatters: { log: (object) => boundLogValue(object) as Record<string, unknown> },
    hooks: {
      // A message (or printf argument) built from input is shortened like any other string.
      logMethod(args, method) {
        return method.apply(
          this,
          args.map((arg) => (typeof arg === 'string' ? boundString(arg) : arg)) as Parameters<typeof method>,
        );
      },
    },
    stream: cappedLines(destination),
  };
}
