import type {
  ChangeItemByList,
  ChangeList,
  ChangedFilter,
  ChangedIndicator,
  ChangedLocationOption,
} from '../tables.js';
import { compareNatural, compareOrdinal } from '../standard/ordinal.js';
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

/**
 * Items matched by key: only-old = deleted, only-new = added, both but not `same` = updated. Deletions and updates
 * are sorted by the previous item, additions by the new one (the reference processor's order).
 */
function diff<T>(
  previous: T[],
  current: T[],
  key: (t: T) => string,
  same: (a: T, b: T) => boolean,
  compare: (a: T, b: T) => number,
): Diff<T> {
  const currentByKey = new Map(current.map((t) => [key(t), t]));
  const previousByKey = new Map(previous.map((t) => [key(t), t]));
  const deleted = previous.filter((t) => !currentByKey.has(key(t))).sort(compare);
  const added = current.filter((t) => !previousByKey.has(key(t))).sort(compare);
  const updated = previous
    .filter((t) => currentByKey.has(key(t)) && !same(t, currentByKey.get(key(t))!))
    .sort(compare)
    .map((t) => ({ previous: t, current: currentByKey.get(key(t))! }));
  return { deleted, updated, added };
}

const byLabel = (a: { label: string }, b: { label: string }) => compareNatural(a.label, b.label);

function filterView(f: VersionMetaSnapshot['filters'][number]): ChangedFilter {
  return { id: f.id, column: f.column, label: f.label, hint: f.hint };
}

function indicatorView(i: VersionMetaSnapshot['indicators'][number]): ChangedIndicator {
  const view: ChangedIndicator = { id: i.id, column: i.column, label: i.label };
  if (i.unit !== '') view.unit = i.unit;
  if (i.decimalPlaces !== null) view.decimalPlaces = i.decimalPlaces;
  return view;
}

/** One option change with its parent, before the option changes of all parents are sorted together. */
interface OptionChange<P, O> {
  kind: 'major' | 'minor';
  parent: P;
  previous?: O;
  current?: O;
}

/**
 * The option changes of every parent (filter or level) present in both versions, as the reference's processor
 * lists them: all deletions, then all updates, then all additions, each sorted by option label across parents. A
 * new or deleted parent's options are not listed (its own addition or deletion says it).
 */
function optionChanges<P, O extends { id: string; label: string }>(
  parents: Array<{ previous: P; current: P; previousRank: number; before: O[]; after: O[] }>,
  same: (a: O, b: O) => boolean,
  updateKind: (previous: O, current: O) => 'major' | 'minor',
): Array<OptionChange<P, O>> {
  const deleted: Array<OptionChange<P, O>> = [];
  const updated: Array<OptionChange<P, O>> = [];
  const added: Array<OptionChange<P, O>> = [];
  // Equal labels keep the order of their parents: the previous version's for deletions and updates, the new one's
  // for additions (the processor walks the previous meta, then the new).
  const diffs = parents.map((parent) => ({
    parent,
    options: diff(parent.before, parent.after, (o) => o.id, same, byLabel),
  }));
  for (const { parent, options } of [...diffs].sort((a, b) => a.parent.previousRank - b.parent.previousRank)) {
    // A deleted option is shown under the previous version's parent, the others under the new version's.
    for (const o of options.deleted) deleted.push({ kind: 'major', parent: parent.previous, previous: o });
    for (const u of options.updated)
      updated.push({
        kind: updateKind(u.previous, u.current),
        parent: parent.current,
        previous: u.previous,
        current: u.current,
      });
  }
  for (const { parent, options } of diffs)
    for (const o of options.added) added.push({ kind: 'minor', parent: parent.current, current: o });
  const byPrevious = (a: OptionChange<P, O>, b: OptionChange<P, O>) => byLabel(a.previous!, b.previous!);
  return [
    ...deleted.sort(byPrevious),
    ...updated.sort(byPrevious),
    ...added.sort((a, b) => byLabel(a.current!, b.current!)),
  ];
}

const stateOf = <O>(change: { previous?: O; current?: O }) => ({
  ...(change.previous ? { previousState: change.previous } : {}),
  ...(change.current ? { currentState: change.current } : {}),
});

/** Adds one change to the list being computed. */
type PushChange = <L extends ChangeList>(kind: 'major' | 'minor', list: L, change: ChangeItemByList[L]) => void;

