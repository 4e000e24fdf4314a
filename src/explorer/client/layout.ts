/**
 * The cross-tab's layout: which header groups (time periods, locations, each filter, indicators) make the rows and
 * which the columns, outermost first. The default follows the publisher's table tool; moves are pure and return the
 * sentence a screen reader hears. Pure functions, unit tested.
 */

/** `timePeriod`, `location`, `indicator` or `filter:<filter id>`. */
export type GroupId = string;

export interface HeaderOption {
  key: string;
  label: string;
}

export interface HeaderGroup {
  id: GroupId;
  /** In words: "Time period", "Location", the filter's label, "Indicator". */
  label: string;
  options: HeaderOption[];
}

export interface TableLayout {
  rows: GroupId[];
  columns: GroupId[];
}

export type Axis = 'rows' | 'columns';
/** `outward`: towards the table's edge (earlier in the list); `inward`: towards the cells. */
export type LayoutMove = 'outward' | 'inward' | 'toRows' | 'toColumns' | 'swap';

/** With fewer time periods than this, they are the columns and the indicators the rows (as the publisher does). */
export const TIME_PERIOD_COLUMNS_BELOW = 8;

const labelLength = (g: HeaderGroup) => g.options.reduce((sum, o) => sum + o.label.length, 0);

/** Stable sort by a numeric key. */
function sortBy<T>(items: T[], ...keys: Array<(item: T) => number>): T[] {
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => {
      for (const key of keys) {
        const d = key(a.item) - key(b.item);
        if (d !== 0) return d;
      }
      return a.index - b.index;
    })
    .map((x) => x.item);
}

/**
 * The publisher's split: groups sorted by option count then total label length (wordy groups go to the rows, so the
 * table does not scroll sideways); the smaller half are column groups, the rest row groups, each ordered by option
 * count so that small groups are outermost and do not repeat many times.
 */
function split(groups: HeaderGroup[]): { columns: HeaderGroup[]; rows: HeaderGroup[] } {
  const sorted = sortBy(groups, (g) => g.options.length, labelLength);
  const half = Math.floor(sorted.length / 2);
  return {
    columns: sortBy(sorted.slice(0, half), (g) => g.options.length),
    rows: sortBy(sorted.slice(half), (g) => g.options.length),
  };
}

/** Groups with one option say nothing per cell: they belong in the caption. */
export const placeable = (g: HeaderGroup) => g.options.length > 1;

/**
 * The default layout. Under 8 time periods: time periods are the innermost columns and indicators the innermost
 * rows, the other groups split between them. From 8 time periods on, every group is split by size. Groups with one
 * option stay out of both (they go into the caption) unless an axis would otherwise be empty.
 */
export function defaultLayout(groups: HeaderGroup[]): TableLayout {
  const period = groups.find((g) => g.id === 'timePeriod');
  const indicator = groups.find((g) => g.id === 'indicator');
  const others = groups.filter((g) => g !== period && g !== indicator && placeable(g));
  let layout: TableLayout;
  if (!period || period.options.length < TIME_PERIOD_COLUMNS_BELOW) {
    const { columns, rows } = split(others);
    layout = {
      columns: [...columns, ...(period ? [period] : [])].map((g) => g.id),
      rows: [...rows, ...(indicator ? [indicator] : [])].map((g) => g.id),
    };
  } else {
    const { columns, rows } = split([...others, period, ...(indicator && placeable(indicator) ? [indicator] : [])]);
    if (columns.length === 0 && rows.length > 0) columns.push(rows.shift()!);
    layout = { columns: columns.map((g) => g.id), rows: rows.map((g) => g.id) };
  }
  return settle(layout, groups);
}

/**
 * Keeps only the groups that are there and have several options, adds missing ones (to the rows), and makes sure
 * each axis has a group: from the other axis when it has two or more, else a single-option group (indicator for
 * rows, time period for columns) so the table still has its headers.
 */
export function settle(layout: TableLayout, groups: HeaderGroup[]): TableLayout {
  const byId = new Map(groups.map((g) => [g.id, g]));
  const seen = new Set<GroupId>();
  const keep = (ids: GroupId[]) =>
    ids.filter((id) => {
      const g = byId.get(id);
      if (!g || !placeable(g) || seen.has(id)) return false;
      seen.add(id);
      return true;
    });
  const columns = keep(layout.columns);
  const rows = keep(layout.rows);
  for (const g of groups) if (placeable(g) && !seen.has(g.id)) rows.push(g.id);
  if (columns.length === 0 && rows.length > 1) columns.push(rows.pop()!);
  if (rows.length === 0 && columns.length > 1) rows.push(columns.shift()!);
  const filler = (prefer: GroupId) =>
    byId.get(prefer)?.id ?? groups.find((g) => !rows.includes(g.id) && !columns.includes(g.id))?.id;
  if (rows.length === 0) {
    const id = filler(columns.includes('indicator') ? 'timePeriod' : 'indicator');
    if (id && !columns.includes(id)) rows.push(id);
  }
  if (columns.length === 0) {
    const id = filler(rows.includes('timePeriod') ? 'indicator' : 'timePeriod');
    if (id && !rows.includes(id)) columns.push(id);
  }
  return { rows, columns };
}

