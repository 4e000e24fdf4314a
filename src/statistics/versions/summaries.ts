import { LRUCache } from 'lru-cache';
import { compareOrdinal } from '../standard/ordinal.js';
import type { Executor } from '../../db/database.js';
import { geographicLevelLabel } from '../standard/geographic-levels.js';
import { timePeriodLabel } from '../standard/time-periods.js';
import type { DataSetLatestVersionView, DataSetVersionView } from '../schemas.js';
import type { DataSetVersionRow } from './access.js';
import { formatVersionNumber, versionType } from '../standard/version-numbers.js';
import { findSummaryRows } from './repository.js';
import { approximateHeldBytes } from '../held-bytes.js';

/**
 * The "meta summary" of versions: time period range labels, geographic level labels,
 * filter and indicator labels (each sorted by label), loaded for many versions with one query per list.
 */
export interface VersionMetaSummary {
  timePeriods: { start: string; end: string };
  geographicLevels: string[];
  filters: string[];
  indicators: string[];
}

/** The summaries of versions, read from the database: one query per list for all of them. */
async function readVersionMetaSummaries(
  db: Executor,
  versionIds: readonly number[],
): Promise<Map<number, VersionMetaSummary>> {
  const summaries = new Map<number, VersionMetaSummary>();
  if (versionIds.length === 0) return summaries;
  for (const id of versionIds) {
    summaries.set(id, { timePeriods: { start: '', end: '' }, geographicLevels: [], filters: [], indicators: [] });
  }
  const { filters, indicators, levels, periods } = await findSummaryRows(db, versionIds);
  for (const row of filters) summaries.get(row.version_id)!.filters.push(row.label);
  for (const row of indicators) summaries.get(row.version_id)!.indicators.push(row.label);
  for (const row of levels) summaries.get(row.version_id)!.geographicLevels.push(geographicLevelLabel(row.code));
  const firstSeen = new Set<number>();
  for (const row of periods) {
    const summary = summaries.get(row.version_id)!;
    const label = timePeriodLabel(row.period, row.code);
    if (!firstSeen.has(row.version_id)) {
      firstSeen.add(row.version_id);
      summary.timePeriods.start = label;
    }
    summary.timePeriods.end = label;
  }
  for (const summary of summaries.values()) {
    summary.filters.sort(compareOrdinal);
    summary.indicators.sort(compareOrdinal);
    summary.geographicLevels.sort(compareOrdinal);
  }
  return summaries;
}

/** Default memory budget of the version summaries kept by one app. */
export const VERSION_SUMMARY_CACHE_BYTES = 8 * 1024 * 1024;

/**
 * Summaries of versions, kept per app (least recently used dropped beyond the byte budget). A version's filters,
 * indicators, levels and time periods are written by the import that creates it and never changed after (ids come
 * from a sequence), as the meta endpoint's views rely on too; without it every catalogue answer that shows a version
 * (a data set, its versions, a publication's data sets) read four tables for it.
 */
export class VersionSummaryCache {
  private readonly summaries: LRUCache<number, VersionMetaSummary>;

  constructor(maxBytes = VERSION_SUMMARY_CACHE_BYTES) {
    this.summaries = new LRUCache<number, VersionMetaSummary>({
      maxSize: maxBytes,
      sizeCalculation: (summary) => 256 + approximateHeldBytes(summary),
    });
  }

  /** Bytes held (approximate). */
  get bytes(): number {
    return this.summaries.calculatedSize;
  }

  /** The summaries of `versionIds`: those kept, and the others read at once (then kept). */
  async load(db: Executor, versionIds: readonly number[]): Promise<Map<number, VersionMetaSummary>> {
    const found = new Map<number, VersionMetaSummary>();
    const missing: number[] = [];
    for (const id of versionIds) {
      const kept = this.summaries.get(id);
      if (kept) found.set(id, kept);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    for (const [id, summary] of await readVersionMetaSummaries(db, missing)) {
      this.summaries.set(id, summary);
      found.set(id, summary);
    }
    return found;
  }
}

function isoTimestamp(value: Date | string | null): string | undefined {
  if (value === null || value === undefined) return undefined;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}

/** What a version holds, as both version views show it. */
function contentFields(version: DataSetVersionRow, summary: VersionMetaSummary) {
  return {
    totalResults: version.total_results,
    file: { id: version.file_id },
    timePeriods: summary.timePeriods,
    geographicLevels: summary.geographicLevels,
    filters: summary.filters,
    indicators: summary.indicators,
  };
}

/** `latestVersion` of a data set summary. */
export function latestVersionView(version: DataSetVersionRow, summary: VersionMetaSummary): DataSetLatestVersionView {
  const published = isoTimestamp(version.published_at);
  return {
    version: formatVersionNumber(version),
    ...(published ? { published } : {}),
    ...contentFields(version, summary),
  };
}

/** A version summary (`GET /versions`, `GET /versions/{v}`). */
export function versionView(version: DataSetVersionRow, summary: VersionMetaSummary): DataSetVersionView {
  const published = isoTimestamp(version.published_at);
  const withdrawn = isoTimestamp(version.withdrawn_at);
  return {
    version: formatVersionNumber(version),
    type: versionType(version),
    status: version.status,
    ...(published ? { published } : {}),
    ...(withdrawn ? { withdrawn } : {}),
    notes: version.notes,
    ...contentFields(version, summary),
    release: { title: version.release_title, slug: version.release_slug },
  };
}
