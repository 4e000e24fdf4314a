/**
 * Import phase 2: every data row, read once as it streams, is checked and collected in compact columns (a
 * RowIndexCollector): time periods, geographic levels, locations and filter options numbered in the order the file
 * first shows them (file-local ids), the indicator cells as numbers or texts; the final ids exist only once the whole
 * file is read (phase 3 maps them), and the row table and the row index are both made from these columns.
 * This is the importer's hot loop: rows mostly repeat the previous row's period, level and locations, so each
 * encoder compares with the previous row before looking anything up.
 */
import { CsvSyntaxError } from './csv-reader.js';
import type { ProblemCollector } from './errors.js';
import type { DataFilePlan } from './data-file.js';
import { readProblem } from './data-file.js';
import { formatLimit, IMPORT_LIMITS } from './limits.js';
import { RowIndexCollector } from './row-collector.js';
import {
  geographicLevelByCsvLabel,
  locationColumn,
  type GeographicLevelInfo,
  type LocationCodeField,
} from '../standard/geographic-levels.js';
import { apiPeriodFromCsv, timeIdentifierByCsvLabel } from '../standard/time-periods.js';

/** One geographic level's columns in the file and the locations seen so far. */
export interface LocationLevelInput {
  info: GeographicLevelInfo;
  /** Header index of each present code column and the field it fills. */
  codes: Array<{ index: number; field: LocationCodeField }>;
  nameIndex: number;
  /** Local id (1-based) by identity key. */
  ids: Map<string, number>;
  options: Array<{ label: string; fields: Partial<Record<LocationCodeField, string>> }>;
  /** Header indexes of the level's name and code columns, and the previous row's cells and local id. */
  columns: number[];
  previousCells: string[];
  previousId: number;
}

/** What the staged rows hold, in file-local ids. */
export interface StagedRows {
  rows: number;
  /** Time periods by local id - 1, in order of first appearance. */
  timePeriods: Array<{ period: string; code: string }>;
  /** Geographic level codes by local id - 1. */
  levels: string[];
  /** Per filter, option labels by local id - 1. */
  filterOptionLabels: string[][];
}

export interface StageProgress {
  rows: number;
  /** Share of the data file read so far (0..1). */
  fraction: number;
}

type RowTablePlan = Pick<DataFilePlan, 'locationLevels' | 'filters' | 'indicators'>;

/** The row table's location columns (one per level in the file, in its order) and filter columns, by name. */
export function facetColumnsOf(plan: RowTablePlan): string[] {
  return [...plan.locationLevels.map((l) => locationColumn(l.info.code)), ...plan.filters.map((_, i) => `f${i + 1}`)];
}

/** The row table's indicator columns, by name. */
export function indicatorColumnsOf(plan: RowTablePlan): string[] {
  return plan.indicators.map((_, i) => `i${i + 1}`);
}

/** A collector of the staged rows, its columns named as in the row table. */
export function rowIndexCollectorFor(plan: RowTablePlan): RowIndexCollector {
  return new RowIndexCollector(facetColumnsOf(plan), indicatorColumnsOf(plan));
}

/** Turns data rows into file-local ids and indicator texts (`last…`); refusals go to `problems` with their line. */
class RowEncoder {
  readonly timePeriods: Array<{ period: string; code: string }> = [];
  readonly levels: string[] = [];
  readonly filterOptionLabels: string[][];
  private readonly tpIndex: number;
  private readonly tiIndex: number;
  private readonly levelIndex: number;
  private readonly filterIndexes: number[];
  private readonly indicatorIndexes: number[];
  private readonly timePeriodByRaw = new Map<string, number>();
  private readonly timePeriodByKey = new Map<string, number>();
  private readonly levelByRaw = new Map<string, number>();
  private readonly filterOptionIds: Array<Map<string, number>>;
  /** Per filter, the previous row's cell and its local id (outer filters repeat from row to row). */
  private readonly previousFilterLabels: string[];
  private readonly previousFilterIds: number[];
  private previousPeriod: string | undefined;
  private previousIdentifier: string | undefined;
  private previousTp: number | undefined;
  private previousLevel: string | undefined;
  private previousLvl: number | undefined;
  /** The last encoded row's local ids and indicator texts, for the row index (`RowIndexCollector.add`). */
  lastTp = 0;
  lastLvl = 0;
  readonly lastFacetIds: Int32Array;
  readonly lastIndicatorTexts: string[];

  constructor(
    private readonly plan: DataFilePlan,
    private readonly problems: ProblemCollector,
  ) {
    const { columnIndex, filters, indicators } = plan;
    this.tpIndex = columnIndex.get('time_period')!;
    this.tiIndex = columnIndex.get('time_identifier')!;
    this.levelIndex = columnIndex.get('geographic_level')!;
    this.filterIndexes = filters.map((f) => columnIndex.get(f.column)!);
    this.indicatorIndexes = indicators.map((i) => columnIndex.get(i.column)!);
    this.filterOptionIds = filters.map(() => new Map<string, number>());
    this.filterOptionLabels = filters.map(() => []);
    this.previousFilterLabels = filters.map(() => '');
    this.previousFilterIds = filters.map(() => 0);
    this.lastFacetIds = new Int32Array(plan.locationLevels.length + filters.length);
    this.lastIndicatorTexts = indicators.map(() => '');
  }

