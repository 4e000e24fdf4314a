/**
 * The cross-tab: the query's rows pivoted into row and column header groups (time periods, locations, filters,
 * indicators) with one value per cell, its caption (the groups narrowed to one option) and the table as CSV.
 * Pure functions, unit tested.
 */
import type { IndicatorMeta, Meta, ResultRow } from './api.js';
import { compareNames, formatValue } from './format.js';
import { captionGroups, settle, defaultLayout, type GroupId, type HeaderGroup, type TableLayout } from './layout.js';
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
  /** Per body row, per row group: the header starting there (with its row span), or null inside a span. */
  rowHeaders: Array<Array<HeaderSpan | null>>;
  /** Per body row, the option labels of its row groups (every level, for the CSV). */
  rowLabels: string[][];
  /** Per column, the option labels of its column groups. */
  columnLabels: string[][];
  /** The values as the API gives them ('' where there is no row), per body row and column. */
  raw: string[][];
  /** A value as shown: with its indicator's unit and decimal places. */
  shownCell(row: number, column: number): string;
}

/**
 * Location labels, with the code beside the name where two locations of the data set share a name (the two
 * "Dorset"s of 2019 onwards).
 */
export function locationLabels(meta: Meta): Map<string, string> {
  const counts = new Map<string, number>();
  for (const g of meta.locations) for (const o of g.options) counts.set(o.label, (counts.get(o.label) ?? 0) + 1);
  const out = new Map<string, string>();
  for (const g of meta.locations) {
    for (const o of g.options) {
      const code = o.code ?? o.urn ?? o.ukprn ?? o.laEstab ?? o.oldCode;
      out.set(`${g.level.code}|${o.id}`, (counts.get(o.label) ?? 0) > 1 && code ? `${o.label} (${code})` : o.label);
    }
  }
  return out;
}

const locationOf = (row: ResultRow) => `${row.geographicLevel}|${row.locations[row.geographicLevel] ?? ''}`;

/**
 * The header groups of these rows: the time periods present (in the metadata's order), the locations present
 * (by level, then name), each filter's options present (in the metadata's order) and the indicators shown.
 */
export function headerGroups(rows: ResultRow[], meta: Meta, indicators: IndicatorMeta[]): HeaderGroup[] {
  const periods = new Set(rows.map((r) => periodKey(r.timePeriod)));
  const locations = new Set(rows.map(locationOf));
  const names = locationLabels(meta);
  const levelOrder = new Map(meta.geographicLevels.map((l, i) => [l.code, i]));
  const locationOptions = [...locations]
    .map((key) => ({ key, label: names.get(key) ?? key.slice(key.indexOf('|') + 1), level: levelOrder.get(key.slice(0, key.indexOf('|'))) ?? 99 }))
    .sort((a, b) => a.level - b.level || compareNames(a.label, b.label))
    .map(({ key, label }) => ({ key, label }));
  const groups: HeaderGroup[] = [
    { id: 'timePeriod', label: 'Time period', options: meta.timePeriods.filter((t) => periods.has(periodKey(t))).map((t) => ({ key: periodKey(t), label: t.label })) },
    { id: 'location', label: 'Location', options: locationOptions },
  ];
  for (const f of meta.filters) {
    const present = new Set(rows.map((r) => r.filters[f.id]));
    groups.push({ id: `filter:${f.id}`, label: f.label, options: f.options.filter((o) => present.has(o.id)).map((o) => ({ key: o.id, label: o.label })) });
  }
  groups.push({ id: 'indicator', label: 'Indicator', options: indicators.map((i) => ({ key: i.id, label: i.label })) });
  // A filter whose options are all missing from the rows (none given) is not a header group.
  return groups.filter((g) => g.options.length > 0);
}

/** A row's option index in one group (not the indicator's, which is per cell). */
function indexIn(group: HeaderGroup): (row: ResultRow) => number {
  const index = new Map(group.options.map((o, i) => [o.key, i]));
  if (group.id === 'timePeriod') return (row) => index.get(periodKey(row.timePeriod)) ?? 0;
  if (group.id === 'location') return (row) => index.get(locationOf(row)) ?? 0;
  const filterId = group.id.slice('filter:'.length);
  return (row) => index.get(row.filters[filterId] ?? '') ?? 0;
}

