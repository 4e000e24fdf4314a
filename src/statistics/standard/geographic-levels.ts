import { codeListLookup } from './code-list.js';

/**
 * Geographic levels: the one table of the data file standard (codes, labels, CSV location columns), and the location
 * properties a query may identify a location by.
 */

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
  coded(
    'LEP',
    'Local enterprise partnership',
    'local_enterprise_partnership_code',
    'local_enterprise_partnership_name',
  ),
  coded('LSIP', 'Local skills improvement plan area', 'lsip_code', 'lsip_name'),
  coded('MAT', 'MAT', 'trust_id', 'trust_name'),
  coded('MCA', 'Mayoral combined authority', 'mayoral_combined_authority_code', 'mayoral_combined_authority_name'),
  coded('NAT', 'National', 'country_code', 'country_name'),
  coded('OA', 'Opportunity area', 'opportunity_area_code', 'opportunity_area_name'),
  coded('PA', 'Planning area', 'planning_area_code', 'planning_area_name'),
  coded('PCON', 'Parliamentary constituency', 'pcon_code', 'pcon_name'),
  coded('PFA', 'Police force area', 'pfa_code', 'pfa_name'),
  {
    code: 'PROV',
    label: 'Provider',
    codeColumns: [{ column: 'provider_ukprn', field: 'ukprn' }],
    nameColumn: 'provider_name',
  },
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

/** Level code → label. */
export const GEOGRAPHIC_LEVEL_LABELS: Readonly<Record<string, string>> = Object.fromEntries(
  GEOGRAPHIC_LEVELS.map((level) => [level.code, level.label]),
);

/** All level codes in the natural (alphabetical) order used by `allowed` lists in error details. */
export const GEOGRAPHIC_LEVEL_CODES: readonly string[] = Object.keys(GEOGRAPHIC_LEVEL_LABELS).sort();

/** A level's label (the code when unknown). */
export function geographicLevelLabel(code: string): string {
  return GEOGRAPHIC_LEVEL_LABELS[code] ?? code;
}

export function isGeographicLevel(code: string): boolean {
  return Object.prototype.hasOwnProperty.call(GEOGRAPHIC_LEVEL_LABELS, code);
}

/** A location property as named in the API (`oldCode`), with the matching `locations` column. */
export type LocationProperty = 'id' | 'code' | 'oldCode' | 'urn' | 'laEstab' | 'ukprn';

export const LOCATION_PROPERTY_MAX_LENGTH: Readonly<Record<LocationProperty, number>> = {
  id: 10,
  code: 30,
  oldCode: 20,
  urn: 20,
  laEstab: 20,
  ukprn: 20,
};

/** The properties a GET location string may use for a level. */
export function allowedLocationProperties(level: string): LocationProperty[] {
  switch (level) {
    case 'LA':
      return ['id', 'code', 'oldCode'];
    case 'SCH':
      return ['id', 'urn', 'laEstab'];
    case 'PROV':
      return ['id', 'ukprn'];
    case 'RSC':
      return ['id'];
    default:
      return ['id', 'code'];
  }
}

/** Row-table column of a level's location id: `l_la`. */
export function locationColumn(level: string): string {
  return `l_${level.toLowerCase()}`;
}

/** Whether a row-table column holds location ids (see locationColumn). */
export function isLocationColumn(column: string): boolean {
  return column.startsWith('l_');
}
