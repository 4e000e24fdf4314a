/**
 * The cross-tab: the query's rows pivoted into row and column header groups (time periods, locations, filters,
 * indicators) with one value per cell, its caption (the groups narrowed to one option) and the table as CSV.
 * Pure functions, unit tested.
 */
import type { IndicatorMeta, Meta, ResultRow } from './api.js';
import { compareNames, formatValue, numericValue } from './format.js';
import { captionGroups, settle, defaultLayout, type GroupId, type HeaderGroup, type TableLayout } from './layout.js';
import { locationLabels } from './locations.js';
import { periodKey } from './query.js';

export interface HeaderSpan {
  label: string;
  /** How many columns (or rows) the header covers. */
  span: number;
}

export interface CrossTab {
  groups: HeaderGroup[];
  layout: TableLayout;
  /** The groups narrowed to one option, in words: "Headcount", "Ethnicity: White - Irish", "Barnet", "2021/22". */
  captionParts: string[];
  /** One line per column group, outermost first; the spans add up to the number of columns. */
  columnHeaders: HeaderSpan[][];
  /** Per row group, per body row: the header starting there (with its row span), or null inside a span. */
  rowHeaders: Array<Array<HeaderSpan | null>>;
  /** Per body row, the option labels of its row groups (every level, for the CSV; made when first read). */
  readonly rowLabels: string[][];
  /** Per column, the option labels of its column groups. */
  columnLabels: string[][];
  /** The values as the API gives them ('' where there is no row), per body row and column. */
  raw: string[][];
  /** A value as shown: with its indicator's unit and decimal places. */
  shownCell(row: number, column: number): string;
}

/**
 * The header groups of these rows: the time periods present (in the metadata's order), the locations present
 * (by level, then name), each filter's options present (in the metadata's order) and the indicators shown.
 */
export function headerGroups(rows: ResultRow[], meta: Meta, indicators: IndicatorMeta[]): HeaderGroup[] {
  return placeRows(rows, meta, indicators).groups;
}

/** Each row's slot per group: its time period's, location's and filter options' (-1: one the metadata lacks). */
interface RowSlots {
  periodOf: Int32Array;
  locationOf: Int32Array;
  filterOf: Int32Array[];
  /** The locations by slot: the metadata's, then those only the rows name (named by their id). */
  locationList: Array<{ key: string; label: string; level: string }>;
}

/** Each row's slots, through maps of the metadata built once: no key string is made per row and group. */
function rowSlots(rows: ResultRow[], meta: Meta): RowSlots {
  const n = rows.length;
  // Time periods: by period, then code, to the metadata's position.
  const periodSlots = new Map<string, Map<string, number>>();
  meta.timePeriods.forEach((t, i) => {
    const codes = periodSlots.get(t.period) ?? new Map<string, number>();
    codes.set(t.code, i);
    periodSlots.set(t.period, codes);
  });
  // Locations: by level, then id, to a slot; slots past the metadata's are locations it does not list.
  const names = locationLabels(meta);
  const locationSlots = new Map<string, Map<string, number>>();
  const locationList: RowSlots['locationList'] = [];
  const locationSlot = (level: string, id: string) => {
    let ids = locationSlots.get(level);
    if (!ids) locationSlots.set(level, (ids = new Map<string, number>()));
    let slot = ids.get(id);
    if (slot === undefined) {
      const key = `${level}|${id}`;
      ids.set(id, (slot = locationList.length));
      locationList.push({ key, label: names.get(key) ?? id, level });
    }
    return slot;
  };
  for (const g of meta.locations) for (const o of g.options) locationSlot(g.level.code, o.id);
  const filterSlots = meta.filters.map((f) => new Map(f.options.map((o, i) => [o.id, i])));

  const periodOf = new Int32Array(n);
  const locationOf = new Int32Array(n);
  const filterOf = meta.filters.map(() => new Int32Array(n));
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    periodOf[i] = periodSlots.get(row.timePeriod.period)?.get(row.timePeriod.code) ?? -1;
    locationOf[i] = locationSlot(row.geographicLevel, row.locations[row.geographicLevel] ?? '');
    for (let f = 0; f < filterOf.length; f++)
      filterOf[f]![i] = filterSlots[f]!.get(row.filters[meta.filters[f]!.id] ?? '') ?? -1;
  }
  return { periodOf, locationOf, filterOf, locationList };
}

