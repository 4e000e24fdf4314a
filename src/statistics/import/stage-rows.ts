/**
 * Import phase 2: every data row, read once as it streams, becomes one line of a COPY into a temporary staging
 * table. Time periods, geographic levels, locations and filter options are numbered in the order the file first
 * shows them (file-local ids); the final ids exist only once the whole file is read (phase 3 maps them).
 * This is the importer's hot loop: rows mostly repeat the previous row's period, level and locations, so each
 * encoder compares with the previous row before looking anything up.
 */
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type pg from 'pg';
import { CsvSyntaxError } from './csv-reader.js';
import type { ProblemCollector } from './errors.js';
import type { DataFilePlan } from './data-file.js';
import { readProblem } from './data-file.js';
import { openStagingCopy } from './repository.js';
import { RowIndexCollector } from '../query/engine/row-index-builder.js';
import { geographicLevelByCsvLabel, type GeographicLevelInfo, type LocationCodeField } from '../standard/geographic-levels.js';
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
  /** Header indexes of the level's name and code columns, and the previous row's cells, local id and COPY cell. */
  columns: number[];
  previousCells: string[];
  previousId: number;
  previousCell: string;
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

const COPY_FLUSH_BYTES = 1 << 18;
const NEEDS_ESCAPE = /[\\\t\n\r]/;

