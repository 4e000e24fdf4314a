/**
 * Bytes a kept value of plain data (strings, numbers, arrays, objects) holds in memory, approximately: its strings are
 * UTF-16 and each object has a header, about twice the length of its JSON. What the statistics caches count against
 * their byte budgets (each adds its own per-entry overhead).
 */
export function approximateHeldBytes(value: unknown): number {
  return JSON.stringify(value).length * 2;
}
