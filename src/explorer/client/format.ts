import type { IndicatorMeta } from './api.js';

const formats = new Map<number | undefined, Intl.NumberFormat>();

/**
 * One formatter per number of decimal places: `toLocaleString` with options builds a new one on every call, which
 * made formatting 36,000 cells take 2.8 s in the pivot (measured); a kept formatter takes a few ms.
 */
function numberFormat(dp: number | undefined): Intl.NumberFormat {
  let format = formats.get(dp);
  if (!format) {
    format = new Intl.NumberFormat('en-GB', dp === undefined ? { maximumFractionDigits: 20 } : { minimumFractionDigits: dp, maximumFractionDigits: dp });
    formats.set(dp, format);
  }
  return format;
}

/** A cell value as the table shows it: numbers grouped in thousands with the indicator's decimal places and unit. */
export function formatValue(raw: string | undefined, indicator: Pick<IndicatorMeta, 'unit' | 'decimalPlaces'>): string {
  if (raw === undefined || raw === '') return '';
  if (!/^-?\d+(\.\d+)?$/.test(raw.trim())) return raw; // suppression codes (c, x, z, low, ...) as they are
  const text = numberFormat(indicator.decimalPlaces).format(Number(raw));
  switch (indicator.unit) {
    case '%':
      return `${text}%`;
    case '£':
      return `£${text}`;
    case '£m':
      return `£${text}m`;
    case 'pp':
      return `${text}pp`;
    default:
      return text;
  }
}

/** A number for the chart, or undefined for suppressed and non-numeric cells. */
export function numericValue(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^-?\d+(\.\d+)?$/.test(raw.trim())) return undefined;
  return Number(raw);
}

/** `5 June 2025` (dates of publication, in UK time). */
export function formatDate(iso: string | undefined): string {
  if (!iso) return 'Not published';
  return new Date(iso).toLocaleDateString('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'Europe/London' });
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-GB')} ${n === 1 ? one : many}`;
}
