import { GEOGRAPHIC_LEVELS } from './data-file-columns.js';

/** Geographic levels and the location properties a query may identify a location by. */
/** Level code → label, from the one table of levels in the data file standard. */
export const GEOGRAPHIC_LEVEL_LABELS: Readonly<Record<string, string>> = Object.fromEntries(
  GEOGRAPHIC_LEVELS.map((level) => [level.code, level.label]),
);

/** All level codes in the natural (alphabetical) order used by `allowed` lists in error details. */
export const GEOGRAPHIC_LEVEL_CODES: readonly string[] = Object.keys(GEOGRAPHIC_LEVEL_LABELS).sort();

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