/** The filters deleted, updated and added, then the options of the filters in both versions. */
function filterChanges(previous: VersionMetaSnapshot, current: VersionMetaSnapshot, push: PushChange): void {
  const filters = diff(
    previous.filters,
    current.filters,
    (f) => f.id,
    (a, b) => a.column === b.column && a.label === b.label && a.hint === b.hint,
    byLabel,
  );
  for (const f of filters.deleted) push('major', 'filters', { previousState: filterView(f) });
  for (const u of filters.updated)
    push('minor', 'filters', { previousState: filterView(u.previous), currentState: filterView(u.current) });
  for (const f of filters.added) push('minor', 'filters', { currentState: filterView(f) });

  const previousFilters = new Map(previous.filters.map((f, rank) => [f.id, { ...f, rank }]));
  const keptFilters = current.filters.flatMap((filter) => {
    const before = previousFilters.get(filter.id);
    return before
      ? [
          {
            previous: filterView(before),
            current: filterView(filter),
            previousRank: before.rank,
            before: before.options,
            after: filter.options,
          },
        ]
      : [];
  });
  for (const c of optionChanges(
    keptFilters,
    (a, b) => a.label === b.label,
    () => 'minor',
  )) {
    push(c.kind, 'filterOptions', { filter: c.parent, ...stateOf(c) });
  }
}

/** The geographic levels deleted and added (a level has nothing to update). */
function geographicLevelChanges(previous: VersionMetaSnapshot, current: VersionMetaSnapshot, push: PushChange): void {
  const levels = diff(
    previous.geographicLevels.map(levelView),
    current.geographicLevels.map(levelView),
    (l) => l.code,
    () => true,
    byLabel,
  );
  for (const l of levels.deleted) push('major', 'geographicLevels', { previousState: l });
  for (const l of levels.added) push('minor', 'geographicLevels', { currentState: l });
}

/** The indicators deleted, updated and added. */
function indicatorChanges(previous: VersionMetaSnapshot, current: VersionMetaSnapshot, push: PushChange): void {
  const indicators = diff(
    previous.indicators,
    current.indicators,
    (i) => i.id,
    (a, b) => a.column === b.column && a.label === b.label && a.unit === b.unit && a.decimalPlaces === b.decimalPlaces,
    byLabel,
  );
  for (const i of indicators.deleted) push('major', 'indicators', { previousState: indicatorView(i) });
  for (const u of indicators.updated)
    push('minor', 'indicators', { previousState: indicatorView(u.previous), currentState: indicatorView(u.current) });
  for (const i of indicators.added) push('minor', 'indicators', { currentState: indicatorView(i) });
}

/** The location groups (levels with locations) deleted and added, then the locations of the groups in both versions. */
function locationChanges(previous: VersionMetaSnapshot, current: VersionMetaSnapshot, push: PushChange): void {
  const groups = diff(
    [...previous.locations.keys()].map(levelView),
    [...current.locations.keys()].map(levelView),
    (l) => l.code,
    () => true,
    byLabel,
  );
  for (const l of groups.deleted) push('major', 'locationGroups', { previousState: { level: l } });
  for (const l of groups.added) push('minor', 'locationGroups', { currentState: { level: l } });

  const previousLevels = [...previous.locations.keys()];
  const keptLevels = [...current.locations.keys()].flatMap((code) => {
    const before = previous.locations.get(code);
    const level = levelView(code);
    return before
      ? [
          {
            previous: level,
            current: level,
            previousRank: previousLevels.indexOf(code),
            before,
            after: current.locations.get(code)!,
          },
        ]
      : [];
  });
  const codesOf = ({ label: _label, ...codes }: ChangedLocationOption) => JSON.stringify(codes);
  for (const c of optionChanges(
    keptLevels,
    (a, b) => JSON.stringify(a) === JSON.stringify(b),
    // A code change is major; a label-only change minor.
    (a, b) => (codesOf(a) === codesOf(b) ? 'minor' : 'major'),
  )) {
    push(c.kind, 'locationOptions', { level: c.parent, ...stateOf(c) });
  }
}

/** The time periods deleted and added. */
function timePeriodChanges(previous: VersionMetaSnapshot, current: VersionMetaSnapshot, push: PushChange): void {
  const byPeriod = (a: { period: string; code: string }, b: { period: string; code: string }) =>
    compareNatural(a.period, b.period) || compareOrdinal(a.code, b.code);
  const periods = diff(
    previous.timePeriods,
    current.timePeriods,
    (t) => `${t.period}|${t.code}`,
    () => true,
    byPeriod,
  );
  for (const t of periods.deleted) push('major', 'timePeriods', { previousState: t });
  for (const t of periods.added) push('minor', 'timePeriods', { currentState: t });
}

/**
 * The changes of `current` against `previous`, in stored order: per list, deletions, then updates, then additions,
 * each by label in natural order (as the reference's processor stores them). Items are matched by public id (which
 * the importer carries over by column name, option label and location identity, as the reference's auto-mapping
 * does), so an update is a change of label, hint, column, unit or decimal places under the same id: minor.
 * Deletions are major; additions minor.
 */
export function computeChanges(previous: VersionMetaSnapshot, current: VersionMetaSnapshot): ComputedChange[] {
  const out: ComputedChange[] = [];
  const push: PushChange = (kind, list, change) => out.push({ kind, list, change });
  filterChanges(previous, current, push);
  geographicLevelChanges(previous, current, push);
  indicatorChanges(previous, current, push);
  locationChanges(previous, current, push);
  timePeriodChanges(previous, current, push);
  return out;
}
