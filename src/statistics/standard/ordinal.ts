/**
 * Ordinal (code-unit) string order, the one text order of the statistics API: the reference sorts labels so
 * (`Year 10` before `Year 4`), and its database orders text so.
 */
export function compareOrdinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Natural, case-insensitive order: the reference's `NaturalOrderBy` (NaturalSort.Extension with
 * `OrdinalIgnoreCase`), which orders the change entries its processor stores (`Year 4` before `Year 10`). Runs of
 * digits compare by value, other runs ignoring case; ordinal order breaks the remaining ties.
 */
export function compareNatural(a: string, b: string): number {
  const tokensA = a.match(/\d+|\D+/g) ?? [];
  const tokensB = b.match(/\d+|\D+/g) ?? [];
  for (let i = 0; i < Math.min(tokensA.length, tokensB.length); i++) {
    const x = tokensA[i]!;
    const y = tokensB[i]!;
    const numeric = /^\d/.test(x) && /^\d/.test(y);
    const result = numeric ? compareDigits(x, y) : compareOrdinal(x.toUpperCase(), y.toUpperCase());
    if (result !== 0) return result;
  }
  return tokensA.length - tokensB.length || compareOrdinal(a, b);
}

/** Two runs of digits by value, whatever their length (no number overflow). */
function compareDigits(x: string, y: string): number {
  const p = x.replace(/^0+(?=\d)/, '');
  const q = y.replace(/^0+(?=\d)/, '');
  return p.length - q.length || compareOrdinal(p, q);
}
