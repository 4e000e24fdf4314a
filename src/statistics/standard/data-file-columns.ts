/**
 * The EES data file standard as the importer reads it: time identifiers with
 * their CSV labels, geographic levels with their location columns, time period forms and labels, indicator units.
 */
import { TIME_IDENTIFIERS as QUERY_TIME_IDENTIFIERS, timePeriodLabel, type TimeIdentifier } from './time-periods.js';

/** Lookups in a code list of the standard: by its CSV label (any case, surrounding spaces ignored) and by code. */
function codeListLookup<T extends { code: string; label: string }>(entries: readonly T[]) {
  const byLabel = new Map(entries.map((e) => [e.label.toLowerCase(), e]));
  const byCode = new Map(entries.map((e) => [e.code, e]));
  return {
    byCsvLabel: (label: string): T | undefined => byLabel.get(label.trim().toLowerCase()),
    byCode: (code: string): T | undefined => byCode.get(code),
  };
}

/** The time identifiers of the standard, in the reference's enum order; one table shared with the query. */
export interface TimeIdentifierInfo extends TimeIdentifier {
  /** Position in the reference's enum order: the chronological tie-breaker within a period. */
  order: number;
}

export const TIME_IDENTIFIERS: readonly TimeIdentifierInfo[] = QUERY_TIME_IDENTIFIERS.map((t, order) => ({ ...t, order }));
const timeIdentifierLookup = codeListLookup(TIME_IDENTIFIERS);

/** The identifier named by a CSV `time_identifier` label (case-insensitive, as the upstream validator). */
export const timeIdentifierByCsvLabel = timeIdentifierLookup.byCsvLabel;
export const timeIdentifierByCodeOf = timeIdentifierLookup.byCode;

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

/** The period in the CSV form again (`2020/2021` → `202021`). */
export function csvPeriodFromApi(period: string): string {
  const [start, end] = period.split('/');
  return end === undefined ? start! : `${start}${end.slice(2)}`;
}

/** The time period label: `2020/21`, `2020-21 Q4`, `2020 Week 5`. */
export { timePeriodLabel };

/** Chronological order of time periods: by period string, then identifier enum order. */
export function compareTimePeriods(a: { period: string; code: string }, b: { period: string; code: string }): number {
  if (a.period !== b.period) return a.period < b.period ? -1 : 1;
  return (timeIdentifierByCodeOf(a.code)?.order ?? 0) - (timeIdentifierByCodeOf(b.code)?.order ?? 0);
}

export type LocationCodeField = 'code' | 'old_code' | 'urn' | 'la_estab' | 'ukprn';

export interface GeographicLevelInfo {
  code: string;
  /** The CSV `geographic_level` value and the API label. */
  label: string;
  /** CSV code columns and the `locations` column each fills. */
  codeColumns: ReadonlyArray<{ column: string; field: LocationCodeField }>;
  nameColumn: string;
}

const coded = (code: string, label: string, codeColumn: string, nameColumn: string): GeographicLevelInfo => ({
  code,
  label,
  codeColumns: [{ column: codeColumn, field: 'code' }],
  nameColumn,
});

export const GEOGRAPHIC_LEVELS: readonly GeographicLevelInfo[] = [
  coded('EDA', 'English devolved area', 'english_devolved_area_code', 'english_devolved_area_name'),
  coded('INST', 'Institution', 'institution_id', 'institution_name'),
  {
    code: 'LA',
    label: 'Local authority',
    codeColumns: [
      { column: 'new_la_code', field: 'code' },
      { column: 'old_la_code', field: 'old_code' },
    ],
    nameColumn: 'la_name',
  },
  coded('LAD', 'Local authority district', 'lad_code', 'lad_name'),
  coded('LEP', 'Local enterprise partnership', 'local_enterprise_partnership_code', 'local_enterprise_partnership_name'),
  coded('LSIP', 'Local skills improvement plan area', 'lsip_code', 'lsip_name'),
  coded('MAT', 'MAT', 'trust_id', 'trust_name'),
  coded('MCA', 'Mayoral combined authority', 'mayoral_combined_authority_code', 'mayoral_combined_authority_name'),
  coded('NAT', 'National', 'country_code', 'country_name'),
  coded('OA', 'Opportunity area', 'opportunity_area_code', 'opportunity_area_name'),
  coded('PA', 'Planning area', 'planning_area_code', 'planning_area_name'),
  coded('PCON', 'Parliamentary constituency', 'pcon_code', 'pcon_name'),
  coded('PFA', 'Police force area', 'pfa_code', 'pfa_name'),
  { code: 'PROV', label: 'Provider', codeColumns: [{ column: 'provider_ukprn', field: 'ukprn' }], nameColumn: 'provider_name' },
  coded('REG', 'Regional', 'region_code', 'region_name'),
  { code: 'RSC', label: 'RSC region', codeColumns: [], nameColumn: 'rsc_region_lead_name' },
  {
    code: 'SCH',
    label: 'School',
    codeColumns: [
      { column: 'school_urn', field: 'urn' },
      { column: 'school_laestab', field: 'la_estab' },
    ],
    nameColumn: 'school_name',
  },
  coded('SPON', 'Sponsor', 'sponsor_id', 'sponsor_name'),
  coded('WARD', 'Ward', 'ward_code', 'ward_name'),
];

const levelLookup = codeListLookup(GEOGRAPHIC_LEVELS);

/** The level named by a CSV `geographic_level` label (case-insensitive, as the upstream validator). */
export const geographicLevelByCsvLabel = levelLookup.byCsvLabel;
export const geographicLevelByCode = levelLookup.byCode;

/** A geographic level as the changes and metadata show it: its code and its label (the code when unknown). */
export function levelView(code: string): { code: string; label: string } {
  return { code, label: geographicLevelByCode(code)?.label ?? code };
}

/** Every column the standard gives a fixed meaning (time, level, location columns). */
export const FIXED_COLUMNS: ReadonlySet<string> = new Set([
  'time_period',
  'time_identifier',
  'geographic_level',
  ...GEOGRAPHIC_LEVELS.flatMap((l) => [l.nameColumn, ...l.codeColumns.map((c) => c.column)]),
]);

export const MANDATORY_DATA_COLUMNS = ['time_period', 'time_identifier', 'geographic_level'] as const;

/** Meta CSV `indicator_unit` values and the unit label the API shows. */
export const INDICATOR_UNITS: Readonly<Record<string, string>> = {
  '': '',
  '%': '%',
  '£': '£',
  '£m': '£m',
  pp: 'pp',
  numberstring: 'string',
};

