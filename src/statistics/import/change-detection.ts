import type { ChangeItemByList, ChangeList, ChangedFilter, ChangedIndicator } from '../tables.js';
import { compareOrdinal } from '../standard/ordinal.js';
import { levelView } from '../standard/geographic-levels.js';
import type { VersionMetaSnapshot } from './version-snapshot.js';

export interface ComputedChange<L extends ChangeList = ChangeList> {
  kind: 'major' | 'minor';
  list: L;
  change: ChangeItemByList[L];
}

interface Diff<T> {
  deleted: T[];
  updated: Array<{ previous: T; current: T }>;
  added: T[];
}

/** Items matched by key: only-old = deleted, only-new = added, both but not `same` = updated; each sorted. */
function diff<T>(previous: T[], current: T[], key: (t: T) => string, same: (a: T, b: T) => boolean, compare: (a: T, b: T) => number): Diff<T> {
  const currentByKey = new Map(current.map((t) => [key(t), t]));
  const previousByKey = new Map(previous.map((t) => [key(t), t]));
  const deleted = previous.filter((t) => !currentByKey.has(key(t))).sort(compare);
  const added = current.filter((t) => !previousByKey.has(key(t))).sort(compare);
  const updated = current
    .filter((t) => previousByKey.has(key(t)) && !same(previousByKey.get(key(t))!, t))
    .sort(compare)
    .map((t) => ({ previous: previousByKey.get(key(t))!, current: t }));
  return { deleted, updated, added };
}

const byLabel = (a: { label: string }, b: { label: string }) => compareOrdinal(a.label, b.label);

function filterView(f: VersionMetaSnapshot['filters'][number]): ChangedFilter {
  return { id: f.id, column: f.column, label: f.label, hint: f.hint };
}

function indicatorView(i: VersionMetaSnapshot['indicators'][number]): ChangedIndicator {
  const view: ChangedIndicator = { id: i.id, column: i.column, label: i.label };
  if (i.unit !== '') view.unit = i.unit;
  if (i.decimalPlaces !== null) view.decimalPlaces = i.decimalPlaces;
  return view;
}

/**
 * The changes of `current` against `previous`, in stored order. Items are matched by public id
 * (which the importer carries over by column name, option label and location identity), so an update is a change
 * of label, hint, column, unit or decimal places under the same id: always minor. Deletions are major; additions
 * minor. Option changes are listed for every filter and location level of the new version (a new one's options are
 * all additions), not for deleted ones, as the reference's processor does.
 */
export function computeChanges(previous: VersionMetaSnapshot, current: VersionMetaSnapshot): ComputedChange[] {
  const out: ComputedChange[] = [];
  const push = <L extends ChangeList>(kind: 'major' | 'minor', list: L, change: ChangeItemByList[L]) =>
    out.push({ kind, list, change } as ComputedChange);

  const filters = diff(
    previous.filters,
    current.filters,
    (f) => f.id,
    (a, b) => a.column === b.column && a.label === b.label && a.hint === b.hint,
    byLabel,
  );
  for (const f of filters.deleted) push('major', 'filters', { previousState: filterView(f) });
  for (const u of filters.updated) push('minor', 'filters', { previousState: filterView(u.previous), currentState: filterView(u.current) });
  for (const f of filters.added) push('minor', 'filters', { currentState: filterView(f) });

  const previousFilters = new Map(previous.filters.map((f) => [f.id, f]));
  for (const filter of [...current.filters].sort(byLabel)) {
    // A new filter's options are additions too; a deleted filter's options are not listed (as the reference).
    const before = previousFilters.get(filter.id) ?? { options: [] };
    const options = diff(before.options, filter.options, (o) => o.id, (a, b) => a.label === b.label, byLabel);
    const parent = filterView(filter);
    for (const o of options.deleted) push('major', 'filterOptions', { filter: parent, previousState: o });
    for (const u of options.updated) push('minor', 'filterOptions', { filter: parent, previousState: u.previous, currentState: u.current });
    for (const o of options.added) push('minor', 'filterOptions', { filter: parent, currentState: o });
  }

  const levels = diff(
    previous.geographicLevels.map(levelView),
    current.geographicLevels.map(levelView),
    (l) => l.code,
    () => true,
    byLabel,
  );
  for (const l of levels.deleted) push('major', 'geographicLevels', { previousState: l });
  for (const l of levels.added) push('minor', 'geographicLevels', { currentState: l });

  const indicators = diff(
    previous.indicators,
    current.indicators,
    (i) => i.id,
    (a, b) => a.column === b.column && a.label === b.label && a.unit === b.unit && a.decimalPlaces === b.decimalPlaces,
    byLabel,
  );
  for (const i of indicators.deleted) push('major', 'indicators', { previousState: indicatorView(i) });
  for (const u of indicators.updated) push('minor', 'indicators', { previousState: indicatorView(u.previous), currentState: indicatorView(u.current) });
  for (const i of indicators.added) push('minor', 'indicators', { currentState: indicatorView(i) });

  const groups = diff(
    [...previous.locations.keys()].map(levelView),
    [...current.locations.keys()].map(levelView),
    (l) => l.code,
    () => true,
    byLabel,
  );
  for (const l of groups.deleted) push('major', 'locationGroups', { previousState: { level: l } });
  for (const l of groups.added) push('minor', 'locationGroups', { currentState: { level: l } });

  for (const level of [...current.locations.keys()].map(levelView).sort(byLabel)) {
    // Likewise a new level's locations are additions; a deleted level's are not listed.
    const before = previous.locations.get(level.code) ?? [];
    const options = diff(
      before,
      current.locations.get(level.code)!,
      (o) => o.id,
      (a, b) => JSON.stringify(a) === JSON.stringify(b),
      byLabel,
    );
    for (const o of options.deleted) push('major', 'locationOptions', { level, previousState: o });
    for (const u of options.updated) {
      const { label: _a, ...codesBefore } = u.previous;
      const { label: _b, ...codesAfter } = u.current;
      // A code change is major; a label-only change minor.
      const kind = JSON.stringify(codesBefore) === JSON.stringify(codesAfter) ? 'minor' : 'major';
      push(kind, 'locationOptions', { level, previousState: u.previous, currentState: u.current });
    }
    for (const o of options.added) push('minor', 'locationOptions', { level, currentState: o });
  }

  const byPeriod = (a: { period: string; code: string }, b: { period: string; code: string }) =>
    compareOrdinal(a.period, b.period) || compareOrdinal(a.code, b.code);
  const periods = diff(previous.timePeriods, current.timePeriods, (t) => `${t.period}|${t.code}`, () => true, byPeriod);
  for (const t of periods.deleted) push('major', 'timePeriods', { previousState: t });
  for (const t of periods.added) push('minor', 'timePeriods', { currentState: t });
  return out;
}