  /** Whether the row is good: then its local ids and indicator texts are in `last…`; else a problem was added. */
  encode(record: string[], line: number): boolean {
    const { header, dataFile } = this.plan;
    if (record.length !== header.length) {
      this.problems.add({
        file: dataFile,
        line,
        // The first column without a cell, when cells are missing.
        ...(record.length < header.length ? { column: header[record.length] } : {}),
        message: `The row has ${record.length} cells but the header has ${header.length}.`,
      });
      return false;
    }
    const tp = this.timePeriod(record, line);
    if (tp === undefined) return false;
    const lvl = this.level(record, line);
    if (lvl === undefined) return false;
    this.lastTp = tp;
    this.lastLvl = lvl;
    const { locationLevels } = this.plan;
    for (let l = 0; l < locationLevels.length; l++) this.lastFacetIds[l] = this.locationId(locationLevels[l]!, record);
    for (let f = 0; f < this.filterIndexes.length; f++) {
      const id = this.filterOptionId(f, record);
      if (id > IMPORT_LIMITS.filterOptions) {
        const filter = this.plan.filters[f]!;
        this.problems.add({
          file: dataFile,
          line,
          column: filter.column,
          message: `The filter "${filter.column}" has more than ${formatLimit(IMPORT_LIMITS.filterOptions)} options, the limit.`,
        });
        return false;
      }
      this.lastFacetIds[locationLevels.length + f] = id;
    }
    return this.indicatorTexts(record, line);
  }

  private timePeriod(record: string[], line: number): number | undefined {
    const rawPeriod = record[this.tpIndex]!;
    const rawIdentifier = record[this.tiIndex]!;
    let tp: number | undefined;
    // Rows come grouped: most share the previous row's time period and level.
    if (rawPeriod === this.previousPeriod && rawIdentifier === this.previousIdentifier) tp = this.previousTp;
    const rawKey = tp === undefined ? `${rawPeriod}|${rawIdentifier}` : '';
    if (tp === undefined) tp = this.timePeriodByRaw.get(rawKey);
    if (tp === undefined) {
      const file = this.plan.dataFile;
      const identifier = timeIdentifierByCsvLabel(rawIdentifier);
      const period = apiPeriodFromCsv(rawPeriod.trim());
      if (!identifier) {
        this.problems.add({
          file,
          line,
          column: 'time_identifier',
          message: `Unknown time identifier "${rawIdentifier}".`,
        });
        return undefined;
      }
      if (!period) {
        this.problems.add({
          file,
          line,
          column: 'time_period',
          message: `"${rawPeriod}" is not a time period: use YYYY or YYYYYY (e.g. 202021 for 2020/21).`,
        });
        return undefined;
      }
      if (identifier.yearFormat === 'Default' && period.includes('/')) {
        this.problems.add({
          file,
          line,
          column: 'time_period',
          message: `"${rawPeriod}" is a two-year period, but "${identifier.label}" needs a single year.`,
        });
        return undefined;
      }
      const key = `${period}|${identifier.code}`;
      tp = this.timePeriodByKey.get(key);
      if (tp === undefined) {
        this.timePeriods.push({ period, code: identifier.code });
        tp = this.timePeriods.length;
        this.timePeriodByKey.set(key, tp);
      }
      this.timePeriodByRaw.set(rawKey, tp);
    }
    this.previousPeriod = rawPeriod;
    this.previousIdentifier = rawIdentifier;
    this.previousTp = tp;
    return tp;
  }

  private level(record: string[], line: number): number | undefined {
    const rawLevel = record[this.levelIndex]!;
    let lvl = rawLevel === this.previousLevel ? this.previousLvl : this.levelByRaw.get(rawLevel);
    if (lvl === undefined) {
      const level = geographicLevelByCsvLabel(rawLevel);
      if (!level) {
        this.problems.add({
          file: this.plan.dataFile,
          line,
          column: 'geographic_level',
          message: `Unknown geographic level "${rawLevel}".`,
        });
        return undefined;
      }
      let position = this.levels.indexOf(level.code);
      if (position === -1) position = this.levels.push(level.code) - 1;
      lvl = position + 1;
      this.levelByRaw.set(rawLevel, lvl);
    }
    this.previousLevel = rawLevel;
    this.previousLvl = lvl;
    return lvl;
  }

