/**
 * The columns of the EES data file standard as the importer reads them: the ones with a fixed meaning, the mandatory
 * ones, and the meta file's indicator units.
 */
import { GEOGRAPHIC_LEVELS } from './geographic-levels.js';

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