/**
 * One group's options present in the rows (`slotsOf`: each row's slot), in `order`, and each row's position among
 * them (the first option's for a missing one).
 */
function presentOptions<T>(
  slotsOf: Int32Array,
  slots: number,
  order: (present: number[]) => number[],
  option: (slot: number) => T,
): { options: T[]; at: Int32Array } {
  const n = slotsOf.length;
  const present = new Uint8Array(slots);
  for (let i = 0; i < n; i++) if (slotsOf[i]! >= 0) present[slotsOf[i]!] = 1;
  const kept = order([...present.keys()].filter((slot) => present[slot]));
  const position = new Int32Array(slots);
  kept.forEach((slot, k) => (position[slot] = k));
  const at = new Int32Array(n);
  for (let i = 0; i < n; i++) at[i] = slotsOf[i]! >= 0 ? position[slotsOf[i]!]! : 0;
  return { options: kept.map(option), at };
}

/**
 * The header groups of these rows (see headerGroups) and, per group but the indicator's, each row's option as its
 * position in the group (`at`). One pass over the rows through maps of the metadata, with no key string made per row
 * and group: on a page whose code the browser has not compiled yet, that was the pivot's costliest part. A row whose
 * period or filter option the metadata lacks takes the group's first option; a location it lacks is named by its id.
 */
function placeRows(
  rows: ResultRow[],
  meta: Meta,
  indicators: IndicatorMeta[],
): { groups: HeaderGroup[]; at: Map<GroupId, Int32Array> } {
  const { periodOf, locationOf, filterOf, locationList } = rowSlots(rows, meta);
  const levelOrder = new Map(meta.geographicLevels.map((l, i) => [l.code, i]));
  const levelRank = (slot: number) => levelOrder.get(locationList[slot]!.level) ?? 99;
  const placed: Array<HeaderGroup & { at: Int32Array }> = [
    {
      id: 'timePeriod',
      label: 'Time period',
      ...presentOptions(
        periodOf,
        meta.timePeriods.length,
        (slots) => slots,
        (slot) => ({ key: periodKey(meta.timePeriods[slot]!), label: meta.timePeriods[slot]!.label }),
      ),
    },
    {
      id: 'location',
      label: 'Location',
      ...presentOptions(
        locationOf,
        locationList.length,
        (slots) =>
          slots.sort(
            (a, b) => levelRank(a) - levelRank(b) || compareNames(locationList[a]!.label, locationList[b]!.label),
          ),
        (slot) => ({ key: locationList[slot]!.key, label: locationList[slot]!.label }),
      ),
    },
    ...meta.filters.map((f, k) => ({
      id: `filter:${f.id}`,
      label: f.label,
      ...presentOptions(
        filterOf[k]!,
        f.options.length,
        (slots) => slots,
        (slot) => ({ key: f.options[slot]!.id, label: f.options[slot]!.label }),
      ),
    })),
  ];
  // A filter whose options are all missing from the rows (none given) is not a header group.
  const kept = placed.filter((g) => g.options.length > 0);
  const groups: HeaderGroup[] = kept.map(({ id, label, options }) => ({ id, label, options }));
  groups.push({ id: 'indicator', label: 'Indicator', options: indicators.map((i) => ({ key: i.id, label: i.label })) });
  return { groups: groups.filter((g) => g.options.length > 0), at: new Map(kept.map((g) => [g.id, g.at])) };
}

/** Positions in mixed radix: the outermost group weighs most, so sorting the numbers sorts the combinations. */
function radix(sizes: number[]): number[] {
  const weights = sizes.map(() => 1);
  for (let i = sizes.length - 2; i >= 0; i--) weights[i] = weights[i + 1]! * sizes[i + 1]!;
  return weights;
}

/**
 * An array for `length` keys of a space of `space`: 32-bit integers where they hold it (most tables; doubles made the
 * pivot of the benchmark's 10,000 rows 38 -> 46 ms, cold, in Node), doubles for an axis of many groups with room for
 * more combinations than that.
 */
function keyArray(space: number, length: number): Int32Array | Float64Array {
  return space <= 0x7fffffff ? new Int32Array(length) : new Float64Array(length);
}

/** Key spaces up to this size are ordered in a typed array over the space (4 MB), larger ones through a set. */
const DENSE_KEY_SPACE = 1 << 20;

/**
 * The distinct keys, ascending, and each one's position among them. Most tables' key spaces are small (every
 * combination of the axis's options: thousands), so a typed array over the space does it without a set, a sort or a
 * map lookup per cell, which is most of the cost on a page whose code the browser has not compiled yet.
 */
