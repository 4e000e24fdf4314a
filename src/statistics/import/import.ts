/**
 * The statistics importer: one data set version from a data CSV and its meta CSV, in named phases —
 * 1. plan (data-file.ts): files, header and meta checked, nothing written;
 * 2. stage (stage-rows.ts): rows streamed once into compact columns with file-local ids;
 * 3. metadata (metadata.ts): version, time periods, filters, indicators, levels, locations; final id maps;
 * 4. row table (repository.ts): the collected rows with their final ids, in default order, by one binary COPY; then
 *    PostgreSQL indexes it while this process makes the query engine's row index from the same columns;
 * 5. file and changes: the gzip of the data file for the download, the changes against the previous live version.
 * All of it is one transaction: any problem (or a killed process) leaves nothing behind.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createGzip } from 'node:zlib';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import type { Database } from '../../db/schema.js';
import { ValidationError } from '../../errors.js';
import type { VersionStatus } from '../tables.js';
import { planDataFile } from './data-file.js';
import { DataSetNotFoundError, DuplicateVersionError, ProblemCollector } from './errors.js';
import { insertVersionMetadata, insertVersionRow } from './metadata.js';
import {
  beginImportTransaction,
  commitImportTransaction,
  copyRowTable,
  createRowTable,
  deferVersionFileCheck,
  findVersionNumbers,
  prepareVersionRowsForQuery,
  setVersionRowsKey,
  insertVersionFile,
  lockDataSet,
  publishDataSet,
  reportImportProgress,
  reserveVersionId,
  rollbackImportTransaction,
} from './repository.js';
import { facetColumnsOf, rowIndexCollectorFor, stageRows, type StagedRows } from './stage-rows.js';
import {
  compareVersionNumbers,
  formatVersionNumber,
  parseVersionNumber,
  type VersionNumber,
} from '../standard/version-numbers.js';
import {
  latestLiveVersionBelow,
  loadVersionMetaSnapshot,
  recordVersionChanges,
  type VersionMetaSnapshot,
} from './version-snapshot.js';
import { appendDataSetEvent, appendDataSetVersionEvent } from '../events/service.js';
import { loadQueryVersionMeta, rowIndexColumns } from '../query/engine/index.js';
import { deflateRowIndex, storeDeflatedRowIndex } from '../storage/engine-form.js';
import { PARQUET_COPY_FORMAT, writeParquetCopy } from '../storage/parquet-copy.js';
import { storeParquetCopy } from '../storage/parquet-repository.js';
import type { RowIndexCollector } from './row-collector.js';
import type { IdMaps } from './metadata.js';
import type { DataFilePlan } from './data-file.js';

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
  /**
   * Also write the rows as a table, `stats_data.v<id>`, with the SQL engine's indexes: the SQL translation's rows
   * (the reference the tests compare every engine with). By default the stored row index alone holds the rows.
   */
  rowTable?: boolean;
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
  /**
   * Seconds per phase: reading the rows, metadata, the COPY of the row table, its indexes, what making and storing
   * the row index adds after them (it is made while PostgreSQL builds the indexes), what writing and storing the
   * Parquet copy adds after that (it is encoded on its own thread while the row index is stored), what storing the
   * data file adds (it is stored while the rows are read), changes, commit.
   */
  timings: Record<
    'read' | 'metadata' | 'rows' | 'indexes' | 'queryIndex' | 'parquet' | 'file' | 'changes' | 'commit',
    number
  >;
}

/** What the importer needs of a database: its pool, since COPY needs a raw client. */
export interface ImportTarget {
  pool: pg.Pool;
}

/**
 * A Kysely bound to one checked-out client, so Kysely queries, COPY and the transaction share a session. Queries
 * Kysely runs at once (Promise.all) are sent one after another: a pg client runs one query at a time.
 */
function kyselyOnClient(client: pg.PoolClient): Kysely<Database> {
  let previous: Promise<unknown> = Promise.resolve();
  const query = (...args: unknown[]) => {
    const run = previous.then(() => (client.query as (...a: unknown[]) => Promise<unknown>)(...args));
    previous = run.catch(() => undefined);
    return run;
  };
  const bound = { query, release: () => {} };
  return new Kysely<Database>({
    dialect: new PostgresDialect({ pool: { connect: async () => bound, end: async () => {} } as never }),
  });
}