/** Consecutive equal prefixes merged into spans: the headers of one level. */
function spans(labels: string[][], level: number): Array<HeaderSpan | null> {
  const out: Array<HeaderSpan | null> = [];
  let start = -1;
  for (let i = 0; i < labels.length; i++) {
    let samePrefix = start >= 0;
    for (let k = 0; samePrefix && k <= level; k++) samePrefix = labels[i]![k] === labels[start]![k];
    if (samePrefix) {
      out.push(null);
      out[start]!.span += 1;
    } else {
      start = i;
      out.push({ label: labels[i]![level]!, span: 1 });
    }
  }
  return out;
}

/** Positions in mixed radix: the outermost group weighs most, so sorting the numbers sorts the combinations. */
function radix(sizes: number[]): number[] {
  const weights = sizes.map(() => 1);
  for (let i = sizes.length - 2; i >= 0; i--) weights[i] = weights[i + 1]! * sizes[i + 1]!;
  return weights;
}

/**
 * Pivots the rows: each header combination that has at least one row becomes a table row or column, in the order of
 * the groups' options, outermost group first. `layout` is the user's (from the permalink) or the default.
 * Combinations are numbers (mixed radix over the groups' sizes), so 20,000 cells pivot in tens of milliseconds.
 */
export function buildCrossTab(rows: ResultRow[], meta: Meta, indicators: IndicatorMeta[], layout?: TableLayout): CrossTab {
  const groups = headerGroups(rows, meta, indicators);
  const chosen = layout ? settle(layout, groups) : defaultLayout(groups);
  const byId = new Map(groups.map((g) => [g.id, g]));
  const axis = (ids: GroupId[]) => {
    const sizes = ids.map((id) => byId.get(id)!.options.length);
    return { ids, sizes, weights: radix(sizes), space: sizes.reduce((p, n) => p * n, 1) };
  };
  const rowAxis = axis(chosen.rows);
  const columnAxis = axis(chosen.columns);

  // Each row, per indicator, is one cell. Groups in the caption have one option, so row and column name the cell.
  const rowKeys = new Set<number>();
  const columnKeys = new Set<number>();
  const values = new Map<number, string>();
  // Per axis: the row's position without the indicator, and the indicator's weight (0 when not on this axis).
  const placer = (a: ReturnType<typeof axis>) => {
    const parts = a.ids.flatMap((id, k) => (id === 'indicator' ? [] : [{ at: indexIn(byId.get(id)!), weight: a.weights[k]! }]));
    const indicatorAt = a.ids.indexOf('indicator');
    return {
      base: (row: ResultRow) => {
        let key = 0;
        for (const part of parts) key += part.at(row) * part.weight;
        return key;
      },
      indicatorWeight: indicatorAt >= 0 ? a.weights[indicatorAt]! : 0,
    };
  };
  const rowPlacer = placer(rowAxis);
  const columnPlacer = placer(columnAxis);
  for (const row of rows) {
    const rowBase = rowPlacer.base(row);
    const columnBase = columnPlacer.base(row);
    for (let ii = 0; ii < indicators.length; ii++) {
      const r = rowBase + ii * rowPlacer.indicatorWeight;
      const c = columnBase + ii * columnPlacer.indicatorWeight;
      rowKeys.add(r);
      columnKeys.add(c);
      values.set(r * columnAxis.space + c, row.values[indicators[ii]!.id] ?? '');
    }
  }
  const decode = (key: number, a: ReturnType<typeof axis>) => a.weights.map((w, k) => Math.floor(key / w) % a.sizes[k]!);
  const rowList = [...rowKeys].sort((x, y) => x - y);
  const columnList = [...columnKeys].sort((x, y) => x - y);
  const labelsOf = (a: ReturnType<typeof axis>, key: number) => decode(key, a).map((i, level) => byId.get(a.ids[level]!)!.options[i]!.label);
  const rowLabels = rowList.map((key) => labelsOf(rowAxis, key));
  const columnLabels = columnList.map((key) => labelsOf(columnAxis, key));
  const raw = rowList.map((r) => columnList.map((c) => values.get(r * columnAxis.space + c) ?? ''));

  // The indicator of a cell: from the axis that has the indicator group, else the one indicator.
  const rowIndicator = chosen.rows.indexOf('indicator');
  const columnIndicator = chosen.columns.indexOf('indicator');
  const rowIndicators = rowList.map((key) => (rowIndicator >= 0 ? decode(key, rowAxis)[rowIndicator]! : -1));
  const columnIndicators = columnList.map((key) => (columnIndicator >= 0 ? decode(key, columnAxis)[columnIndicator]! : 0));
  // Formatting is the costly part (Intl), so it is done per cell drawn and remembered per indicator and value.
  const shown = indicators.map(() => new Map<string, string>());
  const shownCell = (r: number, c: number) => {
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

  const rowSpans = chosen.rows.map((_, level) => spans(rowLabels, level));
  // The indicator first: "Headcount, Ethnicity: Total, Barnet, 2021/22".
  const caption = captionGroups(chosen, groups).sort((a, b) => Number(b.id === 'indicator') - Number(a.id === 'indicator'));
  return {
    groups,
    layout: chosen,
    captionParts: caption.map((g) => (g.id.startsWith('filter:') ? `${g.label}: ${g.options[0]!.label}` : g.options[0]!.label)),
    columnHeaders: chosen.columns.map((_, level) => spans(columnLabels, level).filter((s): s is HeaderSpan => s !== null)),
    rowHeaders: rowList.map((_, i) => rowSpans.map((level) => level[i]!)),
    rowLabels,
    columnLabels,
    raw,
    shownCell,
  };
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
      let header = table.rowHeaders[r]![level] ?? null;
      let start = r;
      if (r === from && !header) {
        while (start > 0 && !table.rowHeaders[start]![level]) start--;
        header = table.rowHeaders[start]![level]!;
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
 * The body rows `from` to `to` as one HTML string, for the browser to parse in one go: building 10,000 cells as
 * DOM nodes one by one costs several times more. Styled by the table's class (no class per cell).
 */
export function crossTabBodyHtml(table: CrossTab, from: number, to: number): string {
  const headers = pageRowHeaders(table, from, to);
  const innermost = table.layout.rows.length - 1;
  const parts: string[] = [];
  for (let r = from; r < to; r++) {
    parts.push('<tr>');
    const line = headers[r - from]!;
    for (let level = 0; level < line.length; level++) {
      const header = line[level];
      if (!header) continue;
      parts.push(`<th scope="${level === innermost ? 'row' : 'rowgroup'}"${header.span > 1 ? ` rowspan="${header.span}"` : ''}>${escapeHtml(header.label)}</th>`);
    }
    const columns = table.raw[r]!.length;
    for (let c = 0; c < columns; c++) parts.push(`<td>${escapeHtml(table.shownCell(r, c))}</td>`);
    parts.push('</tr>');
  }
  return parts.join('');
}

/** The header rows: the corner (naming the row groups) and one line per column group, as HTML. */
export function crossTabHeadHtml(table: CrossTab): string {
  const rowLevels = table.layout.rows.length;
  const lines = table.columnHeaders.length;
  const names = table.layout.rows.map((id) => table.groups.find((g) => g.id === id)?.label ?? id).join(' / ');
  return table.columnHeaders
    .map((line, level) => {
      const corner = level === 0
        ? `<td class="app-crosstab__corner"${rowLevels > 1 ? ` colspan="${rowLevels}"` : ''}${lines > 1 ? ` rowspan="${lines}"` : ''}>${escapeHtml(names)}</td>`
        : '';
      const scope = level === lines - 1 ? 'col' : 'colgroup';
      return `<tr>${corner}${line.map((s) => `<th scope="${scope}"${s.span > 1 ? ` colspan="${s.span}"` : ''}>${escapeHtml(s.label)}</th>`).join('')}</tr>`;
    })
    .join('');
}

/** Every cell as shown (for tests and small tables; the page formats the cells it draws). */
export function shownCells(table: CrossTab): string[][] {
  return table.raw.map((line, r) => line.map((_, c) => table.shownCell(r, c)));
}

/** The caption: the data set's title and what every cell shares. */
export function crossTabCaption(title: string, table: CrossTab): string {
  return table.captionParts.length ? `${title}: ${table.captionParts.join(', ')}` : title;
}
