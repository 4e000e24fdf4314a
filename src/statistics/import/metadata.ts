/**
 * Import phase 3: the version's metadata rows, once every row is staged: the version row, its time periods
 * (chronological ids), filters and options and indicators (label order; public ids carried over from the previous
 * live version by column name and option label), geographic levels and locations. Returns the maps from the
 * staged file-local ids to the final row ids, which phase 4 applies.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { VersionStatus } from '../tables.js';
import type { MetaFilter, MetaIndicator } from './meta-file.js';
import { allocatePublicIds } from './public-ids.js';
import {
  findLocations,
  insertFilter,
  insertFilterOptions,
  insertGeographicLevels,
  insertIndicators,
  insertLocations,
  insertTimePeriods,
  insertVersion,
  linkVersionLocations,
} from './repository.js';
import type { LocationLevelInput, StagedRows } from './stage-rows.js';
import { compareOrdinal } from '../standard/ordinal.js';
import type { LocationCodeField } from '../standard/geographic-levels.js';
import { compareTimePeriods, timePeriodLabel } from '../standard/time-periods.js';
import type { VersionNumber } from '../standard/version-numbers.js';
import type { loadVersionMetaSnapshot } from './version-snapshot.js';

export type Previous = Awaited<ReturnType<typeof loadVersionMetaSnapshot>> | undefined;

export interface NewVersion {
  /** Taken from the sequence beforehand (`reserveVersionId`). */
  id: number;
  dataSetId: string;
  number: VersionNumber;
  status: VersionStatus;
  publishedAt?: Date | string;
  notes?: string;
  releaseTitle?: string;
  releaseSlug?: string;
  /** The levels of the data file's location columns. */
  locationLevels: string[];
}

/** The final row ids of what the staged rows hold in file-local ids (index = local id - 1). */
export interface IdMaps {
  timePeriods: number[];
  /** Per filter. */
  filterOptions: number[][];
  /** Per location level. */
  locations: number[][];
}

/** A release title and slug from the latest time period (`Academic year 2021/22`, `2021-22`). */
function defaultRelease(latest: { period: string; code: string }): { title: string; slug: string } {
  const label = timePeriodLabel(latest.period, latest.code);
  const kind: Record<string, string> = {
    AY: 'Academic year',
    CY: 'Calendar year',
    FY: 'Financial year',
    TY: 'Tax year',
    RY: 'Reporting year',
  };
  const title = kind[latest.code] ? `${kind[latest.code]} ${label}` : label;
  return {
    title,
    slug: label
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, ''),
  };
}

/** The version row (its release named after the latest time period unless given). */
export async function insertVersionRow(db: Kysely<Database>, version: NewVersion, staged: StagedRows): Promise<number> {
  const chronological = [...staged.timePeriods].sort(compareTimePeriods);
  const release = defaultRelease(chronological[chronological.length - 1]!);
  return insertVersion(db, {
    id: version.id,
    data_set_id: version.dataSetId,
    major: version.number.major,
    minor: version.number.minor,
    patch: version.number.patch,
    status: version.status,
    published_at: version.status === 'Published' ? (version.publishedAt ?? new Date()) : null,
    withdrawn_at: null,
    notes: version.notes ?? '',
    release_title: version.releaseTitle ?? release.title,
    release_slug: version.releaseSlug ?? release.slug,
    total_results: staged.rows,
    rows_table: null,
    location_levels: version.locationLevels,
  });
}

/** Time periods, filters, indicators, levels and locations of the version; the id maps for the row table. */
export async function insertVersionMetadata(
  db: Kysely<Database>,
  versionId: number,
  plan: { filters: MetaFilter[]; indicators: MetaIndicator[]; locationLevels: LocationLevelInput[] },
  staged: StagedRows,
  previous: Previous,
): Promise<IdMaps> {
  // Time periods: ids in chronological order.
  const chronological = staged.timePeriods.map((t, i) => ({ ...t, local: i + 1 })).sort(compareTimePeriods);
  const timePeriodMap = new Array<number>(staged.timePeriods.length);
  const tpRows = await insertTimePeriods(db, versionId, chronological);
  const tpIdByKey = new Map(tpRows.map((t) => [`${t.period}|${t.code}`, t.id]));
  for (const t of chronological) timePeriodMap[t.local - 1] = tpIdByKey.get(`${t.period}|${t.code}`)!;

  // Filters and options: label order; public ids carried over by column name and option label.
  const filterMaps = await insertFilters(db, versionId, plan.filters, staged.filterOptionLabels, previous);
  await insertIndicatorRows(db, versionId, plan.indicators, previous);
  await insertGeographicLevels(db, versionId, [...staged.levels].sort());
  const locationMaps = await resolveLocations(db, versionId, plan.locationLevels);
  return { timePeriods: timePeriodMap, filterOptions: filterMaps, locations: locationMaps };
}