export function keyOrder(
  keys: Int32Array | Float64Array,
  space: number,
): { keys: number[]; positionOf: (key: number) => number } {
  if (space <= DENSE_KEY_SPACE) {
    const positions = new Int32Array(space).fill(-1);
    for (let i = 0; i < keys.length; i++) positions[keys[i]!] = 0;
    const ordered: number[] = [];
    for (let key = 0; key < space; key++) if (positions[key] === 0) positions[key] = ordered.push(key) - 1;
    return { keys: ordered, positionOf: (key) => positions[key]! };
  }
  const ordered = [...new Set(keys)].sort((x, y) => x - y);
  const positions = new Map(ordered.map((key, i) => [key, i]));
  return { keys: ordered, positionOf: (key) => positions.get(key)! };
}

/**
 * Pivots the rows: each header combination that has at least one row becomes a table row or column, in the order of
 * the groups' options, outermost group first. `layout` is the user's (from the permalink) or the default.
 * Combinations are numbers (mixed radix over the groups' sizes), so 20,000 cells pivot in tens of milliseconds.
 */
export function buildCrossTab(
  rows: ResultRow[],
  meta: Meta,
  indicators: IndicatorMeta[],
  layout?: TableLayout,
): CrossTab {
  const { groups, at } = placeRows(rows, meta, indicators);
  const chosen = layout ? settle(layout, groups) : defaultLayout(groups);
  const byId = new Map(groups.map((g) => [g.id, g]));
  const rowAxis = pivotAxis(chosen.rows, byId, at, rows.length);
  const columnAxis = pivotAxis(chosen.columns, byId, at, rows.length);

  // Each row, per indicator, is one cell. Groups in the caption have one option, so row and column name the cell.
  const cellCount = rows.length * indicators.length;
  const rowKeys = keyArray(rowAxis.space, cellCount);
  const columnKeys = keyArray(columnAxis.space, cellCount);
  for (let i = 0, cell = 0; i < rows.length; i++) {
    for (let ii = 0; ii < indicators.length; ii++, cell++) {
      rowKeys[cell] = rowAxis.base[i]! + ii * rowAxis.indicatorWeight;
      columnKeys[cell] = columnAxis.base[i]! + ii * columnAxis.indicatorWeight;
    }
  }
  const rowOrder = keyOrder(rowKeys, rowAxis.space);
  const columnOrder = keyOrder(columnKeys, columnAxis.space);
  const rowList = rowOrder.keys;
  const columnList = columnOrder.keys;
  const raw = rowList.map(() => new Array<string>(columnList.length).fill(''));
  for (let i = 0, cell = 0; i < rows.length; i++) {
    const values = rows[i]!.values;
    for (let ii = 0; ii < indicators.length; ii++, cell++) {
      raw[rowOrder.positionOf(rowKeys[cell]!)]![columnOrder.positionOf(columnKeys[cell]!)] =
        values[indicators[ii]!.id] ?? '';
    }
  }
  let rowLabels: string[][] | undefined;

  // The indicator of a cell: from the axis that has the indicator group, else the one indicator.
  const rowIndicator = chosen.rows.indexOf('indicator');
  const columnIndicator = chosen.columns.indexOf('indicator');
  const rowIndicators = rowList.map((key) => (rowIndicator >= 0 ? optionAt(key, rowAxis, rowIndicator) : -1));
  const columnIndicators = columnList.map((key) =>
    columnIndicator >= 0 ? optionAt(key, columnAxis, columnIndicator) : 0,
  );
  // The indicator first: "Headcount, Ethnicity: Total, Barnet, 2021/22".
  const caption = captionGroups(chosen, groups).sort(
    (a, b) => Number(b.id === 'indicator') - Number(a.id === 'indicator'),
  );
  return {
    groups,
    layout: chosen,
    captionParts: caption.map((g) =>
      g.id.startsWith('filter:') ? `${g.label}: ${g.options[0]!.label}` : g.options[0]!.label,
    ),
    columnHeaders: chosen.columns.map((_, level) =>
      headerSpans(columnList, columnAxis, level).filter((s): s is HeaderSpan => s !== null),
    ),
    rowHeaders: chosen.rows.map((_, level) => headerSpans(rowList, rowAxis, level)),
    get rowLabels() {
      return (rowLabels ??= rowList.map((key) => labelsOf(rowAxis, key)));
    },
    columnLabels: columnList.map((key) => labelsOf(columnAxis, key)),
    raw,
    shownCell: cellFormatter(raw, indicators, rowIndicators, columnIndicators),
  };
}

