import { CsvSyntaxError, readCsvFile, type CsvBatch } from './csv-reader.js';
import { ProblemCollector, type ImportProblem } from './errors.js';
import { formatLimit, IMPORT_LIMITS } from './limits.js';
import { FIXED_COLUMNS, INDICATOR_UNITS } from '../standard/data-file-columns.js';

export interface MetaFilter {
  column: string;
  label: string;
  hint: string;
  /** `filter_default`, when given: the label of the filter's default option. */
  defaultLabel: string;
  line: number;
}

export interface MetaIndicator {
  column: string;
  label: string;
  /** The unit as the API shows it (`string` for `numberstring`), `''` when none. */
  unit: string;
  decimalPlaces: number | null;
  line: number;
}

export interface MetaFile {
  filters: MetaFilter[];
  indicators: MetaIndicator[];
}

const REQUIRED_META_COLUMNS = [
  'col_name',
  'col_type',
  'label',
  'filter_grouping_column',
  'filter_hint',
  'indicator_grouping',
  'indicator_unit',
  'indicator_dp',
] as const;

/** The meta CSV's records and their lines; a syntax error is a problem at its line. */
async function parseMetaCsv(path: string, fileName: string, problems: ProblemCollector): Promise<CsvBatch> {
  try {
    return await readCsvFile(path, IMPORT_LIMITS.metaRows + 1);
  } catch (error) {
    if (error instanceof CsvSyntaxError) {
      problems.add({ file: fileName, line: error.line, message: error.message });
      problems.throwIfAny();
    }
    throw error;
  }
}

/** A row's cell by column name, trimmed (`''` when absent); a header without a required column is a problem. */
function metaCells(
  header: string[],
  fileName: string,
  problems: ProblemCollector,
): (row: string[], column: string) => string {
  const index = new Map(header.map((name, i) => [name.trim(), i]));
  for (const column of REQUIRED_META_COLUMNS) {
    if (!index.has(column))
      problems.add({ file: fileName, line: 1, column, message: `The meta file has no "${column}" column.` });
  }
  problems.throwIfAny();
  return (row, column) => {
    const i = index.get(column);
    return i === undefined ? '' : (row[i] ?? '').trim();
  };
}

/**
 * Whether the column a row describes (`column`) can be a filter or an indicator: named, described once
 * (`seen`, which this adds it to), in the data file and none of the standard's time or location columns.
 */
function describableColumn(
  column: string,
  at: { file: string; line: number },
  seen: Set<string>,
  dataHeader: ReadonlySet<string>,
  dataFileName: string,
  problems: ProblemCollector,
): boolean {
  if (!column) {
    problems.add({ ...at, column: 'col_name', message: 'The column name is empty.' });
    return false;
  }
  if (seen.has(column)) {
    problems.add({ ...at, column: 'col_name', message: `The column "${column}" is described twice.` });
    return false;
  }
  seen.add(column);
  if (!dataHeader.has(column)) {
    problems.add({
      ...at,
      column: 'col_name',
      message: `The meta file describes a column "${column}" that the data file ${dataFileName} does not have.`,
    });
    return false;
  }
  if (FIXED_COLUMNS.has(column)) {
    problems.add({
      ...at,
      column: 'col_name',
      message: `"${column}" is a time or location column of the standard and cannot be a filter or an indicator.`,
    });
    return false;
  }
  return true;
}

/** The problem at the row that describes one filter or indicator more than the limit allows. */
function overLimit(at: { file: string; line: number }, what: 'filters' | 'indicators', limit: number): ImportProblem {
  return {
    ...at,
    column: 'col_type',
    message: `The meta file describes more than ${formatLimit(limit)} ${what}, the limit.`,
  };
}

/**
 * Reads and checks the meta CSV against the data file's header: every described column must exist
 * in the data file and not be a time, level or location column.
 */
export async function readMetaFile(
  path: string,
  fileName: string,
  dataHeader: ReadonlySet<string>,
  dataFileName: string,
): Promise<MetaFile> {
  const problems = new ProblemCollector();
  const parsed = await parseMetaCsv(path, fileName, problems);
  const [header, ...rows] = parsed.records;
  if (!header) {
    problems.add({ file: fileName, line: 1, message: 'The meta file is empty; it needs a header row.' });
    problems.throwIfAny();
    return { filters: [], indicators: [] };
  }
  const cell = metaCells(header, fileName, problems);

  const filters: MetaFilter[] = [];
  const indicators: MetaIndicator[] = [];
  const seen = new Set<string>();
  rows.forEach((row, r) => {
    const line = parsed.lines[r + 1]!;
    const at = { file: fileName, line };
    if (filters.length > IMPORT_LIMITS.filters || indicators.length > IMPORT_LIMITS.indicators) return;
    if (row.length !== header.length) {
      problems.add({ ...at, message: `The row has ${row.length} cells but the header has ${header.length}.` });
      return;
    }
    const column = cell(row, 'col_name');
    const type = cell(row, 'col_type').toLowerCase();
    const label = cell(row, 'label');
    if (!describableColumn(column, at, seen, dataHeader, dataFileName, problems)) return;
    if (!label) problems.add({ ...at, column: 'label', message: `The label of "${column}" is empty.` });
    if (type === 'filter') {
      filters.push({ column, label, hint: cell(row, 'filter_hint'), defaultLabel: cell(row, 'filter_default'), line });
      if (filters.length > IMPORT_LIMITS.filters) problems.add(overLimit(at, 'filters', IMPORT_LIMITS.filters));
    } else if (type === 'indicator') {
      indicators.push(indicatorOf(column, label, cell(row, 'indicator_unit'), cell(row, 'indicator_dp'), at, problems));
      if (indicators.length > IMPORT_LIMITS.indicators)
        problems.add(overLimit(at, 'indicators', IMPORT_LIMITS.indicators));
    } else {
      problems.add({
        ...at,
        column: 'col_type',
        message: `Unknown column type "${cell(row, 'col_type')}"; expected Filter or Indicator.`,
      });
    }
  });
  if (filters.length + indicators.length === 0 && problems.problems.length === 0) {
    problems.add({ file: fileName, line: 1, message: 'The meta file describes no filters or indicators.' });
  }
  if (indicators.length === 0 && problems.problems.length === 0) {
    problems.add({ file: fileName, line: 1, message: 'The meta file describes no indicators.' });
  }
  problems.throwIfAny();
  return { filters, indicators };
}

/** An indicator's row of the meta file: its unit and decimal places checked (problems collected with the row's line). */
function indicatorOf(
  column: string,
  label: string,
  unitText: string,
  dpText: string,
  at: { file: string; line: number },
  problems: ProblemCollector,
): MetaIndicator {
  const unit = INDICATOR_UNITS[unitText];
  if (unit === undefined) {
    problems.add({
      ...at,
      column: 'indicator_unit',
      message: `Unknown indicator unit "${unitText}"; allowed: ${Object.keys(INDICATOR_UNITS).filter(Boolean).join(', ')} or empty.`,
    });
  }
  let decimalPlaces: number | null = null;
  if (dpText !== '') {
    if (!/^\d{1,2}$/.test(dpText)) {
      problems.add({ ...at, column: 'indicator_dp', message: `"${dpText}" is not a whole number of decimal places.` });
    } else {
      decimalPlaces = Number(dpText);
    }
  }
  return { column, label, unit: unit ?? '', decimalPlaces, line: at.line };
}
