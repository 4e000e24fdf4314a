/**
 * Import phase 1: the files exist, the data file's header names the mandatory columns once each, the meta file
 * agrees with the header, and from both the plan of what the rows will hold (filters and indicators in label
 * order, the location levels present). Nothing is written; no data row is read yet.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ValidationError, type FieldError } from '../../errors.js';
import { CsvSyntaxError, openCsvText, readCsvBatches, type CsvBatch, type CsvText } from './csv-reader.js';
import { ImportValidationError, ProblemCollector } from './errors.js';
import { formatLimit, IMPORT_LIMITS } from './limits.js';
import { readMetaFile, type MetaFilter, type MetaIndicator } from './meta-file.js';
import type { LocationLevelInput } from './stage-rows.js';
import { compareOrdinal } from '../standard/ordinal.js';
import { MANDATORY_DATA_COLUMNS } from '../standard/data-file-columns.js';
import { GEOGRAPHIC_LEVELS } from '../standard/geographic-levels.js';

/** The data file opened at its first row, and what its header and the meta file say the rows hold. */
export interface DataFilePlan {
  dataFile: string;
  /** The data file's size (at least 1), for progress. */
  totalBytes: number;
  text: CsvText;
  batches: AsyncGenerator<CsvBatch>;
  /** The first batch read (its first record is the header). */
  firstBatch: CsvBatch | undefined;
  header: string[];
  columnIndex: Map<string, number>;
  /** Filters and indicators in label order (then column name). */
  filters: MetaFilter[];
  indicators: MetaIndicator[];
  locationLevels: LocationLevelInput[];
}

/** A CSV syntax error or an unreadable (e.g. corrupt gzip) file as an import problem; other errors as they are. */
export function readProblem(error: unknown, file: string): unknown {
  if (error instanceof CsvSyntaxError)
    return new ImportValidationError([{ file, line: error.line, message: error.message }]);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return new ImportValidationError([
      { file, message: `The file cannot be decompressed (${(error as Error).message}); is it really gzip?` },
    ]);
  }
  return error;
}

/** Both files exist and are files (one 400 naming each that is not); returns the data file's size. */
async function dataFileSize(dataPath: string, metaPath: string): Promise<number> {
  const missingFiles: FieldError[] = [];
  let totalBytes = 1;
  for (const [flag, file] of [
    ['data', dataPath],
    ['meta', metaPath],
  ] as const) {
    try {
      const info = await stat(file);
      if (!info.isFile()) missingFiles.push({ path: flag, message: `${file} is not a file.` });
      if (flag === 'data') totalBytes = info.size || 1;
    } catch {
      missingFiles.push({ path: flag, message: `${file} does not exist.` });
    }
  }
  if (missingFiles.length > 0)
    throw new ValidationError(missingFiles, 'The data set files were not found; nothing was imported.');
  return totalBytes;
}

/**
 * Opens the data file, checks its header and the meta file against it, and plans the rows. The caller must close
 * `batches` (`batches.return()`) when done, whatever happens.
 */
export async function planDataFile(
  dataPath: string,
  metaPath: string,
  problems: ProblemCollector,
): Promise<DataFilePlan> {
  const dataFile = path.basename(dataPath);
  const totalBytes = await dataFileSize(dataPath, metaPath);
  // The header first: the meta file is checked against it before any row is read.
  const text = openCsvText(dataPath);
  const batches = readCsvBatches(text);
  try {
    return await planRows(dataFile, totalBytes, text, batches, metaPath, problems);
  } catch (error) {
    await batches.return(undefined).catch(() => {});
    throw error;
  }
}

async function planRows(
  dataFile: string,
  totalBytes: number,
  text: CsvText,
  batches: AsyncGenerator<CsvBatch>,
  metaPath: string,
  problems: ProblemCollector,
): Promise<DataFilePlan> {
  let firstBatch: CsvBatch | undefined;
  try {
    const first = await batches.next();
    firstBatch = first.done ? undefined : first.value;
  } catch (error) {
    throw readProblem(error, dataFile);
  }
  const header = firstBatch?.records[0]?.map((c) => c.trim());
  if (!header) {
    problems.add({ file: dataFile, line: 1, message: 'The data file is empty; it needs a header row.' });
    problems.throwIfAny();
    throw new Error('unreachable');
  }
  if (header.length > IMPORT_LIMITS.dataColumns) {
    problems.add({
      file: dataFile,
      line: 1,
      message: `The data file has ${formatLimit(header.length)} columns; the limit is ${formatLimit(IMPORT_LIMITS.dataColumns)}.`,
    });
    problems.throwIfAny();
  }
  const columnIndex = new Map<string, number>();
  header.forEach((name, i) => {
    if (columnIndex.has(name))
      problems.add({
        file: dataFile,
        line: 1,
        column: name,
        message: `The column "${name}" appears twice in the header.`,
      });
    columnIndex.set(name, i);
  });
  for (const column of MANDATORY_DATA_COLUMNS) {
    if (!columnIndex.has(column))
      problems.add({ file: dataFile, line: 1, column, message: `The data file has no "${column}" column.` });
  }
  problems.throwIfAny();
  const meta = await readMetaFile(metaPath, path.basename(metaPath), new Set(header), dataFile);

  const filters = [...meta.filters].sort(
    (a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.column, b.column),
  );
  const indicators = [...meta.indicators].sort(
    (a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.column, b.column),
  );
  const locationLevels: LocationLevelInput[] = GEOGRAPHIC_LEVELS.filter((level) =>
    [level.nameColumn, ...level.codeColumns.map((c) => c.column)].some((c) => columnIndex.has(c)),
  ).map((info) => ({
    info,
    codes: info.codeColumns
      .filter((c) => columnIndex.has(c.column))
      .map((c) => ({ index: columnIndex.get(c.column)!, field: c.field })),
    nameIndex: columnIndex.get(info.nameColumn) ?? -1,
    ids: new Map(),
    options: [],
    columns: [info.nameColumn, ...info.codeColumns.map((c) => c.column)]
      .filter((c) => columnIndex.has(c))
      .map((c) => columnIndex.get(c)!),
    previousCells: [],
    previousId: 0,
  }));
  return { dataFile, totalBytes, text, batches, firstBatch, header, columnIndex, filters, indicators, locationLevels };
}
