/**
 * Rebuilding a version's engine form (engine-form.ts) from a source of its rows: its Parquet copy of record
 * (parquet-copy.ts; every version imported or backfilled since the copy exists), or its row table (versions imported
 * before 2026-11-28, and the tests' reference rows). The row index store does it when an engine form is missing, of
 * another format or corrupt; `npm run stats-admin -- rebuild-storage` does it on demand.
 */
import type { Executor } from '../../db/database.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { formatVersionNumber, parseVersionNumber } from '../standard/version-numbers.js';
import { findVersionByNumber } from '../versions/repository.js';
import type { VersionMeta } from '../query/engine/model.js';
import type { RowIndex } from '../query/engine/index/row-index.js';
import { RowIndexBuilder, rowIndexColumns } from '../query/engine/index/row-index-builder.js';
import { setLocalStatementTimeout } from '../query/engine/index/repository.js';
import { countAllRows, streamRowsInDefaultOrder } from '../query/engine/sql/repository.js';
import { loadQueryVersionMeta } from '../query/engine/version-meta-cache.js';
import { loadRowIndexFacets, loadRowIndexValues, needsRebuild, saveEngineForm } from './engine-form.js';
import { findVersionsWithRows } from './engine-form-repository.js';
import { readParquetCopy } from './parquet-copy.js';
import { readParquetCopyBytes } from './parquet-repository.js';

/** A build refused before it read any row: its estimated size alone is over the budget. */
export class RowIndexTooLargeError extends Error {}

/**
 * The least an index of `rows` rows takes once built: per row 4 bytes for the id, 1 for the level and at least 1
 * per facet column, 4 per indicator value (texts and cached bitsets come on top).
 */
function estimatedIndexBytes(rows: number, facetColumns: number, indicatorColumns: number): number {
  return rows * (5 + facetColumns + 4 * indicatorColumns);
}

export interface BuildRowIndexOptions {
  indicators?: boolean;
  maxBytes?: number;
  /** Rows per cursor read (default 10,000). */
  rowsPerRead?: number;
  /** Called after each read with the rows read so far and the total (progress for /metrics); awaited. */
  onProgress?: (rows: number, total: number) => void | Promise<void>;
}

/**
 * Reads a version's facet columns in default result order through a cursor, into a RowIndexBuilder. Counts the
 * rows first, and refuses (RowIndexTooLargeError) before reading them when the estimate exceeds `maxBytes`. The
 * caller bounds its time (see `withTimeBound`): a cursor is one statement for as long as it is read.
 */
export async function buildRowIndex(
  db: Executor,
  meta: VersionMeta,
  options: BuildRowIndexOptions = {},
): Promise<RowIndex> {
  const { facets, indicators: indicatorColumns, read } = rowIndexColumns(meta, options.indicators !== false);
  const n = await countAllRows(db, meta.rowsTable);
  if (
    options.maxBytes !== undefined &&
    estimatedIndexBytes(n, facets.length, indicatorColumns.length) > options.maxBytes
  ) {
    throw new RowIndexTooLargeError(`An index of ${meta.rowsTable} would not fit the memory budget`);
  }
  const builder = new RowIndexBuilder(n, facets, indicatorColumns);
  const facetValues = new Array<number>(facets.length);
  const indicatorTexts = new Array<string>(indicatorColumns.length);
  for await (const chunk of streamRowsInDefaultOrder(db, meta.rowsTable, read, options.rowsPerRead ?? 10000)) {
    for (const row of chunk.rows) {
      if (builder.rows >= n) throw new Error(`Row table ${meta.rowsTable} changed while its index was built`);
      for (let c = 0; c < facets.length; c++) facetValues[c] = Number(row[facets[c]!] ?? 0);
      for (let c = 0; c < indicatorColumns.length; c++) {
        const raw = row[indicatorColumns[c]!];
        indicatorTexts[c] = raw === null || raw === undefined ? '' : (raw as number).toString();
      }
      builder.add(
        Number(row.id),
        Number(row.time_period_id),
        String(row.geographic_level),
        facetValues,
        indicatorTexts,
      );
    }
    await options.onProgress?.(builder.rows, n);
  }
  if (builder.rows !== n) throw new Error(`Row table ${meta.rowsTable} changed while its index was built`);
  return builder.finish();
}

/**
 * Runs `work` in a transaction whose statements may take `timeoutMs` in all (its own bound instead of the request
 * `statement_timeout`); inside a transaction already (the import), in that one.
 */
