import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Database } from '../../db/schema.js';
import { ValidationError, type FieldError } from '../../errors.js';
import { prepareVersionRowsForQuery } from '../query/prepare.js';
import type { VersionStatus } from '../tables.js';
import { CsvSyntaxError, openCsvText, readCsvBatches, type CsvBatch } from './csv-reader.js';
import { DataSetNotFoundError, DuplicateVersionError, ImportValidationError, ProblemCollector } from './errors.js';
import { readMetaFile, type MetaFilter, type MetaIndicator } from './meta-file.js';
import { allocatePublicIds } from './public-ids.js';
import {
  GEOGRAPHIC_LEVELS,
  MANDATORY_DATA_COLUMNS,
  apiPeriodFromCsv,
  compareOrdinal,
  compareTimePeriods,
  geographicLevelByCsvLabel,
  timeIdentifierByCsvLabel,
  timePeriodLabel,
  type GeographicLevelInfo,
  type LocationCodeField,
} from './standard.js';
import { compareVersionNumbers, formatVersionNumber, parseVersionNumber, type VersionNumber } from './version-number.js';
import { latestLiveVersionBelow, loadVersionMetaSnapshot, recordVersionChanges } from './version-meta.js';

/**
 * How row ids (the final sort tie-breaker) are assigned: `file` numbers rows in file order; `reference-fixture`
 * reproduces the ids the reference gave the AbsenceSchool fixture: rows without a school first,
 * from the most detailed level (LA, then REG, then NAT), then the rows that carry a school; file order within.
 */
export type RowOrder = 'file' | 'reference-fixture';

export interface ImportProgress {
  rows: number;
  seconds: number;
  /** Share of the data file read so far (0..1), for a progress bar. */
  fraction: number;
  done: boolean;
}

export interface ImportOptions {
  dataSetId: string;
  /** `major.minor[.patch]`. */
  version: string;
  /** The data CSV (`.csv` or `.csv.gz`). */
  dataPath: string;
  /** The meta CSV. */
  metaPath: string;
  /** Import as a Draft version (not public; publish it later with stats-admin). Default: Published now. */
  draft?: boolean;
  notes?: string;
  /** Publication time of a published version (default: now). */
  publishedAt?: Date | string;
  releaseTitle?: string;
  releaseSlug?: string;
  rowOrder?: RowOrder;
  onProgress?: (progress: ImportProgress) => void;
}

export interface ImportResult {
  versionId: number;
  dataSetId: string;
  version: string;
  status: VersionStatus;
  rows: number;
  rowsTable: string;
  seconds: number;
  majorChanges: number;
  minorChanges: number;
  /** Seconds per phase: reading and COPYing rows, metadata, the rewrite into the row table, indexes, file, changes, commit. */
  timings: Record<'read' | 'metadata' | 'rows' | 'indexes' | 'file' | 'changes' | 'commit', number>;
}

/** What the importer needs of a database: its pool, since COPY needs a raw client. */
export interface ImportTarget {
  pool: pg.Pool;
}

/** A Kysely bound to one checked-out client, so Kysely queries, COPY and the transaction share a session. */
function kyselyOnClient(client: pg.PoolClient): Kysely<Database> {
  const bound = { query: client.query.bind(client), release: () => {} };
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool: { connect: async () => bound, end: async () => {} } as never }),
  });
}

interface LocationLevelInput {
  info: GeographicLevelInfo;
  /** Header index of each present code column and the field it fills. */
  codes: Array<{ index: number; field: LocationCodeField }>;
  nameIndex: number;
  /** Local id (1-based) by identity key. */
  ids: Map<string, number>;
  options: Array<{ label: string; fields: Partial<Record<LocationCodeField, string>> }>;
  /** Header indexes of the level's name and code columns, and the previous row's cells and COPY cell. */
  columns: number[];
  previousCells: string[];
  previousId: string;
}

const COPY_FLUSH_BYTES = 1 << 18;

function escapeCopy(value: string): string {
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}
const NEEDS_ESCAPE = /[\\\t\n\r]/;

