import { describe, expect, it } from 'vitest';
import { escapeFormula } from '../../../src/statistics/query/csv.js';

describe('CSV formula escaping', () => {
  it.each([
    ['=HYPERLINK("http://x","y")', `'=HYPERLINK("http://x","y")`],
    ['+cmd|calc', `'+cmd|calc`],
    ['-2+3', `'-2+3`],
    ['@SUM(A1)', `'@SUM(A1)`],
    ['\tx', `'\tx`],
  ])('prefixes %j', (cell, expected) => {
    expect(escapeFormula(cell)).toBe(expected);
  });

  it.each(['-5', '+1.2', '-0.5e3', '12', 'x', 'Bristol, City of', '', 'c', '-.5'])('keeps %j as it is', (cell) => {
    expect(escapeFormula(cell)).toBe(cell);
  });
});
