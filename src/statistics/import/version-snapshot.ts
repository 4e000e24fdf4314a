import type { Executor } from '../../db/database.js';
import { versionLocationsByLevel, type LocationRow } from '../meta/repository.js';
import type { ChangedLocationOption } from '../tables.js';
import { computeChanges } from './change-detection.js';
import {
  findFiltersWithOptions,
  findGeographicLevelCodes,
  findIndicatorsInOrder,
  findTimePeriodsInIdOrder,
  replaceVersionChanges,
} from './repository.js';
import { compareOrdinal } from '../standard/ordinal.js';
import { compareTimePeriods, timePeriodLabel } from '../standard/time-periods.js';
import { compareVersionNumbers, type VersionNumber } from '../standard/version-numbers.js';

/** A version's metadata with public ids, as the change computation and id mapping compare it. */
export interface VersionMetaSnapshot {
  filters: Array<{
    id: string;
    column: string;
    label: string;
    hint: string;
    options: Array<{ id: string; label: string }>;
  }>;
  indicators: Array<{ id: string; column: string; label: string; unit: string; decimalPlaces: number | null }>;
  geographicLevels: string[];
  /** Location options by level code. */
  locations: Map<string, ChangedLocationOption[]>;
  timePeriods: Array<{ code: string; period: string; label: string }>;
}

/** A location row as the meta shows it for its level (codes not used by the level are left out). */
export function changedLocationOption(row: LocationRow): ChangedLocationOption {
  const option: ChangedLocationOption = { id: row.public_id, label: row.label };
  switch (row.level) {
    case 'LA':
      if (row.code !== null) option.code = row.code;
      if (row.old_code !== null) option.oldCode = row.old_code;
      break;
    case 'SCH':
      if (row.urn !== null) option.urn = row.urn;
      if (row.la_estab !== null) option.laEstab = row.la_estab;
      break;
    case 'PROV':
      if (row.ukprn !== null) option.ukprn = row.ukprn;
      break;
    case 'RSC':
      break;
    default:
      if (row.code !== null) option.code = row.code;
  }
  return option;
}

export async function loadVersionMetaSnapshot(db: Executor, versionId: number): Promise<VersionMetaSnapshot> {
  const filterRows = await findFiltersWithOptions(db, versionId);
  const filters: VersionMetaSnapshot['filters'] = [];
  const byFilter = new Map<number, VersionMetaSnapshot['filters'][number]>();
  for (const row of filterRows) {
    let filter = byFilter.get(row.filter_id);
    if (!filter) {
      filter = { id: row.public_id, column: row.column_name, label: row.label, hint: row.hint, options: [] };
      byFilter.set(row.filter_id, filter);
      filters.push(filter);
    }
    if (row.option_id !== null && row.option_label !== null)
      filter.options.push({ id: row.option_id, label: row.option_label });
  }
  const indicators = (await findIndicatorsInOrder(db, versionId)).map((i) => ({
    id: i.public_id,
    column: i.column_name,
    label: i.label,
    unit: i.unit,
    decimalPlaces: i.decimal_places,
  }));
  const geographicLevels = await findGeographicLevelCodes(db, versionId);
  const locations = await versionLocationsByLevel(db, versionId, changedLocationOption);
  for (const list of locations.values())
    list.sort((a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.id, b.id));
  const timePeriods = (await findTimePeriodsInIdOrder(db, versionId)).map((t) => ({
    code: t.code,
    period: t.period,
    label: timePeriodLabel(t.period, t.code),
  }));
  timePeriods.sort(compareTimePeriods);
  return { filters, indicators, geographicLevels, locations, timePeriods };
}

/**
 * The version whose changes a version of this number lists and whose public ids it carries over: the highest live
 * (not Draft) version below it.
 */
export function latestLiveVersionBelow<V extends VersionNumber & { status: string }>(
  versions: V[],
  number: VersionNumber,
): V | undefined {
  return versions
    .filter((v) => v.status !== 'Draft' && compareVersionNumbers(v, number) < 0)
    .sort((a, b) => compareVersionNumbers(b, a))[0];
}

/**
 * Replaces the stored changes of `versionId` with those against `previous` (none without one), and returns how many
 * are major and minor.
 */
export async function recordVersionChanges(
  db: Executor,
  versionId: number,
  previous: VersionMetaSnapshot | undefined,
): Promise<{ major: number; minor: number }> {
  const changes = previous ? computeChanges(previous, await loadVersionMetaSnapshot(db, versionId)) : [];
  await replaceVersionChanges(db, versionId, changes);
  const major = changes.filter((c) => c.kind === 'major').length;
  return { major, minor: changes.length - major };
}