  /** The row's local location id at a level: 0 when it has no complete location there. */
  private locationId(level: LocationLevelInput, record: string[]): number {
    // Consecutive rows usually share their locations: compare the cells with the previous row's first.
    const columns = level.columns;
    const previous = level.previousCells;
    let same = previous.length > 0;
    for (let c = 0; same && c < columns.length; c++) same = record[columns[c]!] === previous[c];
    if (same) return level.previousId;
    const name = level.nameIndex >= 0 ? record[level.nameIndex]! : '';
    let key = name;
    let complete = level.nameIndex < 0 || name !== '';
    for (const c of level.codes) {
      const value = record[c.index]!;
      if (value === '') complete = false;
      key += `\u0000${value}`;
    }
    let id = 0;
    if (complete && columns.length > 0) {
      id = level.ids.get(key) ?? 0;
      if (id === 0) {
        const fields: Partial<Record<LocationCodeField, string>> = {};
        for (const c of level.codes) fields[c.field] = record[c.index]!;
        level.options.push({ label: name || (record[level.codes[0]!.index] ?? ''), fields });
        id = level.options.length;
        level.ids.set(key, id);
      }
    }
    level.previousCells = columns.map((c) => record[c]!);
    level.previousId = id;
    return id;
  }

  /** The row's local option id of filter f: 0 for a blank cell. */
  private filterOptionId(f: number, record: string[]): number {
    const label = record[this.filterIndexes[f]!]!;
    let id = 0;
    if (label === this.previousFilterLabels[f]) id = this.previousFilterIds[f]!;
    else if (label !== '') {
      const ids = this.filterOptionIds[f]!;
      id = ids.get(label) ?? 0;
      if (id === 0) {
        id = this.filterOptionLabels[f]!.push(label);
        ids.set(label, id);
      }
    }
    this.previousFilterLabels[f] = label;
    this.previousFilterIds[f] = id;
    return id;
  }

  /** The indicator texts into `lastIndicatorTexts`; an empty cell is a problem (the standard uses a symbol). */
  private indicatorTexts(record: string[], line: number): boolean {
    let blank = -1;
    for (let i = 0; i < this.indicatorIndexes.length; i++) {
      const value = record[this.indicatorIndexes[i]!]!;
      if (value === '') blank = i;
      this.lastIndicatorTexts[i] = value;
    }
    if (blank >= 0) {
      this.problems.add({
        file: this.plan.dataFile,
        line,
        column: this.plan.indicators[blank]!.column,
        message: 'The indicator cell is empty; the standard uses a symbol (such as x, z or c) for a missing value.',
      });
      return false;
    }
    return true;
  }
}

/**
 * Reads the data rows into `collector`. Every problem is collected (up to the problem collector's limit) and thrown at
 * the end; after the first one no row is collected.
 */
export async function stageRows(
  plan: DataFilePlan,
  problems: ProblemCollector,
  collector: RowIndexCollector,
  onProgress?: (progress: StageProgress) => void,
): Promise<StagedRows> {
  const encoder = new RowEncoder(plan, problems);
  let lastProgress = Date.now();
  const { firstBatch, batches, text, totalBytes, dataFile } = plan;
  const rowsOf = async function* () {
    if (firstBatch) yield { records: firstBatch.records.slice(1), lines: firstBatch.lines.slice(1) };
    yield* batches;
  };
  // The rows the import may hold: their indicator cells are the bulk of its memory.
  const maxRows = Math.floor(IMPORT_LIMITS.indicatorCells / Math.max(1, plan.indicators.length));
  try {
    for await (const { records, lines } of rowsOf()) {
      if (collector.rows + records.length > maxRows) {
        problems.add({
          file: dataFile,
          line: lines[Math.max(0, maxRows - collector.rows)] ?? lines[0],
          message: `The data file has more than ${formatLimit(maxRows)} rows; with ${plan.indicators.length} indicators that passes the limit of ${formatLimit(IMPORT_LIMITS.indicatorCells)} indicator cells.`,
        });
        break;
      }
      for (let r = 0; r < records.length; r++) {
        const good = encoder.encode(records[r]!, lines[r]!);
        if (good && problems.problems.length === 0) {
          collector.add(encoder.lastTp, encoder.lastLvl, encoder.lastFacetIds, encoder.lastIndicatorTexts);
        }
      }
      if (problems.full) break;
      if (onProgress && Date.now() - lastProgress >= 250) {
        lastProgress = Date.now();
        onProgress({ rows: collector.rows, fraction: Math.min(1, text.fileBytesRead() / totalBytes) });
      }
    }
  } catch (error) {
    if (!(error instanceof CsvSyntaxError)) throw readProblem(error, dataFile);
    problems.add({ file: dataFile, line: error.line, message: error.message });
  }
  if (problems.problems.length === 0 && collector.rows === 0)
    problems.add({ file: dataFile, line: 2, message: 'The data file has no data rows.' });
  problems.throwIfAny();
  return {
    rows: collector.rows,
    timePeriods: encoder.timePeriods,
    levels: encoder.levels,
    filterOptionLabels: encoder.filterOptionLabels,
  };
}
