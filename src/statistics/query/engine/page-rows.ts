import type { ByteSink } from './json-bytes.js';

/**
 * A page's rows as the writer reads them, per row number: from the row index (positions into its columns) or rows
 * read from PostgreSQL (the SQL engine, or the index's page with values it does not hold).
 */
export interface PageRows {
  count: number;
  timePeriodId(r: number): number;
  levelCode(r: number): string;
  /** The ids of a location or filter column (0 or NaN: none). */
  idsOf(column: string): (r: number) => number;
  /**
   * Per row, what `byId` holds for its id of a location or filter column, where the rows hold ids as dictionary codes
   * (the row index): `byId` is read once per code, not once per row.
   */
  byIdOf?<T>(column: string, byId: ReadonlyMap<number, T>): (r: number) => T | undefined;
  /** The raw texts of an indicator column ('' for none). */
  textsOf(column: string): (r: number) => string;
  /**
   * An indicator column's numbers, where the rows hold them as numbers (the row index): NaN where a row holds a text
   * instead, which `textsOf` gives. Spares a writer that wants numbers a text per value made and parsed back.
   */
  numbersOf?(column: string): (r: number) => number;
  /** The same texts as JSON string literals written as bytes, where the rows can do so without making the texts. */
  jsonLiteralsOf?(column: string): JsonLiterals;
}

/** An indicator column's values as JSON string literals, written into a page's bytes (json-output.ts). */
export interface JsonLiterals {
  /** The most bytes one literal takes: the writer reserves that much room before `put`. */
  maxBytes: number;
  /** Writes row r's literal (quotes included) at the sink's end. */
  put(sink: ByteSink, r: number): void;
}

/** Rows read from PostgreSQL (or put together from the index and PostgreSQL), keyed by column name. */
export function databasePageRows(rows: ReadonlyArray<Record<string, unknown>>): PageRows {
  return {
    count: rows.length,
    timePeriodId: (r) => Number(rows[r]!.time_period_id),
    levelCode: (r) => String(rows[r]!.geographic_level),
    idsOf: (column) => (r) => Number(rows[r]![column]),
    textsOf: (column) => (r) => {
      const value = rows[r]![column];
      return value === null || value === undefined ? '' : (value as number).toString();
    },
  };
}
