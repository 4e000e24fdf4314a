/**
 * The one CSV formula rule of every CSV this service writes (the query CSV, the explorer's "Download this table"):
 * a cell that a spreadsheet would run as a formula (CSV injection) is neutralised. No imports, so the explorer's
 * browser bundle takes this very function. The stored original file (`GET /v1/data-sets/{id}/csv`) is the
 * publisher's file byte for byte and is not rewritten (docs/compatibility.md).
 */

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Neutralises spreadsheet formulas (CSV injection): a cell starting with `=`, `+`, `-`, `@`, tab or carriage return
 * gets a leading `'`, unless it is a plain number such as `-5` or `+1.2`, which spreadsheets must keep as numbers.
 */
export function escapeFormula(cell: string): string {
  if (cell === '' || !'=+-@\t\r'.includes(cell[0]!) || NUMBER.test(cell)) return cell;
  return `'${cell}`;
}
