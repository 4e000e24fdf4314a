/**
 * The `labels` option of the query endpoints (`labels=true`, `"labels": true`): the page's JSON as it is, plus a
 * `labels` member naming every id the page holds (each once), so that a client needs no second request to `/meta`
 * to show it. Without the option the response is not touched (the reference's contract).
 */
import { GEOGRAPHIC_LEVEL_LABELS } from '../standard/geographic-levels.js';
import { timePeriodLabel } from '../standard/time-periods.js';
import type { LocationMeta, VersionMeta } from './engine/version-meta-cache.js';

/** The `labels` member: per kind of id, label by id (time periods by `{period}|{code}`). */
export interface QueryLabels {
  timePeriods: Record<string, string>;
  geographicLevels: Record<string, string>;
  locations: Record<string, string>;
  filters: Record<string, string>;
  filterOptions: Record<string, string>;
  indicators: Record<string, string>;
}

interface PageJson {
  results: Array<{
    timePeriod: { code: string; period: string };
    geographicLevel: string;
    locations: Record<string, string>;
    filters: Record<string, string>;
    values: Record<string, string>;
  }>;
}

const locationsByPublicId = new WeakMap<VersionMeta, Map<string, LocationMeta>>();

function locationOf(meta: VersionMeta, publicId: string): LocationMeta | undefined {
  let map = locationsByPublicId.get(meta);
  if (!map)
    locationsByPublicId.set(meta, (map = new Map([...meta.locationsById.values()].map((l) => [l.publicId, l]))));
  return map.get(publicId);
}

/** A debug page's id (`dP0Zw :: Enrolments`) without its label. */
function idOf(text: string): string {
  const split = text.indexOf(' :: ');
  return split === -1 ? text : text.slice(0, split);
}

/** The labels of every id a page of results holds. */
export function pageLabels(meta: VersionMeta, page: PageJson): QueryLabels {
  const labels: QueryLabels = {
    timePeriods: {},
    geographicLevels: {},
    locations: {},
    filters: {},
    filterOptions: {},
    indicators: {},
  };
  for (const row of page.results) {
    const { period, code } = row.timePeriod;
    labels.timePeriods[`${period}|${code}`] ??= timePeriodLabel(period, code);
    labels.geographicLevels[row.geographicLevel] ??=
      GEOGRAPHIC_LEVEL_LABELS[row.geographicLevel] ?? row.geographicLevel;
    for (const value of Object.values(row.locations)) {
      const id = idOf(value);
      const location = labels.locations[id] === undefined ? locationOf(meta, id) : undefined;
      if (location) labels.locations[id] = location.label;
    }
    for (const [key, value] of Object.entries(row.filters)) {
      const filterId = idOf(key);
      const filter = labels.filters[filterId] === undefined ? meta.filtersByPublicId.get(filterId) : undefined;
      if (filter) labels.filters[filterId] = filter.label;
      const optionId = idOf(value);
      const option = labels.filterOptions[optionId] === undefined ? meta.optionsByPublicId.get(optionId) : undefined;
      if (option) labels.filterOptions[optionId] = option.label;
    }
    for (const key of Object.keys(row.values)) {
      const id = idOf(key);
      const indicator = labels.indicators[id] === undefined ? meta.indicatorsByPublicId.get(id) : undefined;
      if (indicator) labels.indicators[id] = indicator.label;
    }
  }
  return labels;
}

/** The page's JSON bytes with the `labels` member added last. */
export function withLabels(meta: VersionMeta, json: Buffer): Buffer {
  const labels = pageLabels(meta, JSON.parse(json.toString('utf8')) as PageJson);
  const end = json.lastIndexOf('}');
  return Buffer.concat([json.subarray(0, end), Buffer.from(`,"labels":${JSON.stringify(labels)}}`)]);
}
