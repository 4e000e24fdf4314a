/**
 * Ordinal (code-unit) string order, the one text order of the statistics API: the reference sorts labels so
 * (`Year 10` before `Year 4`), and its database orders text so.
 */
export function compareOrdinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
