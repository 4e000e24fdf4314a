/**
 * The cross-tab: the query's rows pivoted into row and column header groups (time periods, locations, filters,
 * indicators) with one value per cell, its caption (the groups narrowed to one option) and the table as CSV.
 * Pure functions, unit tested.
 */
import { stringify } from 'csv-stringify/browser/esm/sync';
import type { IndicatorMeta, Meta, ResultRow } from './api.js';
import { formatValue } from './format.js';
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
  /** The values as shown: the indicator's unit and decimal places. */
  cells: string[][];
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
    .sort((a, b) => a.level - b.level || a.label.localeCompare(b.label, 'en-GB'))
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

/** A row's option key in one group (not the indicator's, which is per cell). */
function keyIn(row: ResultRow, id: GroupId): string {
  if (id === 'timePeriod') return periodKey(row.timePeriod);
  if (id === 'location') return locationOf(row);
  return row.filters[id.slice('filter:'.length)] ?? '';
}

/** Consecutive equal prefixes merged into spans: the headers of one level. */
function spans(labels: string[][], level: number): Array<HeaderSpan | null> {
  const out: Array<HeaderSpan | null> = [];
  let start = -1;
  for (let i = 0; i < labels.length; i++) {
    const samePrefix = start >= 0 && labels[i]!.slice(0, level + 1).every((l, k) => l === labels[start]![k]);
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

/**
 * Pivots the rows: each header combination that has at least one row becomes a table row or column, in the order of
 * the groups' options, outermost group first. `layout` is the user's (from the permalink) or the default.
 */
export function buildCrossTab(rows: ResultRow[], meta: Meta, indicators: IndicatorMeta[], layout?: TableLayout): CrossTab {
  const groups = headerGroups(rows, meta, indicators);
  const chosen = layout ? settle(layout, groups) : defaultLayout(groups);
  const byId = new Map(groups.map((g) => [g.id, g]));
  const indexOf = new Map(groups.map((g) => [g.id, new Map(g.options.map((o, i) => [o.key, i]))]));
  const indicatorIds = indicators.map((i) => i.id);
  const nonIndicator = groups.filter((g) => g.id !== 'indicator').map((g) => g.id);

  // Each row, per indicator, is one cell: its row combination and column combination as option indexes.
  const rowCombos = new Map<string, number[]>();
  const columnCombos = new Map<string, number[]>();
  const values = new Map<string, string>();
  for (const row of rows) {
    const base = new Map(nonIndicator.map((id) => [id, indexOf.get(id)!.get(keyIn(row, id)) ?? 0]));
    indicatorIds.forEach((indicatorId, ii) => {
      const at = (id: GroupId) => (id === 'indicator' ? ii : base.get(id)!);
      const r = chosen.rows.map(at);
      const c = chosen.columns.map(at);
      const rk = r.join('.');
      const ck = c.join('.');
      rowCombos.set(rk, r);
      columnCombos.set(ck, c);
      // Groups in the caption have one option, so the row and column combinations name the cell.
      values.set(`${rk}/${ck}`, row.values[indicatorId] ?? '');
    });
  }
  const lexical = (a: number[], b: number[]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return 0;
  };
  const rowList = [...rowCombos.values()].sort(lexical);
  const columnList = [...columnCombos.values()].sort(lexical);
  const labelsOf = (ids: GroupId[], combo: number[]) => combo.map((i, level) => byId.get(ids[level]!)!.options[i]!.label);
  const rowLabels = rowList.map((combo) => labelsOf(chosen.rows, combo));
  const columnLabels = columnList.map((combo) => labelsOf(chosen.columns, combo));
  const indicatorLevel = { rows: chosen.rows.indexOf('indicator'), columns: chosen.columns.indexOf('indicator') };
  const indicatorOf = (r: number[], c: number[]) =>
    indicators[indicatorLevel.rows >= 0 ? r[indicatorLevel.rows]! : indicatorLevel.columns >= 0 ? c[indicatorLevel.columns]! : 0]!;
  const raw: string[][] = [];
  const cells: string[][] = [];
  const columnKeys = columnList.map((c) => c.join('.'));
  for (const r of rowList) {
    const rk = r.join('.');
    const rawRow: string[] = [];
    const shownRow: string[] = [];
    columnList.forEach((c, ci) => {
      const value = values.get(`${rk}/${columnKeys[ci]}`) ?? '';
      rawRow.push(value);
      shownRow.push(formatValue(value, indicatorOf(r, c)));
    });
    raw.push(rawRow);
    cells.push(shownRow);
  }
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
    cells,
  };
}

/** The caption: the data set's title and what every cell shares. */
export function crossTabCaption(title: string, table: CrossTab): string {
  return table.captionParts.length ? `${title}: ${table.captionParts.join(', ')}` : title;
}

/**
 * The table as shown, as CSV: the caption on the first line, then one line per column group (the row groups' names
 * on the last of them), then one line per table row with its row headers and the API's values (not the formatted
 * ones, so a spreadsheet reads them as numbers). Spanned headers are repeated, so each line stands on its own.
 */
export function crossTabCsv(title: string, table: CrossTab): string {
  const rowGroupNames = table.layout.rows.map((id) => table.groups.find((g) => g.id === id)?.label ?? id);
  const lines: string[][] = [[crossTabCaption(title, table)]];
  table.layout.columns.forEach((_, level) => {
    const last = level === table.layout.columns.length - 1;
    lines.push([...(last ? rowGroupNames : rowGroupNames.map(() => '')), ...table.columnLabels.map((labels) => labels[level]!)]);
  });
  table.raw.forEach((values, i) => lines.push([...table.rowLabels[i]!, ...values]));
  return stringify(lines, { record_delimiter: '\r\n' });
}