function escapeCopy(value: string): string {
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** The staging table's columns: row number, local ids, then the indicator values as text. */
export function stagingColumns(plan: DataFilePlan): string[] {
  return [
    'n integer',
    'tp integer',
    'lvl integer',
    ...plan.locationLevels.map((l) => `l_${l.info.code.toLowerCase()} integer`),
    ...plan.filters.map((_, i) => `f${i + 1} integer`),
    ...plan.indicators.map((_, i) => `i${i + 1} text`),
  ];
}

/** A collector of the staged rows for the query engine's row index, its columns named as in the row table. */
export function rowIndexCollectorFor(plan: Pick<DataFilePlan, 'locationLevels' | 'filters' | 'indicators'>): RowIndexCollector {
  return new RowIndexCollector(
    [...plan.locationLevels.map((l) => `l_${l.info.code.toLowerCase()}`), ...plan.filters.map((_, i) => `f${i + 1}`)],
    plan.indicators.map((_, i) => `i${i + 1}`),
  );
}

/** Turns data rows into COPY text lines with file-local ids; refusals go to `problems` with their line. */
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
  /** COPY cells by local id (`\t<id>`), made once each. */
  private readonly idCells: string[] = ['\t0'];
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

  constructor(private readonly plan: DataFilePlan, private readonly problems: ProblemCollector) {
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

  /** The row's COPY line (without the row number and newline), or undefined when it has a problem. */
  encode(record: string[], line: number): string | undefined {
    const { header, dataFile } = this.plan;
    if (record.length !== header.length) {
      this.problems.add({
        file: dataFile,
        line,
        // The first column without a cell, when cells are missing.
        ...(record.length < header.length ? { column: header[record.length] } : {}),
        message: `The row has ${record.length} cells but the header has ${header.length}.`,
      });
      return undefined;
    }
    const tp = this.timePeriod(record, line);
    if (tp === undefined) return undefined;
    const lvl = this.level(record, line);
    if (lvl === undefined) return undefined;
    this.lastTp = tp;
    this.lastLvl = lvl;
    let cells = `\t${tp}\t${lvl}`;
    const { locationLevels } = this.plan;
    for (let l = 0; l < locationLevels.length; l++) cells += this.locationCell(l, locationLevels[l]!, record);
    for (let f = 0; f < this.filterIndexes.length; f++) cells += this.filterCell(f, locationLevels.length + f, record);
    const indicators = this.indicatorCells(record, line);
    return indicators === undefined ? undefined : cells + indicators;
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
        this.problems.add({ file, line, column: 'time_identifier', message: `Unknown time identifier "${rawIdentifier}".` });
        return undefined;
      }
      if (!period) {
        this.problems.add({ file, line, column: 'time_period', message: `"${rawPeriod}" is not a time period: use YYYY or YYYYYY (e.g. 202021 for 2020/21).` });
        return undefined;
      }
      if (identifier.yearFormat === 'Default' && period.includes('/')) {
        this.problems.add({ file, line, column: 'time_period', message: `"${rawPeriod}" is a two-year period, but "${identifier.label}" needs a single year.` });
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
        this.problems.add({ file: this.plan.dataFile, line, column: 'geographic_level', message: `Unknown geographic level "${rawLevel}".` });
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

  /** The level's location cell (facet `slot`): 0 when the row has no complete location at that level. */
  private locationCell(slot: number, level: LocationLevelInput, record: string[]): string {
    // Consecutive rows usually share their locations: compare the cells with the previous row's first.
    const columns = level.columns;
    const previous = level.previousCells;
    let same = previous.length > 0;
    for (let c = 0; same && c < columns.length; c++) same = record[columns[c]!] === previous[c];
    if (same) {
      this.lastFacetIds[slot] = level.previousId;
      return level.previousCell;
    }
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
    const cell = `\t${id}`;
    level.previousCells = columns.map((c) => record[c]!);
    level.previousId = id;
    level.previousCell = cell;
    this.lastFacetIds[slot] = id;
    return cell;
  }

  /** Filter f's cell (facet `slot`): 0 for a blank cell. */
  private filterCell(f: number, slot: number, record: string[]): string {
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
    this.lastFacetIds[slot] = id;
    return this.idCells[id] ?? (this.idCells[id] = `\t${id}`);
  }

  /** The indicator values, COPY-escaped; an empty cell is a problem (the standard uses a symbol). */
  private indicatorCells(record: string[], line: number): string | undefined {
    let cells = '';
    let blank = -1;
    for (let i = 0; i < this.indicatorIndexes.length; i++) {
      const value = record[this.indicatorIndexes[i]!]!;
      if (value === '') blank = i;
      this.lastIndicatorTexts[i] = value;
      cells += `\t${NEEDS_ESCAPE.test(value) ? escapeCopy(value) : value}`;
    }
    if (blank >= 0) {
      this.problems.add({
        file: this.plan.dataFile,
        line,
        column: this.plan.indicators[blank]!.column,
        message: 'The indicator cell is empty; the standard uses a symbol (such as x, z or c) for a missing value.',
      });
      return undefined;
    }
    return cells;
  }
}

/**
 * Streams the data rows into the temporary table `import_rows` (created here, dropped at commit), and each staged row
 * into `collector` (the row index, made from them once the final ids are known). Every problem is collected (up to the
 * problem collector's limit) and thrown at the end; after the first one nothing more is sent.
 */
export async function stageRows(
  client: pg.PoolClient,
  plan: DataFilePlan,
  problems: ProblemCollector,
  collector: RowIndexCollector,
  onProgress?: (progress: StageProgress) => void,
): Promise<StagedRows> {
  const copy = await openStagingCopy(client, stagingColumns(plan));
  let copyError: Error | undefined;
  copy.on('error', (error: Error) => {
    copyError = error;
  });
  const encoder = new RowEncoder(plan, problems);
  let rows = 0;
  let buffer = '';
  let lastProgress = Date.now();
  const { firstBatch, batches, text, totalBytes, dataFile } = plan;
  const rowsOf = async function* () {
    if (firstBatch) yield { records: firstBatch.records.slice(1), lines: firstBatch.lines.slice(1) };
    yield* batches;
  };
  try {
    for await (const { records, lines } of rowsOf()) {
      for (let r = 0; r < records.length; r++) {
        const cells = encoder.encode(records[r]!, lines[r]!);
        // After any problem the buffer is never sent.
        if (cells === undefined || problems.problems.length > 0) continue;
        rows++;
        collector.add(encoder.lastTp, encoder.lastLvl, encoder.lastFacetIds, encoder.lastIndicatorTexts);
        buffer += `${rows}${cells}\n`;
      }
      if (problems.full) break;
      if (copyError) throw copyError;
      if (buffer.length >= COPY_FLUSH_BYTES && problems.problems.length === 0) {
        if (!copy.write(buffer)) await once(copy, 'drain');
        buffer = '';
      }
      if (onProgress && Date.now() - lastProgress >= 250) {
        lastProgress = Date.now();
        onProgress({ rows, fraction: Math.min(1, text.fileBytesRead() / totalBytes) });
      }
    }
  } catch (error) {
    if (error instanceof CsvSyntaxError) {
      problems.add({ file: dataFile, line: error.line, message: error.message });
    } else {
      copy.destroy();
      throw readProblem(error, dataFile);
    }
  }
  if (problems.problems.length === 0 && rows === 0) problems.add({ file: dataFile, line: 2, message: 'The data file has no data rows.' });
  if (problems.problems.length > 0) {
    // Abort the COPY; the caller's rollback discards everything.
    copy.destroy();
    problems.throwIfAny();
  }
  copy.end(buffer);
  await finished(copy);
  if (copyError) throw copyError;
  return { rows, timePeriods: encoder.timePeriods, levels: encoder.levels, filterOptionLabels: encoder.filterOptionLabels };
}