/** The groups on neither axis: their one option each goes into the caption. */
export function captionGroups(layout: TableLayout, groups: HeaderGroup[]): HeaderGroup[] {
  return groups.filter((g) => !layout.rows.includes(g.id) && !layout.columns.includes(g.id));
}

export function axisOf(layout: TableLayout, id: GroupId): Axis | undefined {
  if (layout.rows.includes(id)) return 'rows';
  if (layout.columns.includes(id)) return 'columns';
  return undefined;
}

/** Whether a move is possible: a group moves within its axis while it has room, and never leaves an axis empty. */
export function canMove(layout: TableLayout, id: GroupId, move: LayoutMove): boolean {
  const axis = axisOf(layout, id);
  if (!axis) return false;
  const list = layout[axis];
  const index = list.indexOf(id);
  switch (move) {
    case 'outward':
      return index > 0;
    case 'inward':
      return index < list.length - 1;
    case 'toRows':
      return axis === 'columns' && list.length > 1;
    case 'toColumns':
      return axis === 'rows' && list.length > 1;
    case 'swap':
      return true;
  }
}

/** The layout after a move (the same layout when the move is not possible). A group moved across goes innermost. */
export function moveGroup(layout: TableLayout, id: GroupId, move: LayoutMove): TableLayout {
  if (!canMove(layout, id, move)) return layout;
  if (move === 'swap') return { rows: [...layout.columns], columns: [...layout.rows] };
  const rows = [...layout.rows];
  const columns = [...layout.columns];
  const list = axisOf(layout, id) === 'rows' ? rows : columns;
  const index = list.indexOf(id);
  if (move === 'outward' || move === 'inward') {
    const to = move === 'outward' ? index - 1 : index + 1;
    [list[index], list[to]] = [list[to]!, list[index]!];
  } else {
    list.splice(index, 1);
    (move === 'toRows' ? rows : columns).push(id);
  }
  return { rows, columns };
}

/** The layout in words, for the live region: "Rows: Location, then Time period. Columns: Indicator." */
export function describeLayout(layout: TableLayout, groups: HeaderGroup[]): string {
  const label = (id: GroupId) => groups.find((g) => g.id === id)?.label ?? id;
  const words = (ids: GroupId[]) => (ids.length ? ids.map(label).join(', then ') : 'none');
  return `Rows: ${words(layout.rows)}. Columns: ${words(layout.columns)}.`;
}

/** What a move did, in words, followed by the new layout. */
const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth'];

/** Where a group now is on its side, in words: "now second of 2 row groups (the innermost)". */
export function placeInWords(layout: TableLayout, id: GroupId): string {
  const axis = axisOf(layout, id)!;
  const list = layout[axis];
  const at = list.indexOf(id);
  const where =
    list.length === 1
      ? ' (the only one)'
      : at === 0
        ? ' (the outermost)'
        : at === list.length - 1
          ? ' (the innermost)'
          : '';
  return `now ${ORDINALS[at] ?? `number ${at + 1}`} of ${list.length} ${axis === 'rows' ? 'row' : 'column'} ${list.length === 1 ? 'group' : 'groups'}${where}`;
}

export function describeMove(
  before: TableLayout,
  after: TableLayout,
  id: GroupId,
  move: LayoutMove,
  groups: HeaderGroup[],
): string {
  const label = groups.find((g) => g.id === id)?.label ?? id;
  const what =
    move === 'swap'
      ? 'Rows and columns swapped.'
      : move === 'toRows'
        ? `${label} moved to the rows.`
        : move === 'toColumns'
          ? `${label} moved to the columns.`
          : `${label} moved one place ${move === 'outward' ? 'outward' : 'inward'}, ${placeInWords(after, id)}.`;
  return before === after ? `${label} cannot move that way.` : `${what} ${describeLayout(after, groups)}`;
}

/** The layout as the permalink writes it (`tableRows`, `tableColumns`), or nothing for the default. */
export function layoutParams(layout: TableLayout | undefined): Array<[string, string]> {
  if (!layout) return [];
  return [
    ['tableRows', layout.rows.join(',')],
    ['tableColumns', layout.columns.join(',')],
  ];
}

export function parseLayout(params: URLSearchParams): TableLayout | undefined {
  const rows = params.get('tableRows');
  const columns = params.get('tableColumns');
  if (rows === null && columns === null) return undefined;
  const list = (v: string | null) =>
    v
      ? v
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : [];
  return { rows: list(rows), columns: list(columns) };
}