/**
 * Imports one data set version from a data CSV and a meta CSV, atomically: the file is streamed (never held whole),
 * rows are COPYed with file-local ids into a temporary table and rewritten once into the version's row table with
 * the final ids; metadata, public ids, the gzip of the data file and the changes against the latest live version
 * are written in the same transaction. Any problem (or a killed process) leaves nothing behind.
 */
export async function importDataSetVersion(target: ImportTarget, options: ImportOptions): Promise<ImportResult> {
  const started = process.hrtime.bigint();
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
  const versionNumber = parseVersionNumber(options.version);
  if (!versionNumber) {
    throw new ValidationError([{ path: 'version', message: `"${options.version}" is not a version number such as 1.0 or 2.1.3.` }]);
  }
  const version = formatVersionNumber(versionNumber);
  const dataFile = path.basename(options.dataPath);
  const metaFile = path.basename(options.metaPath);
  const problems = new ProblemCollector();

  const missingFiles: FieldError[] = [];
  let totalBytes = 1;
  for (const [flag, file] of [['data', options.dataPath], ['meta', options.metaPath]] as const) {
    try {
      const info = await stat(file);
      if (!info.isFile()) missingFiles.push({ path: flag, message: `${file} is not a file.` });
      if (flag === 'data') totalBytes = info.size || 1;
    } catch {
      missingFiles.push({ path: flag, message: `${file} does not exist.` });
    }
  }
  if (missingFiles.length > 0) throw new ValidationError(missingFiles, 'The data set files were not found; nothing was imported.');

  // The header first: the meta file is checked against it before any row is read.
  const text = openCsvText(options.dataPath);
  const batches = readCsvBatches(text);
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
  const columnIndex = new Map<string, number>();
  header.forEach((name, i) => {
    if (columnIndex.has(name)) problems.add({ file: dataFile, line: 1, column: name, message: `The column "${name}" appears twice in the header.` });
    columnIndex.set(name, i);
  });
  for (const column of MANDATORY_DATA_COLUMNS) {
    if (!columnIndex.has(column)) problems.add({ file: dataFile, line: 1, column, message: `The data file has no "${column}" column.` });
  }
  problems.throwIfAny();
  const meta = await readMetaFile(options.metaPath, metaFile, new Set(header), dataFile);

  const filters = [...meta.filters].sort((a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.column, b.column));
  const indicators = [...meta.indicators].sort((a, b) => compareOrdinal(a.label, b.label) || compareOrdinal(a.column, b.column));
  const locationLevels: LocationLevelInput[] = GEOGRAPHIC_LEVELS.filter((level) =>
    [level.nameColumn, ...level.codeColumns.map((c) => c.column)].some((c) => columnIndex.has(c)),
  ).map((info) => ({
    info,
    codes: info.codeColumns.filter((c) => columnIndex.has(c.column)).map((c) => ({ index: columnIndex.get(c.column)!, field: c.field })),
    nameIndex: columnIndex.get(info.nameColumn) ?? -1,
    ids: new Map(),
    options: [],
    columns: [info.nameColumn, ...info.codeColumns.map((c) => c.column)].filter((c) => columnIndex.has(c)).map((c) => columnIndex.get(c)!),
    previousCells: [],
    previousId: '',
  }));
  if (options.rowOrder === 'reference-fixture') {
    const codes = new Set(locationLevels.map((l) => l.info.code));
    if (!['LA', 'NAT', 'REG', 'SCH'].every((c) => codes.has(c))) {
      throw new ValidationError([{ path: 'rowOrder', message: 'The reference-fixture row order needs NAT, REG, LA and SCH location columns.' }]);
    }
  }

  const client = await target.pool.connect();
  const db = kyselyOnClient(client);
  let committed = false;
  try {
    await client.query('BEGIN');
    // Large files take longer than the pool's statement timeout; the import is one long transaction by design.
    await client.query('SET LOCAL statement_timeout = 0');
    await client.query('SET LOCAL idle_in_transaction_session_timeout = 0');
    // Index builds after the load sort whole columns: give them room to do it in memory.
    await client.query(`SET LOCAL maintenance_work_mem = '128MB'`);
    // The rewrite sorts all rows into the default order: in memory rather than in temporary files.
    await client.query(`SET LOCAL work_mem = '64MB'`);
    // Imports run one at a time: locations and public-id order are global.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('statistics-import'))`);

    const dataSet = await db.selectFrom('data_sets').select(['id', 'status']).where('id', '=', options.dataSetId).forUpdate().executeTakeFirst();
    if (!dataSet) throw new DataSetNotFoundError(options.dataSetId);
    const existing = await db
      .selectFrom('data_set_versions')
      .select(['id', 'major', 'minor', 'patch', 'status'])
      .where('data_set_id', '=', options.dataSetId)
      .execute();
    if (existing.some((v) => compareVersionNumbers(v, versionNumber) === 0)) throw new DuplicateVersionError(options.dataSetId, version);
    // Changes and carried-over ids are against the latest live (non-draft) version below this number.
    const previous = latestLiveVersionBelow(existing, versionNumber);

    // Stage rows with file-local ids (dictionary positions); final ids are known only after the whole file.
    const stageColumns = [
      'n integer',
      'tp integer',
      'lvl integer',
      ...locationLevels.map((l) => `l_${l.info.code.toLowerCase()} integer`),
      ...filters.map((_, i) => `f${i + 1} integer`),
      ...indicators.map((_, i) => `i${i + 1} text`),
    ];
    await client.query(`CREATE TEMP TABLE import_rows (${stageColumns.join(', ')}) ON COMMIT DROP`);
    const copy = client.query(copyFrom('COPY import_rows FROM STDIN'));
    let copyError: Error | undefined;
    copy.on('error', (error: Error) => {
      copyError = error;
    });

    const tpIndex = columnIndex.get('time_period')!;
    const tiIndex = columnIndex.get('time_identifier')!;
    const levelIndex = columnIndex.get('geographic_level')!;
    const filterIndexes = filters.map((f) => columnIndex.get(f.column)!);
    const indicatorIndexes = indicators.map((i) => columnIndex.get(i.column)!);
    const timePeriodByRaw = new Map<string, number>();
    const timePeriodByKey = new Map<string, number>();
    const timePeriods: Array<{ period: string; code: string }> = [];
    const levelByRaw = new Map<string, number>();
    const levels: string[] = [];
    const filterOptionIds = filters.map(() => new Map<string, number>());
    const filterOptionLabels: string[][] = filters.map(() => []);
    const width = header.length;
    let rows = 0;
    let buffer = '';
    let previousPeriod: string | undefined;
    let previousIdentifier: string | undefined;
    let previousTp: number | undefined;
    let previousLevel: string | undefined;
    let previousLvl: number | undefined;
    let lastProgress = 0;

    const rowsOf = async function* () {
      if (firstBatch) yield { records: firstBatch.records.slice(1), lines: firstBatch.lines.slice(1) };
      yield* batches;
    };
    try {
      for await (const batch of rowsOf()) {
        const { records, lines } = batch;
        for (let r = 0; r < records.length; r++) {
          const record = records[r]!;
          const line = lines[r]!;
          if (record.length !== width) {
            problems.add({
              file: dataFile,
              line,
              // The first column without a cell, when cells are missing.
              ...(record.length < width ? { column: header[record.length] } : {}),
              message: `The row has ${record.length} cells but the header has ${width}.`,
            });
            continue;
          }
          const rawPeriod = record[tpIndex]!;
          const rawIdentifier = record[tiIndex]!;
          let tp: number | undefined;
          // Rows come grouped: most share the previous row's time period and level.
          if (rawPeriod === previousPeriod && rawIdentifier === previousIdentifier) tp = previousTp;
          const rawKey = tp === undefined ? `${rawPeriod}|${rawIdentifier}` : '';
          if (tp === undefined) tp = timePeriodByRaw.get(rawKey);
          if (tp === undefined) {
            const identifier = timeIdentifierByCsvLabel(rawIdentifier);
            const period = apiPeriodFromCsv(rawPeriod.trim());
            if (!identifier) {
              problems.add({ file: dataFile, line, column: 'time_identifier', message: `Unknown time identifier "${rawIdentifier}".` });
              continue;
            }
            if (!period) {
              problems.add({
                file: dataFile,
                line,
                column: 'time_period',
                message: `"${rawPeriod}" is not a time period: use YYYY or YYYYYY (e.g. 202021 for 2020/21).`,
              });
              continue;
            }
            if (identifier.yearFormat === 'Default' && period.includes('/')) {
              problems.add({
                file: dataFile,
                line,
                column: 'time_period',
                message: `"${rawPeriod}" is a two-year period, but "${identifier.label}" needs a single year.`,
              });
              continue;
            }
            const key = `${period}|${identifier.code}`;
            tp = timePeriodByKey.get(key);
            if (tp === undefined) {
              timePeriods.push({ period, code: identifier.code });
              tp = timePeriods.length;
              timePeriodByKey.set(key, tp);
            }
            timePeriodByRaw.set(rawKey, tp);
          }
          previousPeriod = rawPeriod;
          previousIdentifier = rawIdentifier;
          previousTp = tp;
          const rawLevel = record[levelIndex]!;
          let lvl = rawLevel === previousLevel ? previousLvl : levelByRaw.get(rawLevel);
          if (lvl === undefined) {
            const level = geographicLevelByCsvLabel(rawLevel);
            if (!level) {
              problems.add({ file: dataFile, line, column: 'geographic_level', message: `Unknown geographic level "${rawLevel}".` });
              continue;
            }
            let position = levels.indexOf(level.code);
            if (position === -1) position = levels.push(level.code) - 1;
            lvl = position + 1;
            levelByRaw.set(rawLevel, lvl);
          }
          previousLevel = rawLevel;
          previousLvl = lvl;
          // Appended straight to the COPY buffer; after any problem the buffer is never sent.
          buffer += `${rows + 1}\t${tp}\t${lvl}`;
          for (const level of locationLevels) {
            // Consecutive rows usually share their locations: compare the cells with the previous row's first.
            const columns = level.columns;
            const previous = level.previousCells;
            let same = previous.length > 0;
            for (let c = 0; same && c < columns.length; c++) same = record[columns[c]!] === previous[c];
            if (same) {
              buffer += level.previousId;
              continue;
            }
            const name = level.nameIndex >= 0 ? record[level.nameIndex]! : '';
            let key = name;
            let complete = level.nameIndex < 0 || name !== '';
            for (const c of level.codes) {
              const value = record[c.index]!;
              if (value === '') complete = false;
              key += `\u0000${value}`;
            }
            let cell = '\t0';
            if (complete && columns.length > 0) {
              let id = level.ids.get(key);
              if (id === undefined) {
                const fields: Partial<Record<LocationCodeField, string>> = {};
                for (const c of level.codes) fields[c.field] = record[c.index]!;
                level.options.push({ label: name || (record[level.codes[0]!.index] ?? ''), fields });
                id = level.options.length;
                level.ids.set(key, id);
              }
              cell = `\t${id}`;
            }
            level.previousCells = columns.map((c) => record[c]!);
            level.previousId = cell;
            buffer += cell;
          }
          for (let f = 0; f < filterIndexes.length; f++) {
            const label = record[filterIndexes[f]!]!;
            if (label === '') {
              buffer += '\t0';
              continue;
            }
            const ids = filterOptionIds[f]!;
            let id = ids.get(label);
            if (id === undefined) {
              id = filterOptionLabels[f]!.push(label);
              ids.set(label, id);
            }
            buffer += `\t${id}`;
          }
          let blank = -1;
          for (let i = 0; i < indicatorIndexes.length; i++) {
            const value = record[indicatorIndexes[i]!]!;
            if (value === '') blank = i;
            buffer += `\t${NEEDS_ESCAPE.test(value) ? escapeCopy(value) : value}`;
          }
          if (blank >= 0) {
            problems.add({
              file: dataFile,
              line,
              column: indicators[blank]!.column,
              message: 'The indicator cell is empty; the standard uses a symbol (such as x, z or c) for a missing value.',
            });
            continue;
          }
          if (problems.problems.length > 0) continue;
          rows++;
          buffer += '\n';
        }
        if (problems.full) break;
        if (copyError) throw copyError;
        if (buffer.length >= COPY_FLUSH_BYTES && problems.problems.length === 0) {
          if (!copy.write(buffer)) await once(copy, 'drain');
          buffer = '';
        }
        if (options.onProgress && seconds() - lastProgress >= 0.25) {
          lastProgress = seconds();
          options.onProgress({ rows, seconds: lastProgress, fraction: Math.min(1, text.fileBytesRead() / totalBytes), done: false });
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
      // Abort the COPY; the rollback below discards everything.
      copy.destroy();
      problems.throwIfAny();
    }
    copy.end(buffer);
    await finished(copy);
    if (copyError) throw copyError;
    options.onProgress?.({ rows, seconds: seconds(), fraction: 1, done: true });
    const timings: ImportResult['timings'] = { read: seconds(), metadata: 0, rows: 0, indexes: 0, file: 0, changes: 0, commit: 0 };
    let mark = seconds();
    const lap = (phase: keyof ImportResult['timings']) => {
      const now = seconds();
      timings[phase] += now - mark;
      mark = now;
    };

    // The version row.
    const status: VersionStatus = options.draft ? 'Draft' : 'Published';
    const chronological = timePeriods.map((t, i) => ({ ...t, local: i + 1 })).sort(compareTimePeriods);
    const latest = chronological[chronological.length - 1]!;
    const release = defaultRelease(latest);
    const inserted = await db
      .insertInto('data_set_versions')
      .values({
        data_set_id: options.dataSetId,
        major: versionNumber.major,
        minor: versionNumber.minor,
        patch: versionNumber.patch,
        status,
        published_at: status === 'Published' ? (options.publishedAt ?? new Date()) : null,
        withdrawn_at: null,
        notes: options.notes ?? '',
        release_title: options.releaseTitle ?? release.title,
        release_slug: options.releaseSlug ?? release.slug,
        total_results: rows,
        rows_table: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const versionId = inserted.id;
    const rowsTable = `v${versionId}`;

    const previousMeta = previous ? await loadVersionMetaSnapshot(db, previous.id) : undefined;

    // Time periods: ids in chronological order.
    const timePeriodMap = new Array<number>(timePeriods.length);
    const tpRows = await db
      .insertInto('version_time_periods')
      .values(chronological.map((t) => ({ version_id: versionId, period: t.period, code: t.code })))
      .returning(['id', 'period', 'code'])
      .execute();
    const tpIdByKey = new Map(tpRows.map((t) => [`${t.period}|${t.code}`, t.id]));
    for (const t of chronological) timePeriodMap[t.local - 1] = tpIdByKey.get(`${t.period}|${t.code}`)!;

    // Filters and options: label order; public ids carried over by column name and option label.
    const filterMaps = await insertFilters(db, versionId, filters, filterOptionLabels, previousMeta);
    await insertIndicators(db, versionId, indicators, previousMeta);

    await db
      .insertInto('version_geographic_levels')
      .values([...levels].sort().map((code) => ({ version_id: versionId, code })))
      .execute();

    const locationMaps = await resolveLocations(db, versionId, locationLevels);

    lap('metadata');
    // The version's row table, filled in one pass from the staging table with the final ids.
    const columns = [
      'id integer NOT NULL',
      'time_period_id integer NOT NULL',
      'geographic_level text NOT NULL',
      ...locationLevels.map((l) => `l_${l.info.code.toLowerCase()} integer NOT NULL`),
      ...filters.map((_, i) => `f${i + 1} integer NOT NULL`),
      ...indicators.map((_, i) => `i${i + 1} text NOT NULL`),
    ];
    await client.query(`CREATE TABLE stats_data.${rowsTable} (${columns.join(', ')})`);
    const params: unknown[] = [timePeriodMap, levels];
    const param = (value: unknown) => `$${params.push(value)}`;
    const select = [
      options.rowOrder === 'reference-fixture'
        ? `row_number() OVER (ORDER BY l_sch <> 0, CASE WHEN l_la <> 0 THEN 0 WHEN l_reg <> 0 THEN 1 ELSE 2 END, n)::integer`
        : 'n',
      '($1::integer[])[tp]',
      '($2::text[])[lvl]',
      ...locationLevels.map((l, i) => {
        const c = `l_${l.info.code.toLowerCase()}`;
        return `coalesce((${param(locationMaps[i])}::integer[])[${c}], 0)`;
      }),
      ...filters.map((_, i) => `coalesce((${param(filterMaps[i])}::integer[])[f${i + 1}], 0)`),
      ...indicators.map((_, i) => `i${i + 1}`),
    ];
    const targetColumns = columns.map((c) => c.split(' ')[0]);
    // Written in the default result order (time period newest first, then row id): pages of the default query
    // are then contiguous on disk.
    await client.query(
      `INSERT INTO stats_data.${rowsTable} (${targetColumns.join(', ')}) SELECT ${select.join(', ')} FROM import_rows ORDER BY 2 DESC, 1`,
      params,
    );
    lap('rows');
    await prepareVersionRowsForQuery(db, rowsTable);
    await db.updateTable('data_set_versions').set({ rows_table: rowsTable }).where('id', '=', versionId).execute();
    lap('indexes');

    // The original data file, gzip-compressed, for the CSV download.
    const gzip = await gzipOf(options.dataPath);
    await db.insertInto('data_set_version_files').values({ version_id: versionId, content_gzip: gzip, size_bytes: gzip.length }).execute();
    lap('file');

    // A draft's changes are computed again when it is published (against the then latest live version).
    const { major: majorChanges, minor: minorChanges } = await recordVersionChanges(db, versionId, previousMeta);
    if (status === 'Published' && dataSet.status === 'Draft') {
      await db.updateTable('data_sets').set({ status: 'Published' }).where('id', '=', options.dataSetId).execute();
    }
    lap('changes');
    await client.query('COMMIT');
    committed = true;
    lap('commit');
    return {
      versionId,
      dataSetId: options.dataSetId,
      version,
      status,
      rows,
      rowsTable,
      seconds: seconds(),
      majorChanges,
      minorChanges,
      timings,
    };
  } finally {
    if (!committed) await client.query('ROLLBACK').catch(() => {});
    await batches.return(undefined).catch(() => {});
    client.release();
  }
}

/** A CSV syntax error or an unreadable (e.g. corrupt gzip) file as an import problem; other errors as they are. */
function readProblem(error: unknown, file: string): unknown {
  if (error instanceof CsvSyntaxError) return new ImportValidationError([{ file, line: error.line, message: error.message }]);
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return new ImportValidationError([{ file, message: `The file cannot be decompressed (${(error as Error).message}); is it really gzip?` }]);
  }
  return error;
}

/** A release title and slug from the latest time period (`Academic year 2021/22`, `2021-22`). */
function defaultRelease(latest: { period: string; code: string }): { title: string; slug: string } {
  const label = timePeriodLabel(latest.period, latest.code);
  const kind: Record<string, string> = { AY: 'Academic year', CY: 'Calendar year', FY: 'Financial year', TY: 'Tax year', RY: 'Reporting year' };
  const title = kind[latest.code] ? `${kind[latest.code]} ${label}` : label;
  return { title, slug: label.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') };
}

async function gzipOf(dataPath: string): Promise<Buffer> {
  // A gzipped upload is stored as it came; a plain one is compressed while streaming.
  if (dataPath.endsWith('.gz')) return readFile(dataPath);
  const chunks: Buffer[] = [];
  const gzip = createReadStream(dataPath).pipe(createGzip());
  for await (const chunk of gzip) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

type Previous = Awaited<ReturnType<typeof loadVersionMetaSnapshot>> | undefined;

/** Inserts filters (label order) and their options (label order); returns, per filter, local option id → row id. */
async function insertFilters(
  db: Kysely<Database>,
  versionId: number,
  filters: MetaFilter[],
  optionLabels: string[][],
  previous: Previous,
): Promise<number[][]> {
  const previousByColumn = new Map(previous?.filters.map((f) => [f.column, f]) ?? []);
  const freshFilterIds = await allocatePublicIds(db, 'filter', filters.filter((f) => !previousByColumn.has(f.column)).length);
  const sortedOptions = optionLabels.map((labels) => labels.map((label, i) => ({ label, local: i + 1 })).sort((a, b) => compareOrdinal(a.label, b.label)));
  const freshOptionCount = filters.reduce((count, f, i) => {
    const carried = new Set(previousByColumn.get(f.column)?.options.map((o) => o.label) ?? []);
    return count + sortedOptions[i]!.filter((o) => !carried.has(o.label)).length;
  }, 0);
  const freshOptionIds = await allocatePublicIds(db, 'filterOption', freshOptionCount);
  const maps: number[][] = [];
  for (let i = 0; i < filters.length; i++) {
    const filter = filters[i]!;
    const before = previousByColumn.get(filter.column);
    const { id: filterRowId } = await db
      .insertInto('version_filters')
      .values({
        version_id: versionId,
        public_id: before?.id ?? freshFilterIds.shift()!,
        column_name: filter.column,
        label: filter.label,
        hint: filter.hint,
        ordinal: i + 1,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const carried = new Map(before?.options.map((o) => [o.label, o.id]) ?? []);
    const options = sortedOptions[i]!;
    const map = new Array<number>(options.length);
    maps.push(map);
    if (options.length === 0) continue;
    const defaultLabel = filter.defaultLabel && options.some((o) => o.label === filter.defaultLabel) ? filter.defaultLabel : 'Total';
    const rows = await db
      .insertInto('version_filter_options')
      .values(
        options.map((o) => ({
          filter_id: filterRowId,
          public_id: carried.get(o.label) ?? freshOptionIds.shift()!,
          label: o.label,
          is_default: o.label === defaultLabel,
        })),
      )
      .returning(['id', 'label'])
      .execute();
    const idByLabel = new Map(rows.map((r) => [r.label, r.id]));
    for (const o of options) map[o.local - 1] = idByLabel.get(o.label)!;
  }
  return maps;
}

async function insertIndicators(db: Kysely<Database>, versionId: number, indicators: MetaIndicator[], previous: Previous): Promise<void> {
  const previousByColumn = new Map(previous?.indicators.map((i) => [i.column, i.id]) ?? []);
  const fresh = await allocatePublicIds(db, 'indicator', indicators.filter((i) => !previousByColumn.has(i.column)).length);
  await db
    .insertInto('version_indicators')
    .values(
      indicators.map((indicator, i) => ({
        version_id: versionId,
        public_id: previousByColumn.get(indicator.column) ?? fresh.shift()!,
        column_name: indicator.column,
        label: indicator.label,
        unit: indicator.unit,
        decimal_places: indicator.decimalPlaces,
        ordinal: i + 1,
      })),
    )
    .execute();
}

const CODE_FIELDS: LocationCodeField[] = ['code', 'old_code', 'urn', 'la_estab', 'ukprn'];

/**
 * Finds or creates the global location rows of every option seen in the file (one id per level + label + codes
 * everywhere) and links them to the version. New locations get public ids in order of level code, then codes (the
 * reference's order: the fixture's LAs by code, schools by URN), and row ids in label order. Returns, per level,
 * local id → locations.id.
 */
async function resolveLocations(db: Kysely<Database>, versionId: number, levels: LocationLevelInput[]): Promise<number[][]> {
  const identity = (level: string, label: string, fields: Partial<Record<LocationCodeField, string>>) =>
    [level, label, ...CODE_FIELDS.map((f) => fields[f] ?? '')].join('\u0000');
  const wanted = levels.flatMap((l) => l.options.map((o) => ({ level: l.info.code, label: o.label, fields: o.fields })));
  const found = new Map<string, number>();
  for (let i = 0; i < wanted.length; i += 5000) {
    const chunk = wanted.slice(i, i + 5000);
    const { rows } = await sql<{ id: number; level: string; label: string } & Record<LocationCodeField, string | null>>`
      SELECT l.id, l.level, l.label, l.code, l.old_code, l.urn, l.la_estab, l.ukprn
      FROM unnest(${chunk.map((w) => w.level)}::text[], ${chunk.map((w) => w.label)}::text[],
                  ${chunk.map((w) => w.fields.code ?? '')}::text[], ${chunk.map((w) => w.fields.old_code ?? '')}::text[],
                  ${chunk.map((w) => w.fields.urn ?? '')}::text[], ${chunk.map((w) => w.fields.la_estab ?? '')}::text[],
                  ${chunk.map((w) => w.fields.ukprn ?? '')}::text[]) AS k(level, label, code, old_code, urn, la_estab, ukprn)
      JOIN locations l ON l.level = k.level AND l.label = k.label AND coalesce(l.code, '') = k.code
        AND coalesce(l.old_code, '') = k.old_code AND coalesce(l.urn, '') = k.urn
        AND coalesce(l.la_estab, '') = k.la_estab AND coalesce(l.ukprn, '') = k.ukprn`.execute(db);
    for (const row of rows) {
      const fields: Partial<Record<LocationCodeField, string>> = {};
      for (const f of CODE_FIELDS) if (row[f] !== null) fields[f] = row[f]!;
      found.set(identity(row.level, row.label, fields), row.id);
    }
  }
  const missing = wanted.filter((w) => !found.has(identity(w.level, w.label, w.fields)));
  if (missing.length > 0) {
    const byCodes = [...missing].sort(
      (a, b) =>
        compareOrdinal(a.level, b.level) ||
        CODE_FIELDS.reduce((c, f) => c || compareOrdinal(a.fields[f] ?? '', b.fields[f] ?? ''), 0) ||
        compareOrdinal(a.label, b.label),
    );
    const publicIds = await allocatePublicIds(db, 'location', byCodes.length);
    const publicIdOf = new Map(byCodes.map((w, i) => [identity(w.level, w.label, w.fields), publicIds[i]!]));
    const byLabel = [...missing].sort((a, b) => compareOrdinal(a.level, b.level) || compareOrdinal(a.label, b.label));
    for (let i = 0; i < byLabel.length; i += 2000) {
      const rows = await db
        .insertInto('locations')
        .values(
          byLabel.slice(i, i + 2000).map((w) => ({
            level: w.level,
            label: w.label,
            code: w.fields.code ?? null,
            old_code: w.fields.old_code ?? null,
            urn: w.fields.urn ?? null,
            la_estab: w.fields.la_estab ?? null,
            ukprn: w.fields.ukprn ?? null,
            public_id: publicIdOf.get(identity(w.level, w.label, w.fields))!,
          })),
        )
        .returning(['id', 'public_id'])
        .execute();
      const idByPublic = new Map(rows.map((r) => [r.public_id, r.id]));
      for (const [key, publicId] of publicIdOf) if (idByPublic.has(publicId)) found.set(key, idByPublic.get(publicId)!);
    }
  }
  const maps = levels.map((l) => l.options.map((o) => found.get(identity(l.info.code, o.label, o.fields))!));
  const allIds = [...new Set(maps.flat())];
  for (let i = 0; i < allIds.length; i += 5000) {
    await db
      .insertInto('version_locations')
      .values(allIds.slice(i, i + 5000).map((id) => ({ version_id: versionId, location_id: id })))
      .execute();
  }
  return maps;
}

export type { VersionNumber };
