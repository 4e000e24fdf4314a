import { codeListLookup } from './code-list.js';

/**
 * Time period identifiers: codes, their year format, and the validation and label rules
 * the query uses. The order of TIME_IDENTIFIERS is the reference's enum order.
 */
export type YearFormat = 'Academic' | 'Fiscal' | 'Default';
type LabelFormat = 'full' | 'short' | 'none';

export interface TimeIdentifier {
  code: string;
  label: string;
  yearFormat: YearFormat;
  labelFormat: LabelFormat;
  /** The short label (`Q1`, `Part 1 (Apr to Sep)`) for short-format codes. */
  short?: string;
  /** Position in the reference's enum order: the chronological tie-breaker within a period. */
  order: number;
}

function quarters(prefix: string, labelPrefix: string, yearFormat: YearFormat): Omit<TimeIdentifier, 'order'>[] {
  return [1, 2, 3, 4].map((q) => ({
    code: `${prefix}Q${q}`,
    label: `${labelPrefix} Q${q}`,
    yearFormat,
    labelFormat: 'short' as const,
    short: `Q${q}`,
  }));
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

const IDENTIFIERS_IN_ENUM_ORDER: readonly Omit<TimeIdentifier, 'order'>[] = [
  { code: 'T1', label: 'Autumn term', yearFormat: 'Academic', labelFormat: 'full' },
  { code: 'T2', label: 'Spring term', yearFormat: 'Academic', labelFormat: 'full' },
  { code: 'T1T2', label: 'Autumn and spring term', yearFormat: 'Academic', labelFormat: 'full' },
  { code: 'T3', label: 'Summer term', yearFormat: 'Academic', labelFormat: 'full' },
  { code: 'AY', label: 'Academic year', yearFormat: 'Academic', labelFormat: 'none' },
  ...quarters('AY', 'Academic year', 'Academic'),
  { code: 'CY', label: 'Calendar year', yearFormat: 'Default', labelFormat: 'none' },
  ...quarters('CY', 'Calendar year', 'Default'),
  {
    code: 'P1',
    label: 'Part 1 (April to September)',
    yearFormat: 'Fiscal',
    labelFormat: 'short',
    short: 'Part 1 (Apr to Sep)',
  },
  {
    code: 'P2',
    label: 'Part 2 (October to March)',
    yearFormat: 'Fiscal',
    labelFormat: 'short',
    short: 'Part 2 (Oct to Mar)',
  },
  { code: 'FY', label: 'Financial year', yearFormat: 'Fiscal', labelFormat: 'none' },
  ...quarters('FY', 'Financial year', 'Fiscal'),
  { code: 'TY', label: 'Tax year', yearFormat: 'Fiscal', labelFormat: 'none' },
  ...quarters('TY', 'Tax year', 'Fiscal'),
  { code: 'RY', label: 'Reporting year', yearFormat: 'Default', labelFormat: 'none' },
  ...Array.from({ length: 52 }, (_, i) => ({
    code: `W${i + 1}`,
    label: `Week ${i + 1}`,
    yearFormat: 'Default' as const,
    labelFormat: 'full' as const,
  })),
  ...MONTHS.map((month, i) => ({
    code: `M${i + 1}`,
    label: month,
    yearFormat: 'Default' as const,
    labelFormat: 'full' as const,
  })),
];

/** The time identifiers of the standard, in the reference's enum order; the importer reads them, the query validates with them. */
export const TIME_IDENTIFIERS: readonly TimeIdentifier[] = IDENTIFIERS_IN_ENUM_ORDER.map((t, order) => ({
  ...t,
  order,
}));

const timeIdentifierLookup = codeListLookup(TIME_IDENTIFIERS);
const byCode = new Map(TIME_IDENTIFIERS.map((t) => [t.code, t]));

/** The identifier named by a CSV `time_identifier` label (case-insensitive, as the upstream validator). */
export const timeIdentifierByCsvLabel = timeIdentifierLookup.byCsvLabel;

export function timeIdentifier(code: string): TimeIdentifier | undefined {
  return byCode.get(code);
}

/** Every code, sorted as strings (the reference lists them so in `allowedCodes`). */
export const ALL_TIME_PERIOD_CODES: readonly string[] = TIME_IDENTIFIERS.map((t) => t.code).sort();
/** Codes that may be used with a `YYYY/YYYY` range: the academic and fiscal ones. */
export const RANGE_TIME_PERIOD_CODES: readonly string[] = TIME_IDENTIFIERS.filter((t) => t.yearFormat !== 'Default')
  .map((t) => t.code)
  .sort();

export type TimePeriodProblem =
  | { code: 'TimePeriodAllowedCode'; property: 'code'; allowedCodes: readonly string[] }
  | { code: 'TimePeriodInvalidYear'; property: 'period' }
  | { code: 'TimePeriodInvalidYearRange'; property: 'period' };

/**
 * Validates a `{period, code}` pair: the code first; the period only when the code is valid.
 * Years must be exactly four digits (the reference accepts any digit count and then fails with a 500).
 */
export function validateTimePeriod(period: string, code: string): TimePeriodProblem | undefined {
  const isRange = period.includes('/');
  const identifier = byCode.get(code);
  if (!identifier || (isRange && identifier.yearFormat === 'Default')) {
    return {
      code: 'TimePeriodAllowedCode',
      property: 'code',
      allowedCodes: isRange ? RANGE_TIME_PERIOD_CODES : ALL_TIME_PERIOD_CODES,
    };
  }
  if (!isRange) {
    return /^\d{4}$/.test(period) ? undefined : { code: 'TimePeriodInvalidYear', property: 'period' };
  }
  const match = /^(\d{4})\/(\d{4})$/.exec(period);
  if (!match || Number(match[2]) !== Number(match[1]) + 1)
    return { code: 'TimePeriodInvalidYearRange', property: 'period' };
  return undefined;
}

/**
 * The stored form of a valid pair: academic and fiscal codes always as a range (`2020` → `2020/2021`),
 * others as the single year.
 */
export function normaliseTimePeriod(period: string, code: string): string {
  const identifier = byCode.get(code);
  if (identifier && identifier.yearFormat !== 'Default' && /^\d{4}$/.test(period)) {
    return `${period}/${Number(period) + 1}`;
  }
  return period;
}

/** The human-readable label of a stored period: `2020/21`, `2020-21 Q4`, `2020 Week 5`. */
export function timePeriodLabel(period: string, code: string): string {
  const identifier = byCode.get(code);
  const start = Number(period.slice(0, 4));
  const second = String((start + 1) % 100).padStart(2, '0');
  const format = identifier?.yearFormat ?? 'Default';
  const year = format === 'Academic' ? `${start}/${second}` : format === 'Fiscal' ? `${start}-${second}` : `${start}`;
  if (!identifier || identifier.labelFormat === 'none') return year;
  return `${year} ${identifier.labelFormat === 'full' ? identifier.label : identifier.short}`;
}

/**
 * A CSV `time_period` (`2020` or `202021`) in the API's form (`2020` or `2020/2021`), or undefined when malformed:
 * six digits must be a year and the next one's last two digits (`199900` is 1999/2000).
 */
export function apiPeriodFromCsv(value: string): string | undefined {
  if (/^\d{4}$/.test(value)) return value;
  if (/^\d{6}$/.test(value)) {
    const start = Number(value.slice(0, 4));
    if ((start + 1) % 100 !== Number(value.slice(4))) return undefined;
    return `${start}/${start + 1}`;
  }
  return undefined;
}

/** Chronological order of time periods: by period string, then identifier enum order. */
export function compareTimePeriods(a: { period: string; code: string }, b: { period: string; code: string }): number {
  if (a.period !== b.period) return a.period < b.period ? -1 : 1;
  return (byCode.get(a.code)?.order ?? 0) - (byCode.get(b.code)?.order ?? 0);
}
