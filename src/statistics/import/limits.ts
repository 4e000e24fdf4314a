/**
 * What one import accepts at most (docs/operations.md, "Import limits"). Each is checked as the files are read, before
 * the rows are (the header, the meta file) or at the row that passes it, so that a file beyond them is refused with
 * its file and line within seconds, and an import's memory is bounded whatever the file holds.
 */
export const IMPORT_LIMITS = {
  /** Characters of one line (of a record: a quoted field may hold line breaks). */
  lineChars: 1_048_576,
  /** Bytes (UTF-8) of one cell. */
  cellBytes: 1000,
  /** Columns of the data file's header. */
  dataColumns: 1000,
  /** Rows of the meta file (it describes the data file's columns). */
  metaRows: 1000,
  /** Indicators the meta file describes. */
  indicators: 500,
  /** Filters the meta file describes. */
  filters: 100,
  /** Options (distinct labels) of one filter. */
  filterOptions: 50_000,
  /** Data rows × indicators: the indicator cells the import holds while it reads the rows. */
  indicatorCells: 200_000_000,
} as const;

/** "1,000" for the messages. */
export function formatLimit(value: number): string {
  return value.toLocaleString('en-GB');
}