async function gzipOf(dataPath: string): Promise<Buffer> {
  // A gzipped upload is stored as it came; a plain one is compressed while streaming.
  if (dataPath.endsWith('.gz')) return readFile(dataPath);
  const chunks: Buffer[] = [];
  const gzip = createReadStream(dataPath).pipe(createGzip());
  for await (const chunk of gzip) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The data set, locked; refuses an existing version number. Returns it and the latest live version below. */
async function lockDataSetForVersion(db: Kysely<Database>, dataSetId: string, versionNumber: VersionNumber) {
  const dataSet = await lockDataSet(db, dataSetId);
  if (!dataSet) throw new DataSetNotFoundError(dataSetId);
  const existing = await findVersionNumbers(db, dataSetId);
  if (existing.some((v) => compareVersionNumbers(v, versionNumber) === 0))
    throw new DuplicateVersionError(dataSetId, formatVersionNumber(versionNumber));
  // Changes and carried-over ids are against the latest live (non-draft) version below this number.
  return { dataSet, previous: latestLiveVersionBelow(existing, versionNumber) };
}

/** The reference-fixture row order sorts by the NAT, REG, LA and SCH location columns: the file must have them. */
function checkRowOrder(plan: DataFilePlan, rowOrder: RowOrder | undefined): void {
  if (rowOrder !== 'reference-fixture') return;
  const codes = new Set(plan.locationLevels.map((l) => l.info.code));
  if (!['LA', 'NAT', 'REG', 'SCH'].every((c) => codes.has(c))) {
    throw new ValidationError([
      { path: 'rowOrder', message: 'The reference-fixture row order needs NAT, REG, LA and SCH location columns.' },
    ]);
  }
}

/**
 * Import phase 2: the rows read once into `collector`. Progress goes to `onProgress` and, for /metrics, to the
 * session's reported progress (one report at a time; a failed one shows in the next statement on the client).
 */
async function readRows(
  client: pg.PoolClient,
  plan: DataFilePlan,
  problems: ProblemCollector,
  collector: RowIndexCollector,
  onProgress: ImportOptions['onProgress'],
  seconds: () => number,
): Promise<StagedRows> {
  let reporting: Promise<void> = Promise.resolve();
  const staged = await stageRows(plan, problems, collector, (progress) => {
    onProgress?.({ ...progress, seconds: seconds(), done: false });
    reporting = reporting.then(() => reportImportProgress(client, progress.rows)).catch(() => undefined);
  });
  await reporting;
  await reportImportProgress(client, staged.rows);
  onProgress?.({ rows: staged.rows, seconds: seconds(), fraction: 1, done: true });
  return staged;
}

type ImportPhase = keyof ImportResult['timings'];

/** The phases' seconds: `read` is the time so far; each `lap(phase)` adds the time since the one before to `phase`. */
function phaseTimings(seconds: () => number): { timings: ImportResult['timings']; lap: (phase: ImportPhase) => void } {
  const timings: ImportResult['timings'] = {
    read: seconds(),
    metadata: 0,
    rows: 0,
    indexes: 0,
    queryIndex: 0,
    parquet: 0,
    file: 0,
    changes: 0,
    commit: 0,
  };
  let mark = seconds();
  const lap = (phase: ImportPhase) => {
    const now = seconds();
    timings[phase] += now - mark;
    mark = now;
  };
  return { timings, lap };
}

/**
 * Import phase 5's changes against the previous live version, and the events of a published version (and of its
 * data set's first publication). A draft's changes are computed again when it is published (against the then
 * latest live version).
 */
async function recordChangesAndEvents(
  db: Kysely<Database>,
  version: {
    dataSetId: string;
    dataSetStatus: string;
    versionId: number;
    status: VersionStatus;
    previousMeta: VersionMetaSnapshot | undefined;
  },
): Promise<{ major: number; minor: number }> {
  const { dataSetId, versionId, status } = version;
  const changes = await recordVersionChanges(db, versionId, version.previousMeta);
  if (status === 'Published' && version.dataSetStatus === 'Draft') {
    await publishDataSet(db, dataSetId);
    await appendDataSetEvent(db, 'data_set.created', dataSetId);
  }
  if (status === 'Published') await appendDataSetVersionEvent(db, 'data_set_version.published', versionId);
  return changes;
}

/** Imports one data set version (the phases above), atomically. */
export async function importDataSetVersion(target: ImportTarget, options: ImportOptions): Promise<ImportResult> {
  const started = process.hrtime.bigint();
  const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
  const versionNumber = parseVersionNumber(options.version);
  if (!versionNumber) {
    throw new ValidationError([
      { path: 'version', message: `"${options.version}" is not a version number such as 1.0 or 2.1.3.` },
    ]);
  }
  const version = formatVersionNumber(versionNumber);
  const problems = new ProblemCollector();

  const plan = await planDataFile(options.dataPath, options.metaPath, problems);
  const client = await target.pool.connect();
  const db = kyselyOnClient(client);
  let committed = false;
  // The data file's insert, sent on this client while the rows are read: settled before the client is rolled back
  // and released, so that it never runs on the connection after it is handed to someone else.
  let fileStored: Promise<unknown> | undefined;
  try {
    checkRowOrder(plan, options.rowOrder);
    await beginImportTransaction(client);
    // Shown in every instance's /metrics until the transaction ends; the rows read, as they are read.
    await reportImportProgress(client, 0);
    const { dataSet, previous } = await lockDataSetForVersion(db, options.dataSetId, versionNumber);

    // The original data file, gzip-compressed, for the CSV download: stored while the rows are read (PostgreSQL
    // writes it while this process parses), before its version's row, which takes the id reserved here.
    const versionId = await reserveVersionId(db);
    await deferVersionFileCheck(db);
    fileStored = (async () => insertVersionFile(db, versionId, await gzipOf(options.dataPath)))();
    fileStored.catch(() => undefined); // awaited below; a failed read of the rows ends the import first
    const collector = rowIndexCollectorFor(plan);
    const staged = await readRows(client, plan, problems, collector, options.onProgress, seconds);
    const { timings, lap } = phaseTimings(seconds);

    const status: VersionStatus = options.draft ? 'Draft' : 'Published';
    await insertVersionRow(
      db,
      {
        ...options,
        id: versionId,
        number: versionNumber,
        status,
        locationLevels: plan.locationLevels.map((l) => l.info.code),
      },
      staged,
    );
    const previousMeta = previous ? await loadVersionMetaSnapshot(db, previous.id) : undefined;
    const maps = await insertVersionMetadata(db, versionId, plan, staged, previousMeta);
    const rowsTable = await setVersionRowsKey(db, versionId);
    lap('metadata');
    const { parquet } = await storeVersionRows(
      client,
      db,
      { versionId, rowsTable, plan, staged, maps, collector, options },
      lap,
    );
    // Awaited here, not in storeVersionRows, so that what it held (the engine form) is let go of meanwhile.
    await storeParquetCopy(db, versionId, await parquet, PARQUET_COPY_FORMAT);
    lap('parquet');

    await fileStored;
    lap('file');

    const { major: majorChanges, minor: minorChanges } = await recordChangesAndEvents(db, {
      dataSetId: options.dataSetId,
      dataSetStatus: dataSet.status,
      versionId,
      status,
      previousMeta,
    });
    lap('changes');
    await commitImportTransaction(client);
    committed = true;
    lap('commit');
    return {
      versionId,
      dataSetId: options.dataSetId,
      version,
      status,
      rows: staged.rows,
      rowsTable,
      seconds: seconds(),
      majorChanges,
      minorChanges,
      timings,
    };
  } finally {
    await fileStored?.catch(() => {});
    if (!committed) await rollbackImportTransaction(client).catch(() => {});
    await plan.batches.return(undefined).catch(() => {});
    client.release();
  }
}

/** What the import knows of a version's rows once its metadata is in: what storing them needs. */
interface CollectedVersion {
  versionId: number;
  rowsTable: string;
  plan: DataFilePlan;
  staged: Awaited<ReturnType<typeof stageRows>>;
  maps: IdMaps;
  collector: RowIndexCollector;
  options: ImportOptions;
}

/**
 * Import phase 4: the collected rows in default order as the query engine's row index (deflated and stored: its
 * engine form) and as the version's Parquet copy of record, returned while it is being written; with `rowTable`,
 * also the row table and its indexes.
 */
async function storeVersionRows(
  client: pg.PoolClient,
  db: Kysely<Database>,
  version: CollectedVersion,
  lap: (phase: ImportPhase) => void,
): Promise<{ parquet: Promise<Buffer> }> {
  const { versionId, rowsTable, plan, staged, maps, collector, options } = version;
  const queryMeta = await loadQueryVersionMeta(db, versionId, rowsTable);
  const { facets, indicators } = rowIndexColumns(queryMeta, true);
  const meaning = collectedRowMeaning(collector, plan, staged.levels, maps, options.rowOrder);
  let rowAt: Int32Array | undefined = collector.defaultOrder(meaning);
  if (options.rowTable) {
    await createRowTable(client, rowsTable, plan);
    await copyRowTable(client, rowsTable, collector.rowTableCopy(meaning, rowAt));
    lap('rows');
  }
  // With `rowTable`, PostgreSQL indexes the row table while this process makes the query engine's row index; on
  // two cores the two take about as long as the indexes alone. The first index statement is sent before the row
  // index takes the main thread; both are waited for before anything else is sent on the client.
  const tableIndexes = (async () => {
    if (!options.rowTable) return;
    await prepareVersionRowsForQuery(db, rowsTable, collector.varyingColumns());
    lap('indexes');
  })();
  const rowIndex = (async () => {
    const index = await collector.finish({ ...meaning, facetOrder: facets, indicatorOrder: indicators }, rowAt);
    // The order is in the index now: not held while the engine form and the Parquet copy are made.
    rowAt = undefined;
    // The Parquet copy's row groups are made on this thread while the engine form's slices are deflated on libuv's
    // threads (and the copy's large pages compressed there too).
    const parquet = writeParquetCopy(index, queryMeta);
    // Its failure is reported when the caller awaits it, not as an unhandled rejection meanwhile.
    parquet.catch(() => undefined);
    return { parquet, deflated: await deflateRowIndex(rowsTable, index) };
  })();
  const [made, indexed] = await Promise.allSettled([rowIndex, tableIndexes]);
  if (indexed.status === 'rejected') throw indexed.reason;
  if (made.status === 'rejected') throw made.reason;
  await storeDeflatedRowIndex(db, rowsTable, versionId, made.value.deflated);
  lap('queryIndex');
  return { parquet: made.value.parquet };
}

/** What the collected rows' file-local ids stand for: their final ids, and their row ids in the row order asked for. */
function collectedRowMeaning(
  collector: RowIndexCollector,
  plan: DataFilePlan,
  levels: string[],
  maps: IdMaps,
  rowOrder: RowOrder | undefined,
) {
  // The facet columns are the locations' (by level, as the maps) and then the filters'.
  const finalIds = [...maps.locations, ...maps.filterOptions];
  const facetIds = new Map(facetColumnsOf(plan).map((column, c) => [column, finalIds[c]!]));
  return {
    rowIds: rowOrder === 'reference-fixture' ? referenceFixtureRowIds(collector) : undefined,
    timePeriodIds: maps.timePeriods,
    levelCodes: levels,
    facetIds,
  };
}

/**
 * The ids of the reference-fixture row order, by row in file order: rows without a school first, from the most
 * detailed level (LA, REG, then the rest), file order within (the ids the reference gave the AbsenceSchool fixture).
 */
export function referenceFixtureRowIds(collector: RowIndexCollector): Int32Array {
  const group = (r: number) =>
    (collector.localId('l_sch', r) !== 0 ? 3 : 0) +
    (collector.localId('l_la', r) !== 0 ? 0 : collector.localId('l_reg', r) !== 0 ? 1 : 2);
  const ids = new Int32Array(collector.rows);
  Array.from({ length: collector.rows }, (_, r) => r)
    .sort((a, b) => group(a) - group(b) || a - b)
    .forEach((r, k) => (ids[r] = k + 1));
  return ids;
}

export type { VersionNumber };
