/**
 * What every query engine does, whatever holds the version's rows: count the rows a resolved query matches, find one
 * page of them, and walk all of them a page at a time (an export). An engine is made for one version (`EngineContext`)
 * and chosen per query (choose.ts); the service writes what it returns as JSON or CSV. The engines: the in-memory
 * row index (index/), the version's stored columns read slice by slice (stored/, the cold path), and SQL over a row
 * table (sql/).
 */
import type { Db } from '../../../db/database.js';
import type { VersionMeta } from './model.js';
import type { PageRows } from './page-rows.js';
import type { ResolvedQuery } from './resolve.js';

/** The total of a query and the rows of one page of it, in result order. */
export interface EnginePage {
  total: number;
  rows: PageRows;
}

export interface PagesOptions {
  /** The export's time bound (QUERY_CSV_TIMEOUT_MS): a walk past it fails with `ExportTimeBoundError`. */
  timeoutMs?: number;
  /** Fires when the client is gone: the walk stops at once. */
  signal?: AbortSignal;
}

export interface QueryEngine {
  /** What answers (the `x-query-engine` header): index, stored or sql. */
  readonly name: string;
  count(query: ResolvedQuery): Promise<number>;
  /** The total and the rows `offset` … `offset + limit - 1` of the result. */
  page(query: ResolvedQuery, offset: number, limit: number): Promise<EnginePage>;
  /** Every matching row in result order, at most `size` a page; each page is read only when asked for. */
  pages(query: ResolvedQuery, size: number, options?: PagesOptions): AsyncIterable<PageRows>;
}

/** One version as an engine sees it: where to read and what its ids mean. */
export interface EngineContext {
  db: Db;
  meta: VersionMeta;
}

/** The export's own time bound ran out (code: as PostgreSQL's on SQL, so one handler reports both). */
export class ExportTimeBoundError extends Error {
  readonly code = '57014';
}

/** Pages of an engine that holds the matching positions, checked against the time bound and the client between pages. */
export async function* boundedPages(
  pages: AsyncIterable<PageRows> | Iterable<PageRows>,
  options: PagesOptions = {},
): AsyncGenerator<PageRows> {
  const deadline = Date.now() + (options.timeoutMs ?? Infinity);
  for await (const page of pages) {
    if (options.signal?.aborted) return;
    if (Date.now() > deadline) throw new ExportTimeBoundError('The export ran past its time bound');
    yield page;
  }
}
