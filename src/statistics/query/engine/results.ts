import { GEOGRAPHIC_LEVEL_LABELS, locationColumn } from '../../standard/geographic-levels.js';
import { WarningMessages } from '../../errors.js';
import type { ResolvedQuery, Warning } from './resolve.js';
import { timeIdentifier, timePeriodLabel } from '../../standard/time-periods.js';
import type { PageRows } from './page-rows.js';
import type { LocationMeta, VersionMeta } from './model.js';

/** The row-table columns a result row needs. */
export function resultColumns(meta: VersionMeta, query: Pick<ResolvedQuery, 'indicators'>): string[] {
  return [
    'id',
    'time_period_id',
    'geographic_level',
    ...meta.locationLevels.map(locationColumn),
    ...meta.filters.map((f) => f.column),
    ...query.indicators.map((i) => i.column),
  ];
}

export function debugLocation(location: LocationMeta): string {
  const base = `${location.publicId} :: ${location.label}`;
  switch (location.level) {
    case 'LA':
      return `${base} (code = ${location.code ?? ''}, oldCode = ${location.oldCode ?? ''})`;
    case 'SCH':
      return `${base} (urn = ${location.urn ?? ''}, laEstab = ${location.laEstab ?? ''})`;
    case 'PROV':
      return `${base} (ukprn = ${location.ukprn ?? ''})`;
    case 'RSC':
      return base;
    default:
      return `${base} (code = ${location.code ?? ''})`;
  }
}

/** Facet warnings, then DebugEnabled, then NoResults (the seed names the last one `NoResults`). */
export function responseWarnings(query: ResolvedQuery, total: number): Warning[] {
  const warnings = [...query.warnings];
  if (query.debug) warnings.push({ code: 'DebugEnabled', message: WarningMessages.DebugEnabled });
  if (total === 0)
    warnings.push({ code: 'NoResults', message: WarningMessages.NoResults, path: 'results', detail: { total: 0 } });
  return warnings;
}

/** `totalPages = trunc((total - 1) / pageSize) + 1`, so 1 when there are no results. */
export function totalPages(total: number, pageSize: number): number {
  return Math.trunc((total - 1) / pageSize) + 1;
}

/** CSV header and row of a result, with labels instead of ids. */
export function csvHeader(meta: VersionMeta, query: Pick<ResolvedQuery, 'indicators'>): string[] {
  return [
    'time_period',
    'time_identifier',
    'geographic_level',
    ...meta.locationLevels.map((level) => GEOGRAPHIC_LEVEL_LABELS[level] ?? level),
    ...meta.filters.map((f) => f.label),
    ...query.indicators.map((i) => i.label),
  ];
}

/** The CSV records of a page's rows, with labels instead of ids. */
export function* csvRecords(
  meta: VersionMeta,
  query: Pick<ResolvedQuery, 'indicators'>,
  page: PageRows,
): Generator<string[]> {
  const locations = meta.locationLevels.map((level) => page.idsOf(locationColumn(level)));
  const filters = meta.filters.map((filter) => page.idsOf(filter.column));
  const values = query.indicators.map((indicator) => page.textsOf(indicator.column));
  for (let r = 0; r < page.count; r++) {
    const timePeriod = meta.timePeriodsById.get(page.timePeriodId(r));
    const level = page.levelCode(r);
    yield [
      timePeriod ? timePeriodLabel(timePeriod.period, timePeriod.code) : '',
      timePeriod ? (timeIdentifier(timePeriod.code)?.label ?? timePeriod.code) : '',
      GEOGRAPHIC_LEVEL_LABELS[level] ?? level,
      ...locations.map((idAt) => meta.locationsById.get(idAt(r))?.label ?? ''),
      ...filters.map((idAt) => meta.optionsById.get(idAt(r))?.label ?? ''),
      ...values.map((textAt) => textAt(r)),
    ];
  }
}
