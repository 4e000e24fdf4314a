/**
 * Building row indexes and keeping them: built in the background on first use, cached per version and evicted
 * least-recently-used under a memory budget; while one builds, queries go to SQL.
 */
import { LRUCache } from 'lru-cache';
import type { Executor } from '../../../db/database.js';
import { locationColumn } from '../../standard/geographic-levels.js';
import { countAllRows, streamRowsInDefaultOrder } from './repository.js';
import { RowIndex, type IndicatorColumn } from './row-index.js';
import type { VersionMeta } from './version-meta-cache.js';

/** The facet columns the index holds for a version. */
function indexColumns(meta: VersionMeta): string[] {
  return ['time_period_id', ...meta.locationLevels.map(locationColumn), ...meta.filters.map((f) => f.column)];
}

/** A build refused before it read any row: its estimated size alone is over the budget. */
export class RowIndexTooLargeError extends Error {}

/**
 * The least an index of `rows` rows takes: 4 bytes per row for the id, the level and each facet column, 8 per
 * indicator value (its postings and text values come on top, as queries use them).
 */
function estimatedIndexBytes(rows: number, facetColumns: number, indicatorColumns: number): number {
  return rows * (4 * (facetColumns + 2) + 8 * indicatorColumns);
}

/**
 * Reads a version's facet columns in default result order through a cursor, into typed arrays. Counts the rows
 * first, and refuses (RowIndexTooLargeError) before reading them when the estimate exceeds `maxBytes`.
 */
export async function buildRowIndex(
  db: Executor, meta: VersionMeta, options: { indicators?: boolean; maxBytes?: number } = {},
): Promise<RowIndex> {
  const columns = indexColumns(meta);
  const indicatorColumns = options.indicators === false ? [] : meta.indicators.map((i) => i.column);
  const n = await countAllRows(db, meta.rowsTable);
  if (options.maxBytes !== undefined && estimatedIndexBytes(n, columns.length, indicatorColumns.length) > options.maxBytes) {
    throw new RowIndexTooLargeError(`An index of ${meta.rowsTable} would not fit the memory budget`);
  }
  const ids = new Int32Array(n);
  const arrays = new Map<string, Int32Array>(columns.map((c) => [c, new Int32Array(n)]));
  arrays.set('geographic_level', new Int32Array(n));
  const levelCodes: string[] = [];
  const levelIndex = new Map<string, number>();
  const indicators = new Map<string, IndicatorColumn>(indicatorColumns.map((c) => [c, { numbers: new Float64Array(n), texts: new Map() }]));
  const indicatorTargets = [...indicators];
  const targets = columns.map((c) => [c, arrays.get(c)!] as const);
  const levels = arrays.get('geographic_level')!;
  let p = 0;
  for await (const chunk of streamRowsInDefaultOrder(db, meta.rowsTable, ['id', 'geographic_level', ...columns, ...indicatorColumns], 10000)) {
    for (const row of chunk.rows) {
      if (p >= n) break;
      ids[p] = Number(row.id);
      const code = String(row.geographic_level);
      let level = levelIndex.get(code);
      if (level === undefined) {
        level = levelCodes.length;
        levelCodes.push(code);
        levelIndex.set(code, level);
      }
      levels[p] = level;
      for (const [name, target] of targets) target[p] = Number(row[name] ?? 0);
      for (const [name, target] of indicatorTargets) {
        const raw = row[name] === null || row[name] === undefined ? '' : String(row[name]);
        const number = Number(raw);
        if (raw !== '' && String(number) === raw) target.numbers[p] = number;
        else target.texts.set(p, raw);
      }
      p++;
    }
  }
  if (p !== n) throw new Error(`Row table ${meta.rowsTable} changed while its index was built`);
  return new RowIndex(ids, arrays, levelCodes, indicators);
}

// ---------------------------------------------------------------------------------------------------------------
// Per-version cache with a memory budget.

export interface RowIndexStoreOptions {
  /** Memory for all indexes together; least recently used are evicted beyond it. 0 turns the index off. */
  memoryBudgetBytes?: number;
  /** `false` sends every query to SQL. */
  enabled?: boolean;
  /** `false` builds indexes without the indicator values (less memory; page values are then read by row id). */
  indicatorValues?: boolean;
  /** Builds at once (each reads a whole row table); a query finding them all busy goes to SQL. Default 2. */
  maxConcurrentBuilds?: number;
}

