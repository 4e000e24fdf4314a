import type { IndicatorMeta } from './api.js';

const formats = new Map<number | undefined, Intl.NumberFormat>();

/**
 * One formatter per number of decimal places: `toLocaleString` with options builds a new one on every call, which
 * made formatting 36,000 cells take 2.8 s in the pivot (measured); a kept formatter takes a few ms.
 */
function numberFormat(dp: number | undefined): Intl.NumberFormat {
  let format = formats.get(dp);
  if (!format) {
    format = new Intl.NumberFormat(
      'en-GB',
      dp === undefined ? { maximumFractionDigits: 20 } : { minimumFractionDigits: dp, maximumFractionDigits: dp },
    );
    formats.set(dp, format);
  }
  return format;
}

/**
 * Compares two names in English order. One collator for all: `localeCompare` with a locale builds a new one on every
 * call (6 ms of a 10,000-row cross-tab's pivot, measured).
 */
export const compareNames: (a: string, b: string) => number = new Intl.Collator('en-GB').compare;

/** A decimal that Intl shows from its own digits: no leading zeros, at most 15 significant digits (exact in a double). */
const PLAIN_NUMBER = /^(-?)(0|[1-9]\d{0,14})(?:\.(\d{1,14}))?$/;

/**
 * The value rounded (half away from zero) to the indicator's decimal places and grouped in thousands, worked on its
 * digits; undefined where only Intl can say (more than 15 significant digits). Same text as Intl's en-GB format (a
 * unit test compares the two on 20,000 values at five settings of decimal places): Intl rounds the shortest decimal
 * that gives the same double, which for up to 15 significant digits is the text itself, so a tie ("2.675" to two
 * places) rounds away from zero as the digits say, and with no decimal places set trailing zeros go. Intl is not
 * asked at all for such values: building the first formatter took 30 ms of a cold page's pivot (Node, 7 ties among
 * the 10,000 cells of the benchmark's cross-tab).
 */
function formatDigits(raw: string, dp: number | undefined): string | undefined {
  const match = PLAIN_NUMBER.exec(raw);
  if (!match) return undefined;
  const [, sign, whole, fraction = ''] = match as unknown as [string, string, string, string | undefined];
  if (whole.length + fraction.length > 15) return undefined;
  let digits = whole + fraction;
  let places = fraction.length;
  if (dp === undefined) {
    const kept = fraction.replace(/0+$/, '');
    digits = digits.slice(0, digits.length - (fraction.length - kept.length));
    places = kept.length;
  } else if (places < dp) {
    digits += '0'.repeat(dp - places);
    places = dp;
  } else if (places > dp) {
    const rest = digits.slice(digits.length - (places - dp));
    digits = digits.slice(0, digits.length - rest.length);
    places = dp;
    if (rest[0]! >= '5') digits = addOne(digits);
  }
  const wholeDigits = digits.slice(0, digits.length - places).replace(/^0+(?=\d)/, '') || '0';
  const grouped = wholeDigits.length > 3 ? wholeDigits.replace(/\B(?=(\d{3})+$)/g, ',') : wholeDigits;
  return `${sign}${grouped}${places ? `.${digits.slice(digits.length - places)}` : ''}`;
}

/** A string of digits plus one: "199" → "200", "99" → "100". */
function addOne(digits: string): string {
  let i = digits.length - 1;
  while (i >= 0 && digits[i] === '9') i--;
  return i < 0
    ? `1${'0'.repeat(digits.length)}`
    : `${digits.slice(0, i)}${Number(digits[i]) + 1}${'0'.repeat(digits.length - i - 1)}`;
}

/** A cell value as the table shows it: numbers grouped in thousands with the indicator's decimal places and unit. */
export function formatValue(raw: string | undefined, indicator: Pick<IndicatorMeta, 'unit' | 'decimalPlaces'>): string {
  if (raw === undefined || raw === '') return '';
  if (!/^-?\d+(\.\d+)?$/.test(raw.trim())) return raw; // suppression codes (c, x, z, low, ...) as they are
  const text = formatDigits(raw, indicator.decimalPlaces) ?? numberFormat(indicator.decimalPlaces).format(Number(raw));
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
  return new Date(iso).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'long',
    year: 'numeric',
    timeZone: 'Europe/London',
  });
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-GB')} ${n === 1 ? one : many}`;
}
