/**
 * The cross-tab as CSV, in its own module: csv-stringify is a third of the client's code and only the "Download
 * this table" button needs it, so the page loads it on that click.
 */
import { parse } from 'csv-parse/browser/esm/sync';
import { stringify } from 'csv-stringify/browser/esm/sync';
import { escapeFormula } from '../../statistics/csv-formula.js';
import { crossTabCaption, type CrossTab } from './crosstab.js';

/**
 * The table as shown, as CSV: the caption on the first line, then one line per column group (the row groups' names
 * on the last of them), then one line per table row with its row headers and the API's values (not the formatted
 * ones, so a spreadsheet reads them as numbers). Spanned headers are repeated, so each line stands on its own.
 * Every cell passes the service's one CSV formula rule (escapeFormula): labels come from publishers' files.
 */
export function crossTabCsv(title: string, table: CrossTab): string {
  const rowGroupNames = table.layout.rows.map((id) => table.groups.find((g) => g.id === id)?.label ?? id);
  const lines: string[][] = [[crossTabCaption(title, table)]];
  table.layout.columns.forEach((_, level) => {
    const last = level === table.layout.columns.length - 1;
    lines.push([
      ...(last ? rowGroupNames : rowGroupNames.map(() => '')),
      ...table.columnLabels.map((labels) => labels[level]!),
    ]);
  });
  table.raw.forEach((values, i) => lines.push([...table.rowLabels[i]!, ...values]));
  return stringify(
    lines.map((line) => line.map(escapeFormula)),
    { record_delimiter: '\r\n' },
  );
}

/**
 * The API's CSV of every matching row without the location columns no row fills: the API writes one column per
 * geographic level of the data set, so a query of regions only has an empty "Local authority" column (and others).
 * `levelLabels` are the data set's level names, as the CSV's header writes them; other columns are kept as they are.
 */
export function withoutEmptyLocationColumns(csv: string, levelLabels: string[]): string {
  const records: string[][] = parse(csv, { relax_column_count: true });
  const header = records[0];
  if (!header) return csv;
  const levels = new Set(levelLabels);
  const dropped = new Set(
    header.flatMap((name, column) =>
      levels.has(name) && records.slice(1).every((record) => !record[column]) ? [column] : [],
    ),
  );
  if (dropped.size === 0) return csv;
  return stringify(records.map((record) => record.filter((_, column) => !dropped.has(column))));
}
