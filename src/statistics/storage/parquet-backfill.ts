/**
 * The Parquet copy of a version imported before the import wrote one, made from what the version kept: its data file
 * (`data_set_version_files`) and its metadata tables. The rows are staged by the importer's own code (plan and
 * stage), their file-local ids mapped to the version's existing ids by looking them up (nothing is inserted), and
 * the row index made as the import makes it; its copy is then what the import would have stored.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { finished } from 'node:stream/promises';
import { stringify } from 'csv-stringify/sync';
import type { Executor } from '../../db/database.js';
import { planDataFile, type DataFilePlan } from '../import/data-file.js';
import { ProblemCollector } from '../import/errors.js';
import { referenceFixtureRowIds, type RowOrder } from '../import/import.js';
import { facetColumnsOf, rowIndexCollectorFor, stageRows, type StagedRows } from '../import/stage-rows.js';
import { loadQueryVersionMeta, rowIndexColumns, timePeriodKey, type VersionMeta } from '../query/engine/index.js';
import { findStoredFileSize, readStoredFileSlice } from '../data-file/repository.js';
import { findParquetCopyInfo, findVersionRowsKey, findVersionsWithoutParquetCopy } from './parquet-repository.js';
import { storeVersionParquetCopy } from './parquet-service.js';

/** Bytes per read of the stored data file. */
const FILE_SLICE_BYTES = 1024 * 1024;

export interface BackfillResult {
  versionId: number;
  rows: number;
  bytes: number;
  seconds: number;
  /** False when the version had a copy already (stored meanwhile, or asked for again). */
  stored: boolean;
}

export interface BackfillOptions {
  /** How the version's rows were numbered when it was imported (`npm run import -- --row-order`); default `file`. */
  rowOrder?: RowOrder;
  onVersion?: (result: BackfillResult) => void;
}

/** The meta CSV the version was imported with, as far as the plan needs it: its filters and indicators with their labels. */
function metaCsv(meta: VersionMeta): string {
  const header = [
    'col_name',
    'col_type',
    'label',
    'indicator_grouping',
    'indicator_unit',
    'indicator_dp',
    'filter_hint',
    'filter_grouping_column',
  ];
  const rows = [
    ...meta.filters.map((f) => [f.columnName, 'Filter', f.label, '', '', '', '', '']),
    ...meta.indicators.map((i) => [i.columnName, 'Indicator', i.label, '', '', '', '', '']),
  ];
  return stringify([header, ...rows]);
}

/** The version's stored data file, gzip, written to `file`. */
async function writeStoredFile(db: Executor, versionId: number, file: string): Promise<void> {
  const size = await findStoredFileSize(db, versionId);
  if (size === undefined) throw new Error(`Version ${versionId} has no data file to make its Parquet copy from`);
  const out = createWriteStream(file);
  for (let offset = 0; offset < size; offset += FILE_SLICE_BYTES) {
    if (!out.write(await readStoredFileSlice(db, versionId, offset, FILE_SLICE_BYTES))) await once(out, 'drain');
  }
  out.end();
  await finished(out);
}

/** A final id by key, or an error naming what the version's metadata lacks. */
function lookUp<K>(ids: Map<K, number>, key: K, what: string, versionId: number): number {
  const id = ids.get(key);
  if (id === undefined)
    throw new Error(`The data file of version ${versionId} has ${what}, which its metadata does not`);
  return id;
}

