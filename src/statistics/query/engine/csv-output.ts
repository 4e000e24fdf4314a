import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';
import { withCursorAbort, type Db } from '../../../db/database.js';
import type { ResolvedQuery } from './resolve.js';
import { csvHeader, csvRow, resultColumns } from './results.js';
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

/**
 * Every matching row of a query (not one page), in result order, as CSV records with labels: a database cursor in
 * a read-only transaction of its own, whose `statement_timeout` is the export's bound.
 */
export async function* queryCsvRecords(db: Db, meta: VersionMeta, query: ResolvedQuery, options: QueryCsvOptions = {}): AsyncGenerator<string[]> {
  const trx = await db.startTransaction().setAccessMode('read only').execute();
  let finished = false;
  try {
    if (options.timeoutMs) await setTransactionStatementTimeout(trx, options.timeoutMs);
    let rows = 0;
    const chunks = streamMatchingRows(trx, meta.rowsTable, query, resultColumns(meta, query), CURSOR_CHUNK);
    const signal = options.signal ?? new AbortController().signal;
    try {
      while (true) {
        const step = await withCursorAbort(signal, () => chunks.next());
        if (step.done) break;
        for (const row of step.value.rows) yield csvRow(meta, query, row as Record<string, unknown>).map(escapeFormula);
        rows += step.value.rows.length;
        options.onRows?.(rows);
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

/**
 * Streams the CSV of a query: a database cursor → csv-stringify → the response, with back-pressure all the way
 * (the cursor is read only as fast as the client takes the bytes). It takes one of the app's export slots (429 or
 * 503 when none is free) for as long as the response is open. A failure mid-stream (the export's time bound, the
 * database lost) is logged and aborts the response, so the client sees an incomplete transfer, never a CSV that
 * looks complete.
 */
export function streamQueryCsv(db: Db, meta: VersionMeta, query: ResolvedQuery, reply: FastifyReply): FastifyReply {
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
  const records = queryCsvRecords(db, meta, query, { timeoutMs: limits?.queryCsvTimeoutMs, onRows: (n) => (rows = n), signal: gone.signal });
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