/** One axis of the pivot: its groups' sizes and weights (a key is a number in that mixed radix), each row's key. */
interface PivotAxis {
  sizes: number[];
  weights: number[];
  /** Per row of the answer, its position on this axis without the indicator (the indicator is per cell). */
  base: Int32Array | Float64Array;
  /** How many keys the axis has room for: every combination of its groups' options. */
  space: number;
  /** The indicator's weight: 0 when it is not on this axis. */
  indicatorWeight: number;
  labels: string[][];
}

function pivotAxis(
  ids: GroupId[],
  byId: Map<GroupId, HeaderGroup>,
  at: Map<GroupId, Int32Array>,
  rowCount: number,
): PivotAxis {
  const sizes = ids.map((id) => byId.get(id)!.options.length);
  const weights = radix(sizes);
  const space = sizes.reduce((product, size) => product * size, 1);
  const base = keyArray(space, rowCount);
  ids.forEach((id, k) => {
    const positions = at.get(id);
    if (positions) for (let i = 0; i < rowCount; i++) base[i]! += positions[i]! * weights[k]!;
  });
  const indicatorAt = ids.indexOf('indicator');
  return {
    sizes,
    weights,
    base,
    space,
    indicatorWeight: indicatorAt >= 0 ? weights[indicatorAt]! : 0,
    labels: ids.map((id) => byId.get(id)!.options.map((o) => o.label)),
  };
}

const optionAt = (key: number, axis: PivotAxis, level: number) =>
  Math.floor(key / axis.weights[level]!) % axis.sizes[level]!;
const labelsOf = (axis: PivotAxis, key: number) =>
  axis.labels.map((labels, level) => labels[optionAt(key, axis, level)]!);

/**
 * Headers from the keys (keys share their headers down to a level when they agree above its weight): no labels per
 * row are made for them.
 */
function headerSpans(keys: number[], axis: PivotAxis, level: number): Array<HeaderSpan | null> {
  const out: Array<HeaderSpan | null> = [];
  let start: HeaderSpan | undefined;
  let prefix = -1;
  for (const key of keys) {
    const here = Math.floor(key / axis.weights[level]!);
    if (start && here === prefix) {
      start.span += 1;
      out.push(null);
    } else {
      out.push((start = { label: axis.labels[level]![here % axis.sizes[level]!]!, span: 1 }));
      prefix = here;
    }
  }
  return out;
}

/** A value as shown, formatted when a cell is drawn and remembered per indicator and value. */
function cellFormatter(
  raw: string[][],
  indicators: IndicatorMeta[],
  rowIndicators: number[],
  columnIndicators: number[],
): CrossTab['shownCell'] {
  const shown = indicators.map(() => new Map<string, string>());
  return (r, c) => {
    const ii = rowIndicators[r]! >= 0 ? rowIndicators[r]! : columnIndicators[c]!;
    const value = raw[r]![c]!;
    const memo = shown[ii] ?? new Map<string, string>();
    let text = memo.get(value);
    if (text === undefined) {
      text = formatValue(value, indicators[ii] ?? { unit: undefined, decimalPlaces: undefined });
      memo.set(value, text);
    }
    return text;
  };
}

/** How the table's rows are sorted: by a value column (its numbers; no number last) or by the row labels. */
export type CrossTabSort =
  | { by: 'column'; column: number; direction: 'ascending' | 'descending' }
  | { by: 'label'; direction: 'ascending' | 'descending' };

/**
 * The table with its rows in another order. By labels: the row groups' labels, outermost first, in words order.
 * By a column: its values as numbers, rows without one last in either direction, ties in the table's own order.
 * The row headers span the rows that stay together under the same label (all of them, sorted by labels; rarely
 * any, sorted by values).
 */
