/**
 * Getting row indexes and keeping them: loaded in the background on first use — from the version's stored form
 * (row-index-snapshot.ts) when it has one, its facets first and then its values, else built from its rows and then
 * stored — under a time bound of its own, retried with a growing wait after a failure, cached per version and evicted
 * least-recently-used under a memory budget; until its facets are in, queries read the version's stored columns
 * (stored-columns.ts; the store keeps their headers), or SQL for a version without them.
 */
import { LRUCache } from 'lru-cache';
import type pg from 'pg';
import { readBinaryCopy } from '../../../db/binary-copy.js';
import { detachedFromRequest, withPooledClient, type Executor } from '../../../db/database.js';
import { locationColumn } from '../../standard/geographic-levels.js';
import {
  copyRowsInDefaultOrder,
  countAllRows,
  findVersionsToWarm,
  findVersionsWithoutStoredRowIndex,
  recordRowIndexUse,
  setLocalStatementTimeout,
  streamRowsInDefaultOrder,
} from './repository.js';
import type { RowIndex } from './row-index.js';
import { RowIndexBuilder } from './row-index-builder.js';
import { loadRowIndexFacets, loadRowIndexValues, saveRowIndexSnapshot } from './row-index-snapshot.js';
import { StoredColumnsCache, type StoredColumns } from './stored-columns.js';
import { loadQueryVersionMeta, type VersionMeta } from './version-meta-cache.js';

/**
 * The columns a build from rows reads, in this order: id, time period, level, the location and filter columns
 * (`facets`, the index's, in the order it keeps them), then the indicator columns (none when built without values).
 */
export function rowIndexColumns(meta: VersionMeta, withValues: boolean): { facets: string[]; indicators: string[]; read: string[] } {
  const facets = [...meta.locationLevels.map(locationColumn), ...meta.filters.map((f) => f.column)];
  const indicators = withValues ? meta.indicators.map((i) => i.column) : [];
  return { facets, indicators, read: ['id', 'time_period_id', 'geographic_level', ...facets, ...indicators] };
}

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
export async function buildRowIndex(db: Executor, meta: VersionMeta, options: BuildRowIndexOptions = {}): Promise<RowIndex> {
  const { facets, indicators: indicatorColumns, read } = rowIndexColumns(meta, options.indicators !== false);
  const n = await countAllRows(db, meta.rowsTable);
  if (options.maxBytes !== undefined && estimatedIndexBytes(n, facets.length, indicatorColumns.length) > options.maxBytes) {
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
        indicatorTexts[c] = raw === null || raw === undefined ? '' : String(raw);
      }
      builder.add(Number(row.id), Number(row.time_period_id), String(row.geographic_level), facetValues, indicatorTexts);
    }
    await options.onProgress?.(builder.rows, n);
  }
  if (builder.rows !== n) throw new Error(`Row table ${meta.rowsTable} changed while its index was built`);
  return builder.finish();
}

/**
 * Builds a version's row index from its rows read through one binary COPY on `client` (without an object per row:
 * 2.6 times faster than a cursor, docs/architecture.md) and stores it: the import's way, on its client in its
 * transaction, and `npm run stats-admin -- build-row-indexes`'s. Returns the bytes stored.
 */
export async function storeRowIndexFromRowTable(client: pg.PoolClient, db: Executor, versionId: number, rowsTable: string): Promise<number> {
  const meta = await loadQueryVersionMeta(db, versionId, rowsTable);
  const { facets, indicators: indicatorColumns, read: columns } = rowIndexColumns(meta, true);
  const builder = new RowIndexBuilder(await countAllRows(db, rowsTable), facets, indicatorColumns);
  const facetValues = new Array<number>(facets.length);
  const indicatorTexts = new Array<string>(indicatorColumns.length);
  const firstIndicator = 3 + facets.length;
  // Fields: id, time period (int4), level (text), facets (int4), indicators (text); none is NULL in a row table.
  await readBinaryCopy(copyRowsInDefaultOrder(client, rowsTable, columns), columns.length, (buffer, offsets, lengths) => {
    for (let c = 0; c < facets.length; c++) facetValues[c] = buffer.readInt32BE(offsets[3 + c]!);
    for (let c = 0; c < indicatorColumns.length; c++) {
      const at = offsets[firstIndicator + c]!;
      indicatorTexts[c] = buffer.toString('utf8', at, at + lengths[firstIndicator + c]!);
    }
    builder.add(buffer.readInt32BE(offsets[0]!), buffer.readInt32BE(offsets[1]!), buffer.toString('latin1', offsets[2]!, offsets[2]! + lengths[2]!), facetValues, indicatorTexts);
  });
  return saveRowIndexSnapshot(db, rowsTable, versionId, builder.finish());
}

