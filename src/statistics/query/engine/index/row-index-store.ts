/**
 * Getting row indexes: loaded in the background on first use — from the version's engine form (storage/engine-form.ts),
 * its facets first and then its values; when that is missing, of another format or corrupt, rebuilt from the
 * version's Parquet copy or its row table and stored again (storage/rebuild.ts) — under a time bound of its own,
 * retried with a growing wait after a failure, and kept in a RowIndexCache under the memory budget. Until an
 * index's facets are in, queries read the version's stored columns (stored/stored-columns.ts; this store keeps their
 * headers), or SQL for a version that has a row table. It also runs a starting instance's warm-up.
 */
import { detachedFromRequest, type Executor } from '../../../../db/database.js';
import { loadRowIndexFacets, loadRowIndexValues, needsRebuild } from '../../../storage/engine-form.js';
import { rebuildEngineForm, RowIndexTooLargeError } from '../../../storage/rebuild.js';
import type { VersionMeta } from '../model.js';
import { StoredColumnsCache, type StoredColumns } from '../stored/stored-columns.js';
import { findVersionsToWarm, recordRowIndexUse } from './repository.js';
import type { RowIndex } from './row-index.js';
import { RowIndexCache } from './row-index-cache.js';

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
  /** Loads at once (a rebuild reads a whole version); a query finding them all busy reads the stored columns. Default 2. */
  maxConcurrentBuilds?: number;
  /** Time bound of one load or rebuild (QUERY_INDEX_BUILD_TIMEOUT_MS), not the requests' statement timeout. */
  buildTimeoutMs?: number;
  /** Wait after a failed load before the next attempt (QUERY_INDEX_RETRY_MS); doubles per failure, up to 32×. */
  retryAfterMs?: number;
  /** Where a rebuilt engine form is stored for other instances (the primary); none: not stored. */
  engineFormDb?: Executor;
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
  /** Engine forms being rebuilt now (from the Parquet copy or the row table). */
  rebuilding: number;
  /** Rows read so far by the rebuilds in progress. */
  rowsRead: number;
  /** Versions waiting before their next attempt after a failure. */
  backingOff: number;
  /**
   * Finished loads by how: from the stored engine form (`engine_form`), rebuilt from the row table (`rows`) or from the
   * Parquet copy (`parquet`), failed, too large for the budget.
   */
  outcomes: Record<'engine_form' | 'rows' | 'parquet' | 'failed' | 'too_large', number>;
}

interface Failure {
  attempts: number;
  retryAt: number;
}

/**
 * The row indexes of one app, per version. One store per app (not per process), so two apps on two databases —
 * whose versions can share ids and table names — never answer from each other's rows. A version's rows never change
 * once imported, so an index never goes stale; its engine form can (a format change, a bad restore), and is rebuilt.
 */
export class RowIndexStore {
  private readonly kept: RowIndexCache;
  /** Indexes being loaded: not yet sized, so not kept. */
  private readonly building = new Map<string, Promise<RowIndex | undefined>>();
  /** Rows read so far by each rebuild. */
  private readonly progress = new Map<string, number>();
  /** Versions being rebuilt now (their engine form missing, stale or corrupt). */
  private readonly rebuilding = new Set<string>();
  /** The rebuild running now: rebuilds run one at a time (each reads and holds a whole version). */
  private rebuildQueue: Promise<unknown> = Promise.resolve();
  /** Versions whose engine form was found corrupt: not read as stored columns until it is rebuilt. */
  private readonly distrusted = new Set<string>();
  /** Versions whose index would not fit the budget at all: they stay on the stored columns or SQL. */
  private readonly tooLarge = new Set<string>();
  /** Versions whose last attempt failed: not tried again before `retryAt`. */
  private readonly failures = new Map<string, Failure>();
  private readonly outcomes: RowIndexStoreStatus['outcomes'] = {
    engine_form: 0,
    rows: 0,
    parquet: 0,
    failed: 0,
    too_large: 0,
  };
  private enabled = true;
  private storedColumnsOn = true;
  private storedReadTimeoutMs = 30000;
  private readonly storedColumns = new StoredColumnsCache();
  private indicatorValues = true;
  private maxConcurrentBuilds = 2;
  private buildTimeoutMs = 600000;
  private retryAfterMs = 30000;
  private engineFormDb: Executor | undefined;
  private log: RowIndexLog | undefined;
  private rowsPerRead: number | undefined;
  private onBuildProgress: RowIndexStoreOptions['onBuildProgress'];
  /** When this store last noted each version's use in the database (at most once a minute). */
  private readonly usesNoted = new Map<string, number>();
  /** False while the warm-up (startWarmUp) loads the versions in use: the instance is not ready. */
  private warmedUp = true;
  private warmUpEnded: Promise<void> = Promise.resolve();

