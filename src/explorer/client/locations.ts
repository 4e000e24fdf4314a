import type { Meta } from './api.js';

/**
 * Location labels, with the code beside the name where two locations of the data set share a name (the two
 * "Dorset"s of 2019 onwards).
 */
export function locationLabels(meta: Meta): Map<string, string> {
  const counts = new Map<string, number>();
  for (const g of meta.locations) for (const o of g.options) counts.set(o.label, (counts.get(o.label) ?? 0) + 1);
  const out = new Map<string, string>();
  for (const g of meta.locations) {
    for (const o of g.options) {
      const code = o.code ?? o.urn ?? o.ukprn ?? o.laEstab ?? o.oldCode;
      out.set(`${g.level.code}|${o.id}`, (counts.get(o.label) ?? 0) > 1 && code ? `${o.label} (${code})` : o.label);
    }
  }
  return out;
}
