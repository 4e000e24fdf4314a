import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify';
import type { FastifyReply } from 'fastify';
import type { Executor } from '../../db/database.js';
import type { ResolvedQuery } from './resolve.js';
import { csvHeader, csvRow, resultColumns } from './results.js';
import { allRowsSql } from './sql.js';
import type { VersionMeta } from './version-meta.js';

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

/** Every matching row of a query (not one page), in result order, as CSV records with labels. */
export async function* queryCsvRecords(db: Executor, meta: VersionMeta, query: ResolvedQuery): AsyncGenerator<string[]> {
  const compiled = allRowsSql(meta.rowsTable, query.predicate, query.sorts, resultColumns(meta, query)).compile(db);
  for await (const chunk of db.getExecutor().stream(compiled, CURSOR_CHUNK)) {
    for (const row of chunk.rows) yield csvRow(meta, query, row as Record<string, unknown>).map(escapeFormula);
  }
}

/**
 * Streams the CSV of a query: a database cursor → csv-stringify → the response, with back-pressure all the way
 * (the cursor is read only as fast as the client takes the bytes). A failure mid-stream aborts the response.
 */
export function streamQueryCsv(db: Executor, meta: VersionMeta, query: ResolvedQuery, reply: FastifyReply): FastifyReply {
  const csv = stringify({ header: true, columns: csvHeader(meta, query) });
  reply.header('content-type', 'text/csv; charset=utf-8');
  reply.header('content-disposition', 'attachment; filename="query.csv"');
  pipeline(Readable.from(queryCsvRecords(db, meta, query)), csv).catch((error: unknown) => {
    reply.log.error({ err: error }, 'CSV query export failed');
    csv.destroy(error as Error);
  });
  return reply.send(csv);
}
