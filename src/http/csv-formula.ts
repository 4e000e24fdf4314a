const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Neutralises spreadsheet formulas (CSV injection): a cell starting with `=`, `+`, `-`, `@`, tab or carriage return
 * gets a leading `'`, unless it is a plain number such as `-5` or `+1.2`, which spreadsheets must keep as numbers.
 */
export function escapeFormula(cell: string): string {
  if (cell === '' || !'=+-@\t\r'.includes(cell[0]!) || NUMBER.test(cell)) return cell;
  return `'${cell}`;
}
