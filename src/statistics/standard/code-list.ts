/** Lookups in a code list of the standard: by its CSV label (any case, surrounding spaces ignored) and by code. */
export function codeListLookup<T extends { code: string; label: string }>(entries: readonly T[]) {
  const byLabel = new Map(entries.map((e) => [e.label.toLowerCase(), e]));
  const byCode = new Map(entries.map((e) => [e.code, e]));
  return {
    byCsvLabel: (label: string): T | undefined => byLabel.get(label.trim().toLowerCase()),
    byCode: (code: string): T | undefined => byCode.get(code),
  };
}