/** Inserts filters (label order) and their options (label order); returns, per filter, local option id → row id. */
async function insertFilters(
  db: Kysely<Database>,
  versionId: number,
  filters: MetaFilter[],
  optionLabels: string[][],
  previous: Previous,
): Promise<number[][]> {
  const previousByColumn = new Map(previous?.filters.map((f) => [f.column, f]) ?? []);
  const freshFilterIds = await allocatePublicIds(
    db,
    'filter',
    filters.filter((f) => !previousByColumn.has(f.column)).length,
  );
  const sortedOptions = optionLabels.map((labels) =>
    labels.map((label, i) => ({ label, local: i + 1 })).sort((a, b) => compareOrdinal(a.label, b.label)),
  );
  const freshOptionCount = filters.reduce((count, f, i) => {
    const carried = new Set(previousByColumn.get(f.column)?.options.map((o) => o.label) ?? []);
    return count + sortedOptions[i]!.filter((o) => !carried.has(o.label)).length;
  }, 0);
  const freshOptionIds = await allocatePublicIds(db, 'filterOption', freshOptionCount);
  const maps: number[][] = [];
  for (let i = 0; i < filters.length; i++) {
    const filter = filters[i]!;
    const before = previousByColumn.get(filter.column);
    const filterRowId = await insertFilter(db, {
      version_id: versionId,
      public_id: before?.id ?? freshFilterIds.shift()!,
      column_name: filter.column,
      label: filter.label,
      hint: filter.hint,
      ordinal: i + 1,
    });
    const carried = new Map(before?.options.map((o) => [o.label, o.id]) ?? []);
    const options = sortedOptions[i]!;
    const map = new Array<number>(options.length);
    maps.push(map);
    if (options.length === 0) continue;
    const defaultLabel =
      filter.defaultLabel && options.some((o) => o.label === filter.defaultLabel) ? filter.defaultLabel : 'Total';
    const rows = await insertFilterOptions(
      db,
      options.map((o) => ({
        filter_id: filterRowId,
        public_id: carried.get(o.label) ?? freshOptionIds.shift()!,
        label: o.label,
        is_default: o.label === defaultLabel,
      })),
    );
    const idByLabel = new Map(rows.map((r) => [r.label, r.id]));
    for (const o of options) map[o.local - 1] = idByLabel.get(o.label)!;
  }
  return maps;
}

async function insertIndicatorRows(
  db: Kysely<Database>,
  versionId: number,
  indicators: MetaIndicator[],
  previous: Previous,
): Promise<void> {
  const previousByColumn = new Map(previous?.indicators.map((i) => [i.column, i.id]) ?? []);
  const fresh = await allocatePublicIds(
    db,
    'indicator',
    indicators.filter((i) => !previousByColumn.has(i.column)).length,
  );
  await insertIndicators(
    db,
    indicators.map((indicator, i) => ({
      version_id: versionId,
      public_id: previousByColumn.get(indicator.column) ?? fresh.shift()!,
      column_name: indicator.column,
      label: indicator.label,
      unit: indicator.unit,
      decimal_places: indicator.decimalPlaces,
      ordinal: i + 1,
    })),
  );
}

const CODE_FIELDS: LocationCodeField[] = ['code', 'old_code', 'urn', 'la_estab', 'ukprn'];

/**
 * Finds or creates the global location rows of every option seen in the file (one id per level + label + codes
 * everywhere) and links them to the version. New locations get public ids in order of level code, then codes (the
 * reference's order: the fixture's LAs by code, schools by URN), and row ids in label order. Returns, per level,
 * local id → locations.id.
 */
async function resolveLocations(
  db: Kysely<Database>,
  versionId: number,
  levels: LocationLevelInput[],
): Promise<number[][]> {
  const identity = (level: string, label: string, fields: Partial<Record<LocationCodeField, string>>) =>
    [level, label, ...CODE_FIELDS.map((f) => fields[f] ?? '')].join('\u0000');
  const wanted = levels.flatMap((l) =>
    l.options.map((o) => ({ level: l.info.code, label: o.label, fields: o.fields })),
  );
  const found = new Map<string, number>();
  for (let i = 0; i < wanted.length; i += 5000) {
    const chunk = wanted.slice(i, i + 5000);
    const rows = await findLocations(db, chunk);
    for (const row of rows) {
      const fields: Partial<Record<LocationCodeField, string>> = {};
      for (const f of CODE_FIELDS) if (row[f] !== null) fields[f] = row[f]!;
      found.set(identity(row.level, row.label, fields), row.id);
    }
  }
  const missing = wanted.filter((w) => !found.has(identity(w.level, w.label, w.fields)));
  if (missing.length > 0) {
    const byCodes = [...missing].sort(
      (a, b) =>
        compareOrdinal(a.level, b.level) ||
        CODE_FIELDS.reduce((c, f) => c || compareOrdinal(a.fields[f] ?? '', b.fields[f] ?? ''), 0) ||
        compareOrdinal(a.label, b.label),
    );
    const publicIds = await allocatePublicIds(db, 'location', byCodes.length);
    const publicIdOf = new Map(byCodes.map((w, i) => [identity(w.level, w.label, w.fields), publicIds[i]!]));
    const byLabel = [...missing].sort((a, b) => compareOrdinal(a.level, b.level) || compareOrdinal(a.label, b.label));
    for (let i = 0; i < byLabel.length; i += 2000) {
      const rows = await insertLocations(
        db,
        byLabel
          .slice(i, i + 2000)
          .map((w) => ({ ...w, publicId: publicIdOf.get(identity(w.level, w.label, w.fields))! })),
      );
      const idByPublic = new Map(rows.map((r) => [r.public_id, r.id]));
      for (const [key, publicId] of publicIdOf) if (idByPublic.has(publicId)) found.set(key, idByPublic.get(publicId)!);
    }
  }
  const maps = levels.map((l) => l.options.map((o) => found.get(identity(l.info.code, o.label, o.fields))!));
  const allIds = [...new Set(maps.flat())];
  for (let i = 0; i < allIds.length; i += 5000) {
    await linkVersionLocations(db, versionId, allIds.slice(i, i + 5000));
  }
  return maps;
}