  constructor(options: RowIndexStoreOptions = {}) {
    this.kept = new RowIndexCache(1024 * 1024 * 1024);
    this.configure(options);
  }

  /** Changes the settings; indexes already built stay (drop them with `forget`), within the new budget. */
  configure(options: RowIndexStoreOptions): void {
    if (options.memoryBudgetBytes !== undefined) {
      this.kept.setBudget(options.memoryBudgetBytes);
      // A budget of 0 turns the index off: every query runs on the stored columns or SQL.
      this.enabled = options.memoryBudgetBytes > 0;
      this.tooLarge.clear();
    }
    if (options.enabled !== undefined) this.enabled = options.enabled;
    if (options.storedColumns !== undefined) this.storedColumnsOn = options.storedColumns;
    if (options.storedReadTimeoutMs !== undefined) this.storedReadTimeoutMs = options.storedReadTimeoutMs;
    if (options.indicatorValues !== undefined) this.indicatorValues = options.indicatorValues;
    if (options.maxConcurrentBuilds !== undefined) this.maxConcurrentBuilds = Math.max(1, options.maxConcurrentBuilds);
    if (options.buildTimeoutMs !== undefined) this.buildTimeoutMs = options.buildTimeoutMs;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.engineFormDb !== undefined) this.engineFormDb = options.engineFormDb;
    if (options.log !== undefined) this.log = options.log;
    if (options.rowsPerRead !== undefined) this.rowsPerRead = options.rowsPerRead;
    if (options.onBuildProgress !== undefined) this.onBuildProgress = options.onBuildProgress;
  }

  /** Bytes held by the kept indexes: their arrays and what queries cached in them. */
  get bytes(): number {
    return this.kept.bytes;
  }

  status(): RowIndexStoreStatus {
    const now = Date.now();
    return {
      ready: this.kept.size,
      bytes: this.kept.bytes,
      loading: this.building.size,
      rebuilding: this.rebuilding.size,
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
    const index = this.kept.get(key);
    if (index) return index;
    if (this.building.has(key) || this.tooLarge.has(key) || this.building.size >= this.maxConcurrentBuilds)
      return undefined;
    if ((this.failures.get(key)?.retryAt ?? 0) > Date.now()) return undefined;
    void this.start(db, meta);
    return undefined;
  }

  /**
   * The version's stored columns, for a query while its index is not in memory: undefined when it has no stored
   * form of the current format (or one found corrupt), or the cold path is off.
   */
  async storedColumnsFor(db: Executor, meta: VersionMeta): Promise<StoredColumns | undefined> {
    if (!this.storedColumnsOn || this.distrusted.has(keyOf(meta))) return undefined;
    return this.storedColumns.open(db, meta.rowsTable, this.storedReadTimeoutMs);
  }

  /** Time bound of one query's reads of stored columns. */
  get storedReadTimeout(): number {
    return this.storedReadTimeoutMs;
  }

  /**
   * A query found the version's engine form corrupt: it is read no more, and rebuilt in the background (the index
   * kept in memory, if any, was checked when it was loaded and stays).
   */
  reportCorrupt(db: Executor, meta: VersionMeta, error: unknown): void {
    const key = keyOf(meta);
    if (this.distrusted.has(key)) return;
    this.distrusted.add(key);
    this.storedColumns.forget(meta.rowsTable);
    this.log?.warn({ versionId: meta.versionId, err: error }, 'stored row index corrupt: rebuilding it');
    const kept = this.kept.get(key);
    this.kept.delete(key);
    this.failures.delete(key);
    void (this.building.get(key) ?? this.start(db, meta, { rebuild: true })).then((index) => {
      if (!index && kept) this.kept.keep(key, kept);
    });
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
    db: Executor,
    metaOf: (versionId: number, rowsTable: string) => Promise<VersionMeta>,
    options: { versions: number; timeoutMs: number },
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
    const outOfTime = new Promise<'timeout'>(
      (resolve) => (timer = setTimeout(() => resolve('timeout'), options.timeoutMs)),
    );
    this.warmUpEnded = Promise.race([
      loads.then(
        () => 'done' as const,
        () => 'done' as const,
      ),
      outOfTime,
    ]).then((how) => {
      clearTimeout(timer);
      this.warmedUp = true;
      this.log?.info(
        { versions: recent.length, ready: this.kept.size, seconds: (Date.now() - started) / 1000, how },
        'row index warm-up over',
      );
    });
  }

  /** Notes the version's use in the database (for the warm-up of the next instances), at most once a minute. */
  private noteUse(meta: VersionMeta): void {
    const key = keyOf(meta);
    if (!this.engineFormDb || Date.now() - (this.usesNoted.get(key) ?? 0) < 60000) return;
    this.usesNoted.set(key, Date.now());
    recordRowIndexUse(this.engineFormDb, meta.rowsTable, meta.versionId).catch((error: unknown) => {
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
    return this.kept.get(keyOf(meta)) ?? this.building.get(keyOf(meta)) ?? this.start(db, meta);
  }

  /** `ensure`, waiting at most `timeoutMs` (a query of a version whose storage is being rebuilt). */
  async ensureWithin(db: Executor, meta: VersionMeta, timeoutMs: number): Promise<RowIndex | undefined> {
    if (!this.enabled) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const outOfTime = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), timeoutMs)));
    try {
      return await Promise.race([detachedFromRequest(() => this.ensure(db, meta)), outOfTime]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Drops every index (they are built again on use, with the current settings). */
  forget(): void {
    this.kept.clear();
    this.building.clear();
    this.progress.clear();
    this.rebuilding.clear();
    this.distrusted.clear();
    this.tooLarge.clear();
    this.failures.clear();
    this.storedColumns.clear();
  }

  /**
   * The engine form, else a rebuild (from the version's row table or its Parquet copy, then stored), all within the
   * store's time bound (each read of a stored part, and the rebuild, gets what is left of it). From the engine form,
   * the index answers (through `onFacets`) as soon as its facets are in, while its values load: until then a page's
   * values are read from the stored columns. The values are not loaded when they would take the index over the
   * whole budget. An engine form of another format, or one that fails its checksums, is rebuilt.
   */
  private async load(
    db: Executor,
    meta: VersionMeta,
    key: string,
    facets: { keep: (index: RowIndex) => boolean; drop: () => void },
    rebuild: boolean,
  ): Promise<{ index: RowIndex; from: 'engine_form' | 'rows' | 'parquet' }> {
    const started = Date.now();
    const remainingMs = () => Math.max(1, this.buildTimeoutMs - (Date.now() - started));
    let reason = rebuild ? 'corrupt' : 'missing';
    if (!rebuild) {
      try {
        const stored = await loadRowIndexFacets(db, meta.rowsTable, remainingMs());
        if (stored) {
          const kept = facets.keep(stored);
          const valuesBytes = stored.size * 4 * meta.indicators.length;
          if (kept && this.indicatorValues && stored.bytes + valuesBytes <= this.kept.budgetBytes) {
            try {
              const values = await loadRowIndexValues(db, meta.rowsTable, stored.size, remainingMs());
              if (values) stored.addIndicators(values);
            } catch (error) {
              if (needsRebuild(error)) throw error;
              // The index answers already: without its values, a page's values are read from the stored columns.
              this.log?.warn(
                { versionId: meta.versionId, err: error },
                'row index values not loaded: page values come from the database',
              );
            }
          }
          return { index: stored, from: 'engine_form' };
        }
      } catch (error) {
        if (!needsRebuild(error)) throw error;
        // Facets already answering from a form whose values then failed their checksums: not served any more.
        facets.drop();
        reason = error instanceof Error ? error.message : String(error);
      }
    }
    this.rebuilding.add(key);
    this.distrusted.add(key);
    this.storedColumns.forget(meta.rowsTable);
    this.log?.info(
      { versionId: meta.versionId, reason },
      'row index engine form missing, stale or corrupt: rebuilding it',
    );
    try {
      const rebuild = this.rebuildQueue.then(() =>
        rebuildEngineForm(db, this.engineFormDb, meta, {
          timeoutMs: remainingMs(),
          indicators: this.indicatorValues,
          maxBytes: this.kept.budgetBytes,
          rowsPerRead: this.rowsPerRead,
          onProgress: async (rows, total) => {
            this.progress.set(key, rows);
            await this.onBuildProgress?.(rows, total);
          },
          log: this.log,
        }),
      );
      this.rebuildQueue = rebuild.catch(() => undefined);
      const { index, from } = await rebuild;
      this.distrusted.delete(key);
      this.storedColumns.forget(meta.rowsTable);
      return { index, from };
    } finally {
      this.rebuilding.delete(key);
    }
  }

  /**
   * Keeps a loaded index when it fits the budget (else the version stays on the stored columns or SQL, and is not
   * loaded again), and counts the load's outcome: from then on it answers.
   */
  private keep(meta: VersionMeta, index: RowIndex, from: 'engine_form' | 'rows' | 'parquet'): boolean {
    const key = keyOf(meta);
    if (!this.kept.keep(key, index)) {
      this.tooLarge.add(key);
      this.outcomes.too_large++;
      this.log?.warn(
        { versionId: meta.versionId, bytes: index.partsBytes },
        'row index larger than QUERY_INDEX_MEMORY_MB: not kept',
      );
      return false;
    }
    this.outcomes[from]++;
    return true;
  }

  private start(db: Executor, meta: VersionMeta, options: { rebuild?: boolean } = {}): Promise<RowIndex | undefined> {
    const key = keyOf(meta);
    const started = Date.now();
    this.log?.info({ versionId: meta.versionId, rowsTable: meta.rowsTable }, 'row index loading');
    let kept: boolean | undefined;
    // Not bound by the deadline of the request that started it: the load has its own (buildTimeoutMs).
    const facets = {
      keep: (index: RowIndex) => (kept = this.keep(meta, index, 'engine_form')),
      drop: () => {
        if (kept) this.kept.delete(key);
        kept = undefined;
      },
    };
    const load = () => this.load(db, meta, key, facets, options.rebuild === true);
    const promise = detachedFromRequest(load).then(
      ({ index, from }) => {
        this.building.delete(key);
        this.progress.delete(key);
        this.failures.delete(key);
        // Kept when its facets came in (from the engine form), or now (rebuilt); too large: not kept.
        if (kept === undefined) kept = this.keep(meta, index, from);
        if (!kept) return undefined;
        // Sized again in the budget now that its values are in.
        this.kept.resize(key, index);
        this.log?.info(
          {
            versionId: meta.versionId,
            rows: index.size,
            bytes: index.bytes,
            values: index.hasIndicators(meta.indicators.map((i) => i.column)),
            from,
            seconds: (Date.now() - started) / 1000,
          },
          'row index ready',
        );
        return index;
      },
      (error: unknown) => {
        this.building.delete(key);
        this.progress.delete(key);
        // Facets kept from an engine form whose values then failed their checksums: not served.
        if (kept) this.kept.delete(key);
        // Estimated over the budget: that version stays on the stored columns or SQL. Any other failure (its time
        // bound, the database lost, no Parquet copy) is tried again after a wait that doubles with each failure.
        if (error instanceof RowIndexTooLargeError) {
          this.tooLarge.add(key);
          this.outcomes.too_large++;
          this.log?.warn(
            { versionId: meta.versionId },
            'row index would not fit QUERY_INDEX_MEMORY_MB: the version stays on the stored columns or SQL',
          );
          return undefined;
        }
        const attempts = (this.failures.get(key)?.attempts ?? 0) + 1;
        const waitMs = this.retryAfterMs * 2 ** Math.min(attempts - 1, 5);
        this.failures.set(key, { attempts, retryAt: Date.now() + waitMs });
        this.outcomes.failed++;
        this.log?.warn(
          {
            versionId: meta.versionId,
            attempts,
            retryInMs: waitMs,
            seconds: (Date.now() - started) / 1000,
            err: error,
          },
          'row index load failed; queries stay on the stored columns or SQL until the next attempt',
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