/**
 * Stores the row index of every version that has none (imported before the stored form existed, or before its
 * current format), each built from its rows under `timeoutMs`: `npm run stats-admin -- build-row-indexes`.
 */
export async function storeMissingRowIndexes(
  db: Executor, timeoutMs: number, onStored: (version: { id: number; rowsTable: string; bytes: number; seconds: number }) => void,
): Promise<number> {
  const versions = await findVersionsWithoutStoredRowIndex(db);
  for (const { id, rowsTable } of versions) {
    const started = Date.now();
    const bytes = await withPooledClient(db, timeoutMs, (client) => storeRowIndexFromRowTable(client, db, id, rowsTable));
    onStored({ id, rowsTable, bytes, seconds: (Date.now() - started) / 1000 });
  }
  return versions.length;
}

/**
 * Runs `work` in a transaction whose statements may take `timeoutMs` in all (its own bound instead of the request
 * `statement_timeout`); inside a transaction already (the import), in that one.
 */
export async function withTimeBound<T>(db: Executor, timeoutMs: number, work: (trx: Executor) => Promise<T>): Promise<T> {
  if (db.isTransaction) return work(db);
  return db.transaction().execute(async (trx) => {
    await setLocalStatementTimeout(trx, timeoutMs);
    return work(trx);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Per-version cache with a memory budget.

/** An index unused this long gives up its cached postings and bitsets when a busier one needs the room. */
const CACHE_IDLE_MS = 10000;

/** What the store logs (the app's pino logger). */
export interface RowIndexLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface RowIndexStoreOptions {
  /** Memory for all indexes together; least recently used are evicted beyond it. 0 turns the index off. */
  memoryBudgetBytes?: number;
  /** `false`: no index in memory (queries go to the stored columns, else SQL). */
  enabled?: boolean;
  /** `false`: a version whose index is not in memory is queried on SQL, not from its stored columns (stored-columns.ts). */
  storedColumns?: boolean;
  /** Time bound of one query's reads of stored columns (the requests' statement timeout). */
  storedReadTimeoutMs?: number;
  /** `false` builds indexes without the indicator values (less memory; a page's values then come from the stored columns). */
  indicatorValues?: boolean;
  /** Loads at once (a build reads a whole row table); a query finding them all busy reads the stored columns. Default 2. */
  maxConcurrentBuilds?: number;
  /** Time bound of one load or build (QUERY_INDEX_BUILD_TIMEOUT_MS), not the requests' statement timeout. */
  buildTimeoutMs?: number;
  /** Wait after a failed load before the next attempt (QUERY_INDEX_RETRY_MS); doubles per failure, up to 32×. */
  retryAfterMs?: number;
  /** Where an index built from rows is stored for other instances (the primary); none: not stored. */
  snapshotDb?: Executor;
  log?: RowIndexLog;
  /** Rows per cursor read of a build from rows (tests). */
  rowsPerRead?: number;
  /** Called after each read of a build from rows (tests slow it down with it). */
  onBuildProgress?: (rows: number, total: number) => void | Promise<void>;
}

/** What /metrics shows of the store. */
export interface RowIndexStoreStatus {
  ready: number;
  bytes: number;
  loading: number;
  /** Rows read so far by the builds from rows in progress. */
  rowsRead: number;
  /** Versions waiting before their next attempt after a failure. */
  backingOff: number;
  /** Finished loads by how: from the stored snapshot, built from rows, failed, too large for the budget. */
  outcomes: Record<'snapshot' | 'rows' | 'failed' | 'too_large', number>;
}

interface Failure {
  attempts: number;
  retryAt: number;
}

/**
 * The row indexes of one app, per version, under a memory budget. One store per app (not per process), so two apps
 * on two databases — whose versions can share ids and table names — never answer from each other's rows. A version's
 * rows table is written once by its import and never reloaded, so an index never goes stale.
 */
export class RowIndexStore {
  /** Built indexes, least recently used evicted beyond the budget (each sized by its bytes). */
  private ready: LRUCache<string, RowIndex>;
  /** Indexes being loaded: not yet sized, so not in `ready`. */
  private readonly building = new Map<string, Promise<RowIndex | undefined>>();
  /** Rows read so far by each build from rows. */
  private readonly progress = new Map<string, number>();
  /** Versions whose index would not fit the budget at all: they stay on SQL, and are not built again. */
  private readonly tooLarge = new Set<string>();
  /** Versions whose last attempt failed: not tried again before `retryAt`. */
  private readonly failures = new Map<string, Failure>();
  private readonly outcomes: RowIndexStoreStatus['outcomes'] = { snapshot: 0, rows: 0, failed: 0, too_large: 0 };
  private memoryBudgetBytes = 1024 * 1024 * 1024;
  private enabled = true;
  private storedColumnsOn = true;
  private storedReadTimeoutMs = 30000;
  private readonly storedColumns = new StoredColumnsCache();
  private indicatorValues = true;
  private maxConcurrentBuilds = 2;
  private buildTimeoutMs = 600000;
  private retryAfterMs = 30000;
  private snapshotDb: Executor | undefined;
  private log: RowIndexLog | undefined;
  private rowsPerRead: number | undefined;
  private onBuildProgress: RowIndexStoreOptions['onBuildProgress'];
  /** When this store last noted each version's use in the database (at most once a minute). */
  private readonly usesNoted = new Map<string, number>();
  /** False while the warm-up (startWarmUp) loads the versions in use: the instance is not ready. */
  private warmedUp = true;
  private warmUpEnded: Promise<void> = Promise.resolve();

  constructor(options: RowIndexStoreOptions = {}) {
    this.ready = this.newCache();
    this.configure(options);
  }

  private newCache(): LRUCache<string, RowIndex> {
    // Sized by their arrays: what queries cache in them is kept within the rest of the budget (`mayCache`), and
    // dropped before any whole index is evicted.
    return new LRUCache<string, RowIndex>({ maxSize: Math.max(1, this.memoryBudgetBytes), sizeCalculation: (index) => Math.max(1, index.partsBytes) });
  }

  /** Changes the settings; indexes already built stay (drop them with `forget`), within the new budget. */
  configure(options: RowIndexStoreOptions): void {
    if (options.memoryBudgetBytes !== undefined) {
      this.memoryBudgetBytes = options.memoryBudgetBytes;
      // A budget of 0 turns the index off: every query runs on SQL.
      this.enabled = options.memoryBudgetBytes > 0;
      // Most recently used first: set in reverse so the order is kept.
      const previous = [...this.ready.entries()].reverse();
      this.ready = this.newCache();
      for (const [key, index] of previous) this.ready.set(key, index);
      this.tooLarge.clear();
    }
    if (options.enabled !== undefined) this.enabled = options.enabled;
    if (options.storedColumns !== undefined) this.storedColumnsOn = options.storedColumns;
    if (options.storedReadTimeoutMs !== undefined) this.storedReadTimeoutMs = options.storedReadTimeoutMs;
    if (options.indicatorValues !== undefined) this.indicatorValues = options.indicatorValues;
    if (options.maxConcurrentBuilds !== undefined) this.maxConcurrentBuilds = Math.max(1, options.maxConcurrentBuilds);
    if (options.buildTimeoutMs !== undefined) this.buildTimeoutMs = options.buildTimeoutMs;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.snapshotDb !== undefined) this.snapshotDb = options.snapshotDb;
    if (options.log !== undefined) this.log = options.log;
    if (options.rowsPerRead !== undefined) this.rowsPerRead = options.rowsPerRead;
    if (options.onBuildProgress !== undefined) this.onBuildProgress = options.onBuildProgress;
  }

  /** Bytes held by the kept indexes: their arrays and what queries cached in them. */
  get bytes(): number {
    let cached = 0;
    for (const index of this.ready.values()) cached += index.cachedBytes;
    return this.ready.calculatedSize + cached;
  }

  /**
   * Whether `asker` may cache `bytes` more (postings, bitsets) within the budget: room is made by dropping the
   * caches of indexes idle for CACHE_IDLE_MS, least recent first — never by evicting an index. Without room the
   * query works without caching (slower by a pass over the codes), so versions queried in turn do not evict each
   * other (measured: 34 reloads of four 5M-row versions under 512 MB when the caches counted like the arrays).
   */
  private mayCache(asker: RowIndex, bytes: number): boolean {
    let free = this.memoryBudgetBytes - this.bytes;
    if (bytes <= free) return true;
    const idleBefore = Date.now() - CACHE_IDLE_MS;
    for (const index of this.ready.rvalues()) {
      if (!index || index === asker || index.lastUsed > idleBefore || index.cachedBytes === 0) continue;
      free += index.dropCached();
      if (bytes <= free) return true;
    }
    return false;
  }

  /** Drops caches, least recently used index first, until arrays and caches are within the budget again. */
  private trimCaches(): void {
    let over = this.bytes - this.memoryBudgetBytes;
    for (const index of this.ready.rvalues()) {
      if (over <= 0) return;
      if (index) over -= index.dropCached();
    }
  }

  status(): RowIndexStoreStatus {
    const now = Date.now();
    return {
      ready: this.ready.size,
      bytes: this.bytes,
      loading: this.building.size,
      rowsRead: [...this.progress.values()].reduce((a, b) => a + b, 0),
      backingOff: [...this.failures.values()].filter((f) => f.retryAt > now).length,
      outcomes: { ...this.outcomes },
    };
  }

  /**
   * The version's index when it is ready; otherwise starts loading it (once per version, not before the wait after
   * a failure is over, and only while fewer than `maxConcurrentBuilds` are loading) and returns undefined.
   */
  async indexFor(db: Executor, meta: VersionMeta): Promise<RowIndex | undefined> {
    if (!this.enabled) return undefined;
    this.noteUse(meta);
    const key = keyOf(meta);
    const index = this.ready.get(key);
    if (index) return index;
    if (this.building.has(key) || this.tooLarge.has(key) || this.building.size >= this.maxConcurrentBuilds) return undefined;
    if ((this.failures.get(key)?.retryAt ?? 0) > Date.now()) return undefined;
    void this.start(db, meta);
    return undefined;
  }

  /**
   * The version's stored columns, for a query while its index is not in memory: undefined when it has no stored
   * form of the current format (its queries go to SQL) or the cold path is off.
   */
  async storedColumnsFor(db: Executor, meta: VersionMeta): Promise<StoredColumns | undefined> {
    if (!this.storedColumnsOn) return undefined;
    return this.storedColumns.open(db, meta.rowsTable, this.storedReadTimeoutMs);
  }

  /** Time bound of one query's reads of stored columns. */
  get storedReadTimeout(): number {
    return this.storedReadTimeoutMs;
  }

  /** Whether the warm-up is over (done or out of time): /health/ready says ready only then. */
  get warm(): boolean {
    return this.warmedUp;
  }

  /** Resolves when the warm-up is over (at once when there is none). */
  get warmUpOver(): Promise<void> {
    return this.warmUpEnded;
  }

  /**
   * Loads the indexes of the `versions` versions queried (by any instance) or published most recently before this
   * instance says it is ready, for at most `timeoutMs`; the least recent first, so the most recent stay when not all fit the budget.
   * Resolves once the list is read (so an instance with nothing to load is ready at once); the loads go on in the
   * background, and a failed one is left to the usual retry.
   */
  async startWarmUp(
    db: Executor, metaOf: (versionId: number, rowsTable: string) => Promise<VersionMeta>, options: { versions: number; timeoutMs: number },
  ): Promise<void> {
    if (!this.enabled || options.versions <= 0) return;
    const recent = await findVersionsToWarm(db, options.versions);
    if (recent.length === 0) return;
    this.warmedUp = false;
    const started = Date.now();
    const loads = (async () => {
      for (const { id, rowsTable } of recent.reverse()) {
        if (Date.now() - started >= options.timeoutMs) break;
        await this.ensure(db, await metaOf(id, rowsTable)).catch(() => undefined);
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    const outOfTime = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), options.timeoutMs)));
    this.warmUpEnded = Promise.race([loads.then(() => 'done' as const, () => 'done' as const), outOfTime]).then((how) => {
      clearTimeout(timer);
      this.warmedUp = true;
      this.log?.info({ versions: recent.length, ready: this.ready.size, seconds: (Date.now() - started) / 1000, how }, 'row index warm-up over');
    });
  }

  /** Notes the version's use in the database (for the warm-up of the next instances), at most once a minute. */
  private noteUse(meta: VersionMeta): void {
    const key = keyOf(meta);
    if (!this.snapshotDb || Date.now() - (this.usesNoted.get(key) ?? 0) < 60000) return;
    this.usesNoted.set(key, Date.now());
    recordRowIndexUse(this.snapshotDb, meta.rowsTable, meta.versionId).catch((error: unknown) => {
      this.log?.warn({ versionId: meta.versionId, err: error }, 'could not note the use of a row index');
    });
  }

  /** Versions whose index is being loaded now. */
  get buildsInProgress(): number {
    return this.building.size;
  }

  /** The version's index, waiting for it to be loaded (tests, benchmarks, warm-up); ignores the wait after a failure. */
  async ensure(db: Executor, meta: VersionMeta): Promise<RowIndex | undefined> {
    if (this.tooLarge.has(keyOf(meta))) return undefined;
    return this.ready.get(keyOf(meta)) ?? this.building.get(keyOf(meta)) ?? this.start(db, meta);
  }

  /** Drops every index (they are built again on use, with the current settings). */
  forget(): void {
    this.ready.clear();
    this.building.clear();
    this.progress.clear();
    this.tooLarge.clear();
    this.failures.clear();
    this.storedColumns.clear();
  }

  /**
   * Sizes a kept index again in the budget once its values came in (its arrays grew; what queries cache is counted
   * apart, see `mayCache`): lru-cache keeps the size of a value set again as it was, so it is removed and set anew.
   */
  private resize(key: string, index: RowIndex): void {
    if (this.ready.peek(key) !== index || this.ready.info(key)?.size === Math.max(1, index.partsBytes)) return;
    this.ready.delete(key);
    this.ready.set(key, index);
    this.trimCaches();
  }

  /**
   * The stored form, else a build from the rows (then stored), all within the store's time bound (each read of a
   * stored part, and the build, gets what is left of it). From the stored form, the index answers (through
   * `onFacets`) as soon as its facets are in, while its values load: until then a page's values are read from the
   * database by row id. The values are not loaded when they would take the index over the whole budget.
   */
  private async load(
    db: Executor, meta: VersionMeta, key: string, onFacets: (index: RowIndex) => boolean,
  ): Promise<{ index: RowIndex; from: 'snapshot' | 'rows' }> {
    const started = Date.now();
    const remainingMs = () => Math.max(1, this.buildTimeoutMs - (Date.now() - started));
    const stored = await loadRowIndexFacets(db, meta.rowsTable, remainingMs());
    if (stored) {
      const kept = onFacets(stored);
      const valuesBytes = stored.size * 4 * meta.indicators.length;
      if (kept && this.indicatorValues && stored.bytes + valuesBytes <= this.memoryBudgetBytes) {
        // The index answers already: without its values, a page's values are read by row id.
        try {
          const values = await loadRowIndexValues(db, meta.rowsTable, stored.size, remainingMs());
          if (values) stored.addIndicators(values);
        } catch (error) {
          this.log?.warn({ versionId: meta.versionId, err: error }, 'row index values not loaded: page values come from the database');
        }
      }
      return { index: stored, from: 'snapshot' };
    }
    const index = await withTimeBound(db, remainingMs(), (trx) =>
      buildRowIndex(trx, meta, {
        indicators: this.indicatorValues,
        maxBytes: this.memoryBudgetBytes,
        rowsPerRead: this.rowsPerRead,
        onProgress: async (rows, total) => {
          this.progress.set(key, rows);
          await this.onBuildProgress?.(rows, total);
        },
      }),
    );
    // Stored for every other instance (and this one's next start), only when it holds everything.
    if (this.snapshotDb && this.indicatorValues) {
      await withTimeBound(this.snapshotDb, remainingMs(), (trx) => saveRowIndexSnapshot(trx, meta.rowsTable, meta.versionId, index)).catch((error: unknown) => {
        this.log?.warn({ versionId: meta.versionId, err: error }, 'row index built, but storing its snapshot failed');
      });
    }
    return { index, from: 'rows' };
  }

  /**
   * Keeps a loaded index when it fits the budget (else the version stays on SQL, and is not loaded again), and
   * counts the load's outcome: from then on it answers.
   */
  private keep(meta: VersionMeta, index: RowIndex, from: 'snapshot' | 'rows'): boolean {
    const key = keyOf(meta);
    if (index.partsBytes > this.memoryBudgetBytes) {
      this.tooLarge.add(key);
      this.outcomes.too_large++;
      this.log?.warn({ versionId: meta.versionId, bytes: index.partsBytes }, 'row index larger than QUERY_INDEX_MEMORY_MB: not kept');
      return false;
    }
    index.limitCaching((bytes) => this.mayCache(index, bytes));
    this.ready.set(key, index);
    this.trimCaches();
    this.outcomes[from]++;
    return true;
  }

  private start(db: Executor, meta: VersionMeta): Promise<RowIndex | undefined> {
    const key = keyOf(meta);
    const started = Date.now();
    this.log?.info({ versionId: meta.versionId, rowsTable: meta.rowsTable }, 'row index loading');
    let kept: boolean | undefined;
    // Not bound by the deadline of the request that started it: the load has its own (buildTimeoutMs).
    const promise = detachedFromRequest(() => this.load(db, meta, key, (facets) => (kept = this.keep(meta, facets, 'snapshot')))).then(
      ({ index, from }) => {
        this.building.delete(key);
        this.progress.delete(key);
        this.failures.delete(key);
        // Kept when its facets came in (from the stored form), or now (built from rows); too large: not kept.
        if (kept === undefined) kept = this.keep(meta, index, from);
        if (!kept) return undefined;
        // Sized again in the budget now that its values are in.
        this.resize(key, index);
        this.log?.info(
          { versionId: meta.versionId, rows: index.size, bytes: index.bytes, values: index.hasIndicators(meta.indicators.map((i) => i.column)), from, seconds: (Date.now() - started) / 1000 },
          'row index ready',
        );
        return index;
      },
      (error: unknown) => {
        this.building.delete(key);
        this.progress.delete(key);
        // Estimated over the budget: that version stays on SQL. Any other failure (e.g. its time bound, the
        // database lost) is tried again after a wait that doubles with each failure.
        if (error instanceof RowIndexTooLargeError) {
          this.tooLarge.add(key);
          this.outcomes.too_large++;
          this.log?.warn({ versionId: meta.versionId }, 'row index would not fit QUERY_INDEX_MEMORY_MB: the version stays on SQL');
          return undefined;
        }
        const attempts = (this.failures.get(key)?.attempts ?? 0) + 1;
        const waitMs = this.retryAfterMs * 2 ** Math.min(attempts - 1, 5);
        this.failures.set(key, { attempts, retryAt: Date.now() + waitMs });
        this.outcomes.failed++;
        this.log?.warn(
          { versionId: meta.versionId, attempts, retryInMs: waitMs, seconds: (Date.now() - started) / 1000, err: error },
          'row index load failed; queries stay on SQL until the next attempt',
        );
        return undefined;
      },
    );
    this.building.set(key, promise);
    return promise;
  }
}

function keyOf(meta: VersionMeta): string {
  return `${meta.versionId}:${meta.rowsTable}`;
}