export async function withTimeBound<T>(
  db: Executor,
  timeoutMs: number,
  work: (trx: Executor) => Promise<T>,
): Promise<T> {
  if (db.isTransaction) return work(db);
  return db.transaction().execute(async (trx) => {
    await setLocalStatementTimeout(trx, timeoutMs);
    return work(trx);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Per-version cache with a memory budget.

/** A version without a Parquet copy or a row table: nothing to rebuild its engine form from (`backfill-parquet` makes the copy). */
export class NoRebuildSourceError extends Error {}

export interface RebuildOptions {
  /** Time bound of the whole rebuild (QUERY_INDEX_BUILD_TIMEOUT_MS). */
  timeoutMs: number;
  /** `parquet` rebuilds from the Parquet copy even when the version has a row table. */
  from?: 'parquet' | 'rows';
  /** `false`: a build from rows leaves out the indicator values (then it is not stored). */
  indicators?: boolean;
  /** A build from rows is refused (RowIndexTooLargeError) when its estimate is over this. */
  maxBytes?: number;
  rowsPerRead?: number;
  onProgress?: (rows: number, total: number) => void | Promise<void>;
  log?: { warn(object: object, message: string): void };
}

/**
 * The version's row index rebuilt from its row table where it has one, else from its Parquet copy, and its
 * engine form stored again on `storeDb` (the primary; none: not stored), within `timeoutMs`.
 */
export async function rebuildEngineForm(
  db: Executor,
  storeDb: Executor | undefined,
  meta: VersionMeta,
  options: RebuildOptions,
): Promise<{ index: RowIndex; from: 'parquet' | 'rows' }> {
  const started = Date.now();
  const remainingMs = () => Math.max(1, options.timeoutMs - (Date.now() - started));
  let index: RowIndex;
  let from: 'parquet' | 'rows';
  // A version with a row table (imported before 2026-11-28, or the tests' reference rows) is rebuilt from it, as it
  // was built; every other version from its Parquet copy.
  const parquet =
    options.from === 'rows' || (meta.hasRowTable && options.from !== 'parquet')
      ? undefined
      : await readParquetCopyBytes(db, meta.versionId);
  if (parquet) {
    index = await readParquetCopy(parquet, meta);
    from = 'parquet';
  } else if (meta.hasRowTable) {
    index = await withTimeBound(db, remainingMs(), (trx) =>
      buildRowIndex(trx, meta, {
        indicators: options.indicators,
        maxBytes: options.maxBytes,
        rowsPerRead: options.rowsPerRead,
        onProgress: options.onProgress,
      }),
    );
    from = 'rows';
  } else {
    throw new NoRebuildSourceError(
      `Version ${meta.versionId} has no Parquet copy and no row table to rebuild its storage from (run npm run stats-admin -- backfill-parquet)`,
    );
  }
  // Stored for every other instance (and this one's next start), only when it holds everything.
  if (storeDb && (from === 'parquet' || options.indicators !== false)) {
    await withTimeBound(storeDb, remainingMs(), (trx) =>
      saveEngineForm(trx, meta.rowsTable, meta.versionId, index),
    ).catch((error: unknown) => {
      options.log?.warn(
        { versionId: meta.versionId, err: error },
        'row index rebuilt, but storing its engine form failed',
      );
    });
  }
  return { index, from };
}

/** Whether a version's stored engine form is missing, of another format or corrupt (read whole and checked). */
export async function engineFormNeedsRebuild(db: Executor, rowsTable: string, timeoutMs: number): Promise<boolean> {
  try {
    const facets = await loadRowIndexFacets(db, rowsTable, timeoutMs);
    if (!facets) return true;
    await loadRowIndexValues(db, rowsTable, facets.size, timeoutMs);
    return false;
  } catch (error) {
    if (needsRebuild(error)) return true;
    throw error;
  }
}

/**
 * `npm run stats-admin -- rebuild-storage`: rebuilds the engine form of the versions whose engine form is missing,
 * stale or corrupt (`all`: of every version; `versionId`: of that one) from their Parquet copies (else row tables),
 * one at a time, each within `timeoutMs`. Returns how many it rebuilt.
 */
export async function rebuildStorage(
  db: Executor,
  which: { all?: boolean; dataSetId?: string; version?: string },
  timeoutMs: number,
  onRebuilt: (version: { id: number; from: 'parquet' | 'rows'; rows: number; seconds: number }) => void,
): Promise<number> {
  let versionId: number | undefined;
  if (which.dataSetId !== undefined) {
    const number = parseVersionNumber(which.version ?? '');
    if (!number)
      throw new ValidationError([
        { path: '--version', message: `"${which.version ?? ''}" is not a version number such as 1.0 or 2.1.3.` },
      ]);
    const row = await findVersionByNumber(db, which.dataSetId, number);
    if (!row?.rows_table)
      throw new NotFoundError(`Data set ${which.dataSetId} has no version ${formatVersionNumber(number)} with data.`);
    versionId = row.id;
  }
  const versions = (await findVersionsWithRows(db)).filter((v) => versionId === undefined || v.id === versionId);
  let rebuilt = 0;
  for (const { id, rowsTable } of versions) {
    if (!which.all && versionId === undefined && !(await engineFormNeedsRebuild(db, rowsTable, timeoutMs))) continue;
    const started = Date.now();
    const meta = await loadQueryVersionMeta(db, id, rowsTable);
    const { index, from } = await rebuildEngineForm(db, db, meta, { timeoutMs });
    rebuilt++;
    onRebuilt({ id, from, rows: index.size, seconds: (Date.now() - started) / 1000 });
  }
  return rebuilt;
}