/** The staged rows' file-local ids mapped to the version's ids, looked up in its metadata. */
function meaningOf(plan: DataFilePlan, staged: StagedRows, meta: VersionMeta) {
  const timePeriodIds = staged.timePeriods.map((t) =>
    lookUp(
      meta.timePeriodIdByKey,
      timePeriodKey(t.period, t.code),
      `time period ${t.period} ${t.code}`,
      meta.versionId,
    ),
  );
  const locationKey = (label: string, codes: Array<string | null | undefined>) =>
    [label, ...codes.map((c) => c ?? '')].join('\u0000');
  const locations = plan.locationLevels.map((level) => {
    const ids = new Map(
      (meta.locationsByLevel.get(level.info.code) ?? []).map((l) => [
        locationKey(l.label, [l.code, l.oldCode, l.urn, l.laEstab, l.ukprn]),
        l.id,
      ]),
    );
    return level.options.map((o) =>
      lookUp(
        ids,
        locationKey(o.label, [o.fields.code, o.fields.old_code, o.fields.urn, o.fields.la_estab, o.fields.ukprn]),
        `location ${o.label} (${level.info.code})`,
        meta.versionId,
      ),
    );
  });
  const options = plan.filters.map((filter, f) => {
    const ids = new Map(
      [...meta.optionsById.values()].filter((o) => o.filter.columnName === filter.column).map((o) => [o.label, o.id]),
    );
    return staged.filterOptionLabels[f]!.map((label) =>
      lookUp(ids, label, `option "${label}" of ${filter.column}`, meta.versionId),
    );
  });
  const finalIds = [...locations, ...options];
  return {
    timePeriodIds,
    levelCodes: staged.levels,
    facetIds: new Map(facetColumnsOf(plan).map((column, c) => [column, finalIds[c]!])),
  };
}

/** The plan's filter and indicator columns must be the version's (`f<n>`: the n-th in label order). */
function checkColumns(plan: DataFilePlan, meta: VersionMeta): void {
  const byColumn = new Map([...meta.filters, ...meta.indicators].map((c) => [c.column, c.columnName]));
  const planned = [
    ...plan.filters.map((f, i) => [`f${i + 1}`, f.column]),
    ...plan.indicators.map((ind, i) => [`i${i + 1}`, ind.column]),
  ];
  for (const [column, name] of planned) {
    if (byColumn.get(column!) !== name)
      throw new Error(`Version ${meta.versionId}: ${name} is not its column ${column}`);
  }
}

/** Makes and stores the Parquet copy of one version from its kept data file; a version with one is left as it is. */
export async function backfillParquetCopy(
  db: Executor,
  versionId: number,
  options: BackfillOptions = {},
): Promise<BackfillResult> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const existing = await findParquetCopyInfo(db, versionId);
  if (existing) return { versionId, rows: -1, bytes: existing.byteSize, seconds: seconds(), stored: false };
  const rowsTable = await findVersionRowsKey(db, versionId);
  if (rowsTable === undefined) throw new Error(`Version ${versionId} does not exist`);
  const meta = await loadQueryVersionMeta(db, versionId, rowsTable);
  const dir = await mkdtemp(path.join(tmpdir(), 'parquet-backfill-'));
  try {
    const dataPath = path.join(dir, 'data.csv.gz');
    const metaPath = path.join(dir, 'meta.csv');
    await writeStoredFile(db, versionId, dataPath);
    await writeFile(metaPath, metaCsv(meta));
    const problems = new ProblemCollector();
    const plan = await planDataFile(dataPath, metaPath, problems);
    try {
      checkColumns(plan, meta);
      const collector = rowIndexCollectorFor(plan);
      const staged = await stageRows(plan, problems, collector);
      const meaning = {
        ...meaningOf(plan, staged, meta),
        rowIds: options.rowOrder === 'reference-fixture' ? referenceFixtureRowIds(collector) : undefined,
      };
      const { facets, indicators } = rowIndexColumns(meta, true);
      const index = await collector.finish({ ...meaning, facetOrder: facets, indicatorOrder: indicators });
      const { bytes, stored } = await storeVersionParquetCopy(db, versionId, index, meta);
      return { versionId, rows: staged.rows, bytes, seconds: seconds(), stored };
    } finally {
      await plan.batches.return(undefined).catch(() => {});
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Backfills the given versions, or every version without a copy, one at a time: each is stored when made, so a run
 * stopped midway goes on where it stopped when run again.
 */
export async function backfillParquetCopies(
  db: Executor,
  versions: number[] | 'all',
  options: BackfillOptions = {},
): Promise<BackfillResult[]> {
  const ids = versions === 'all' ? await findVersionsWithoutParquetCopy(db) : versions;
  const results: BackfillResult[] = [];
  for (const versionId of ids) {
    const result = await backfillParquetCopy(db, versionId, options);
    options.onVersion?.(result);
    results.push(result);
  }
  return results;
}
