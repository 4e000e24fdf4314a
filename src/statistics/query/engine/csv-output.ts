import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';
import { withCursorAbort, type Db } from '../../../db/database.js';
import type { ResolvedQuery } from './resolve.js';
import { chooseEngine } from './execute.js';
import { databasePageRows, indexedPageRows, type PageRows } from './json-output.js';
import { csvHeader, csvRecords, resultColumns } from './results.js';
import type { RowIndex } from './row-index.js';
import type { RowIndexStore } from './row-index-store.js';
import { setTransactionStatementTimeout, streamMatchingRows } from './repository.js';
import type { VersionMeta } from './version-meta-cache.js';

/** Rows fetched per cursor round trip: bounds memory whatever the number of matching rows. */
const CURSOR_CHUNK = 2000;

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Neutralises spreadsheet formulas (CSV injection): a cell starting with `=`, `+`, `-`, `@`, tab or carriage return
 * gets a leading `'`, unless it is a plain number such as `-5` or `+1.2`, which spreadsheets must keep as numbers.
 */
export function escapeFormula(cell: string): string {
  if (cell === '' || !'=+-@\t\r'.includes(cell[0]!) || NUMBER.test(cell)) return cell;
  return `'${cell}`;
}

export interface QueryCsvOptions {
  /**
   * The export's own statement bound (QUERY_CSV_TIMEOUT_MS). A cursor stream is one statement for as long as the
   * client takes to read it, so the per-statement limit of single queries (DATABASE_STATEMENT_TIMEOUT_MS) would
   * cut any export slower than it; stalled readers are dropped separately (STREAM_STALL_TIMEOUT_MS).
   */
  timeoutMs?: number;
  /** Counts the rows written (for the log line of an export that stops early). */
  onRows?: (rows: number) => void;
  /** Fires when the client is gone: a cursor read still waiting (a slow first chunk) is abandoned at once. */
  signal?: AbortSignal;
}

/** The CSV export's own time bound ran out on the index or the stored columns (code: as PostgreSQL's on SQL). */
class ExportTimeBoundError extends Error {
  readonly code = '57014';
}

/**
 * Every matching row of a query (not one page), in result order, as CSV records with labels: from the version's
 * row index or stored columns (the engine a page of the query would have) in pages of CURSOR_CHUNK rows, checked
 * against the export's time bound and the client between pages; else through a database cursor in a read-only
 * transaction of its own, whose `statement_timeout` is the export's bound.
 */
export async function* queryCsvRecords(
  db: Db, meta: VersionMeta, query: ResolvedQuery, options: QueryCsvOptions & { rowIndexes?: RowIndexStore } = {},
): AsyncGenerator<string[]> {
  let rows = 0;
  for await (const page of matchingPages(db, meta, query, options)) {
    for (const record of csvRecords(meta, query, page)) yield record.map(escapeFormula);
    rows += page.count;
    options.onRows?.(rows);
  }
}

export async function* matchingPages(db: Db, meta: VersionMeta, query: ResolvedQuery, options: QueryCsvOptions & { rowIndexes?: RowIndexStore }): AsyncGenerator<PageRows> {
  const engine = await chooseEngine(db, meta, query, options.rowIndexes, { valuesFromIndex: true });
  if (engine.kind !== 'sql') {
    const deadline = Date.now() + (options.timeoutMs ?? Infinity);
    const pages =
      engine.kind === 'index'
        ? indexPages(engine.index, query)
        : engine.stored.matchingPages(db, engine.timeoutMs, query.predicate, query.sorts, query.indicators.map((i) => i.column), CURSOR_CHUNK);
    for await (const page of pages) {
      if (options.signal?.aborted) return;
      if (Date.now() > deadline) throw new ExportTimeBoundError('The CSV export ran past its time bound');
      yield page;
    }
    return;
  }
  const trx = await db.startTransaction().setAccessMode('read only').execute();
  let finished = false;
  try {
    if (options.timeoutMs) await setTransactionStatementTimeout(trx, options.timeoutMs);
    const chunks = streamMatchingRows(trx, meta.rowsTable, query, resultColumns(meta, query), CURSOR_CHUNK);
    const signal = options.signal ?? new AbortController().signal;
    try {
      while (true) {
        const step = await withCursorAbort(signal, () => chunks.next());
        if (step.done) break;
        yield databasePageRows(step.value.rows as Array<Record<string, unknown>>);
      }
    } finally {
      await chunks.return?.();
    }
    await trx.commit().execute();
    finished = true;
  } finally {
    // Abandoned (client gone, stalled, failed): the cursor is closed by now; end the transaction, give the connection back.
    if (!finished) await trx.rollback().execute().catch(() => {});
  }
}

/** The matching rows of the in-memory index, CURSOR_CHUNK at a time. */
function* indexPages(index: RowIndex, query: ResolvedQuery): Generator<PageRows> {
  const positions = index.matchingPositions(query.predicate, query.sorts);
  for (let at = 0; at < positions.length; at += CURSOR_CHUNK) yield indexedPageRows(index, positions.subarray(at, at + CURSOR_CHUNK));
}

/**
 * Streams the CSV of a query: its pages of rows (queryCsvRecords) → csv-stringify → the response, with back-pressure all the way
 * (a page is read only as fast as the client takes the bytes). It takes one of the app's export slots (429 or
 * 503 when none is free) for as long as the response is open. A failure mid-stream (the export's time bound, the
 * database lost) is logged and aborts the response, so the client sees an incomplete transfer, never a CSV that
 * looks complete.
 */
export function streamQueryCsv(db: Db, meta: VersionMeta, query: ResolvedQuery, reply: FastifyReply, rowIndexes?: RowIndexStore): FastifyReply {
  const limits = reply.server.streaming;
  const release = limits ? limits.exports.acquire(reply.request.ip) : () => {};
  const gone = new AbortController();
  reply.raw.once('close', () => {
    release();
    gone.abort();
  });
  // Header cells are labels from the meta file, as open to formula tricks as the data cells.
  const csv = stringify({ header: true, columns: csvHeader(meta, query).map(escapeFormula) });
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', 'attachment; filename="query.csv"');
  let rows = 0;
  const records = queryCsvRecords(db, meta, query, { timeoutMs: limits?.queryCsvTimeoutMs, onRows: (n) => (rows = n), signal: gone.signal, rowIndexes });
  pipeline(Readable.from(records), csv).catch((error: unknown) => {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_STREAM_PREMATURE_CLOSE' || reply.raw.destroyed) {
      reply.log.info({ rows }, 'CSV query export abandoned by the client');
    } else {
      const reason = code === '57014' ? `stopped by its time bound (QUERY_CSV_TIMEOUT_MS=${limits?.queryCsvTimeoutMs} ms)` : 'failed';
      reply.log.error({ err: error, rows }, `CSV query export ${reason} after ${rows} rows; the response is cut off`);
    }
    csv.destroy(error as Error);
  });
  return reply.send(csv);
}