export function sortCrossTab(table: CrossTab, sort: CrossTabSort): CrossTab {
  const labels = table.rowLabels;
  const sign = sort.direction === 'ascending' ? 1 : -1;
  const order = labels.map((_, i) => i);
  if (sort.by === 'label') {
    order.sort((a, b) => {
      for (let level = 0; level < labels[a]!.length; level++) {
        const compared = compareNames(labels[a]![level]!, labels[b]![level]!);
        if (compared !== 0) return sign * compared;
      }
      return a - b;
    });
  } else {
    const value = (r: number) => numericValue(table.raw[r]![sort.column]);
    order.sort((a, b) => {
      const x = value(a);
      const y = value(b);
      if (x === undefined || y === undefined) return x === y ? a - b : x === undefined ? 1 : -1;
      return x === y ? a - b : sign * (x - y);
    });
  }
  const sortedLabels = order.map((r) => labels[r]!);
  const rowHeaders = table.layout.rows.map((_, level) => {
    const out: Array<HeaderSpan | null> = [];
    let start: HeaderSpan | undefined;
    sortedLabels.forEach((line, r) => {
      // A row continues the span above it when it agrees with that row at this level and every outer one.
      const same = start && r > 0 && line.slice(0, level + 1).every((label, l) => label === sortedLabels[r - 1]![l]);
      if (same) {
        start!.span += 1;
        out.push(null);
      } else out.push((start = { label: line[level]!, span: 1 }));
    });
    return out;
  });
  const raw = order.map((r) => table.raw[r]!);
  return { ...table, rowHeaders, rowLabels: sortedLabels, raw, shownCell: (r, c) => table.shownCell(order[r]!, c) };
}

/** Cells of one page of the table on screen: the issue's goal is these drawn within 200 ms in Chromium. */
export const PAGE_CELLS = 10000;

/** Table rows per page: as many as fit in PAGE_CELLS cells, at least one. */
export function rowsPerPage(table: CrossTab): number {
  return Math.max(1, Math.floor(PAGE_CELLS / Math.max(1, table.columnLabels.length)));
}

/**
 * The row headers of body rows `from` to `to` (exclusive) as a page of their own: a span that began on an earlier
 * page starts again on the page's first row, and no span reaches past the page's last row, so each page is a
 * whole table (every cell has all its row headers).
 */
export function pageRowHeaders(table: CrossTab, from: number, to: number): Array<Array<HeaderSpan | null>> {
  const levels = table.layout.rows.length;
  const out: Array<Array<HeaderSpan | null>> = [];
  for (let r = from; r < to; r++) {
    const line: Array<HeaderSpan | null> = [];
    for (let level = 0; level < levels; level++) {
      const headers = table.rowHeaders[level]!;
      let header = headers[r] ?? null;
      let start = r;
      if (r === from && !header) {
        while (start > 0 && !headers[start]) start--;
        header = headers[start]!;
      }
      line.push(header ? { label: header.label, span: Math.min(header.span - (r - start), to - r) } : null);
    }
    out.push(line);
  }
  return out;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
/** Text for HTML (labels come from the data set's metadata, so they are escaped). */
export const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => HTML_ESCAPES[c]!);

/**
 * Body rows per row group (`<tbody>`): the page's body is cut into such blocks, each a row group that the browser
 * styles and lays out only once it comes into view (`content-visibility: auto` in styles.css), so drawing a page of
 * 10,000 cells costs about the rows in view. A span of row headers restarts at each block, as at each page.
 */
export const BLOCK_ROWS = 40;

/** The header rows: the corner (naming the row groups) and one line per column group, as HTML. */
export function crossTabHeadHtml(table: CrossTab): string {
  const rowLevels = table.layout.rows.length;
  const lines = table.columnHeaders.length;
  const names = table.layout.rows.map((id) => table.groups.find((g) => g.id === id)?.label ?? id).join(' / ');
  return table.columnHeaders
    .map((line, level) => {
      const corner =
        level === 0
          ? `<td class="app-crosstab__corner"${rowLevels > 1 ? ` colspan="${rowLevels}"` : ''}${lines > 1 ? ` rowspan="${lines}"` : ''}>${escapeHtml(names)}</td>`
          : '';
      const scope = level === lines - 1 ? 'col' : 'colgroup';
      return `<tr>${corner}${line.map((s) => `<th scope="${scope}"${s.span > 1 ? ` colspan="${s.span}"` : ''}>${escapeHtml(s.label)}</th>`).join('')}</tr>`;
    })
    .join('');
}

/** Room around a cell's text, in CSS pixels: padding and border as styles.css gives them to `.app-crosstab` cells. */
export const CELL_EDGES = { value: 10, rowHeader: 21 };

/** A page of the table's body, as crossTabPage makes it. */
export interface CrossTabPage {
  /** The body rows as one HTML string, in blocks of BLOCK_ROWS rows (one `<tbody>` each). */
  bodyHtml: string;
  /** The columns as a CSS grid track list. */
  columns: string;
}