/**
 * The row indexes of one app, per version, under a memory budget. One store per app (not per process), so two apps
 * on two databases — whose versions can share ids and table names — never answer from each other's rows. A version's
 * rows table is written once by its import and never reloaded, so an index never goes stale.
 */
export class RowIndexStore {
  /** Built indexes, least recently used evicted beyond the budget (each sized by its bytes). */
  private ready: LRUCache<string, RowIndex>;
  /** Indexes being built: not yet sized, so not in `ready`. */
  private readonly building = new Map<string, Promise<RowIndex | undefined>>();
  /** Versions whose index would not fit the budget at all: they stay on SQL, and are not built again. */
  private readonly tooLarge = new Set<string>();
  private memoryBudgetBytes = 1024 * 1024 * 1024;
  private enabled = true;
  private indicatorValues = true;
  private maxConcurrentBuilds = 2;

  constructor(options: RowIndexStoreOptions = {}) {
    this.ready = this.newCache();
    this.configure(options);
  }

  private newCache(): LRUCache<string, RowIndex> {
    return new LRUCache<string, RowIndex>({ maxSize: Math.max(1, this.memoryBudgetBytes), sizeCalculation: (index) => Math.max(1, index.bytes) });
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
    if (options.indicatorValues !== undefined) this.indicatorValues = options.indicatorValues;
    if (options.maxConcurrentBuilds !== undefined) this.maxConcurrentBuilds = Math.max(1, options.maxConcurrentBuilds);
  }

  /** Bytes held by the built indexes (as sized when last used). */
  get bytes(): number {
    return this.ready.calculatedSize;
  }

  /**
   * The version's index when it is ready; otherwise starts building it (once per version, and only while fewer than
   * `maxConcurrentBuilds` are building) and returns undefined.
   */
  async indexFor(db: Executor, meta: VersionMeta): Promise<RowIndex | undefined> {
    if (!this.enabled) return undefined;
    const index = this.readyIndex(meta);
    if (index) return index;
    const key = keyOf(meta);
    if (!this.building.has(key) && !this.tooLarge.has(key) && this.building.size < this.maxConcurrentBuilds) void this.start(db, meta);
    return undefined;
  }

  /** Versions whose index is being built now. */
  get buildsInProgress(): number {
    return this.building.size;
  }

  /** The version's index, waiting for it to be built (tests, benchmarks, warm-up). */
  async ensure(db: Executor, meta: VersionMeta): Promise<RowIndex | undefined> {
    if (this.tooLarge.has(keyOf(meta))) return undefined;
    return this.readyIndex(meta) ?? this.building.get(keyOf(meta)) ?? this.start(db, meta);
  }

  /** Drops every index (they are built again on use, with the current settings). */
  forget(): void {
    this.ready.clear();
    this.building.clear();
    this.tooLarge.clear();
  }

  /** A built index, its size brought up to date (postings are added as queries use them). */
  private readyIndex(meta: VersionMeta): RowIndex | undefined {
    const key = keyOf(meta);
    const index = this.ready.get(key);
    if (index && this.ready.info(key)?.size !== Math.max(1, index.bytes)) this.ready.set(key, index);
    return index;
  }

  private start(db: Executor, meta: VersionMeta): Promise<RowIndex | undefined> {
    const key = keyOf(meta);
    const promise = buildRowIndex(db, meta, { indicators: this.indicatorValues, maxBytes: this.memoryBudgetBytes }).then(
      (index) => {
        this.building.delete(key);
        // An index larger than the whole budget is not kept: that version stays on SQL.
        if (index.bytes > this.memoryBudgetBytes) {
          this.tooLarge.add(key);
          return undefined;
        }
        this.ready.set(key, index);
        return index;
      },
      (error: unknown) => {
        this.building.delete(key);
        // Estimated over the budget: that version stays on SQL. Any other failure (e.g. the table went away) is
        // retried by a later query.
        if (error instanceof RowIndexTooLargeError) this.tooLarge.add(key);
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