/**
 * The body rows `from` to `to` and the widths of the columns, in one pass over the cells.
 *
 * The rows are one HTML string, for the browser to parse in one go: building 10,000 cells as DOM nodes one by one
 * costs several times more. Styled by the table's class (no class per cell, and no style attribute: the page's
 * Content-Security-Policy refuses them, each refusal costing time as well); the spans become grid placements on the
 * page (table.ts).
 *
 * Every block of the body is a grid of its own, so the blocks line up only if the column widths are fixed
 * beforehand, from the widest text each column holds on the page (`textWidth` measures a text in the table's font,
 * bold for headers, in em). Row header columns are as wide as their widest label; value columns as their widest
 * value or their header's longest word (headers wrap), and share any room left.
 */
export function crossTabPage(
  table: CrossTab,
  from: number,
  to: number,
  textWidth: (text: string, bold: boolean) => number,
): CrossTabPage {
  const levels = table.layout.rows.length;
  const innermost = levels - 1;
  const columnCount = table.columnLabels.length;
  const headerWidths = new Map<string, number>();
  const rowHeaderWidest = new Array<number>(levels).fill(0);
  // A value's width is the sum of its characters' (each measured once): figures are set at one width (tabular
  // figures), and what kerning takes off only makes the sum a little wider than the text.
  const charWidths = new Map<number, number>();
  // Per text shown (cells repeat texts: counts, percentages, suppression codes): its cell's HTML and its width.
  const cells = new Map<string, { html: string; width: number }>();
  const valueWidest = table.columnLabels.map((labels) =>
    Math.max(0, ...(labels[labels.length - 1] ?? '').split(/\s+/).map((word) => textWidth(word, true))),
  );
  const parts: string[] = [];
  for (let start = from; start < to; start += BLOCK_ROWS) {
    const end = Math.min(to, start + BLOCK_ROWS);
    const headers = pageRowHeaders(table, start, end);
    parts.push('<tbody>');
    for (let r = start; r < end; r++) {
      parts.push('<tr>');
      const line = headers[r - start]!;
      for (let level = 0; level < levels; level++) {
        const header = line[level];
        if (!header) continue;
        let width = headerWidths.get(header.label);
        if (width === undefined) headerWidths.set(header.label, (width = textWidth(header.label, true)));
        if (width > rowHeaderWidest[level]!) rowHeaderWidest[level] = width;
        parts.push(
          `<th scope="${level === innermost ? 'row' : 'rowgroup'}"${header.span > 1 ? ` rowspan="${header.span}"` : ''}>${escapeHtml(header.label)}</th>`,
        );
      }
      for (let c = 0; c < columnCount; c++) {
        const text = table.shownCell(r, c);
        let cell = cells.get(text);
        if (cell === undefined) {
          let width = 0;
          for (let i = 0; i < text.length; i++) {
            const code = text.charCodeAt(i);
            let w = charWidths.get(code);
            if (w === undefined) charWidths.set(code, (w = textWidth(text[i]!, false)));
            width += w;
          }
          cells.set(text, (cell = { html: `<td>${escapeHtml(text)}</td>`, width }));
        }
        if (cell.width > valueWidest[c]!) valueWidest[c] = cell.width;
        parts.push(cell.html);
      }
      parts.push('</tr>');
    }
    parts.push('</tbody>');
  }
  // Texts in em (rounded up to a thousandth), so the columns grow with the text when a reader enlarges it alone.
  const track = (width: number, edges: number) => `calc(${Math.ceil(width * 1000) / 1000}em + ${edges}px)`;
  const columns = [
    ...rowHeaderWidest.map((width) => track(width, CELL_EDGES.rowHeader)),
    ...valueWidest.map((width) => `minmax(${track(width, CELL_EDGES.value)}, 1fr)`),
  ].join(' ');
  return { bodyHtml: parts.join(''), columns };
}

/** Every cell as shown (for tests and small tables; the page formats the cells it draws). */
export function shownCells(table: CrossTab): string[][] {
  return table.raw.map((line, r) => line.map((_, c) => table.shownCell(r, c)));
}

/** The caption: the data set's title and what every cell shares. */
export function crossTabCaption(title: string, table: CrossTab): string {
  return table.captionParts.length ? `${title}: ${table.captionParts.join(', ')}` : title;
}
