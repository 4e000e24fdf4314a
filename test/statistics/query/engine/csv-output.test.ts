import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { escapeFormula } from '../../../../src/statistics/csv-formula.js';
import { buildTestApp, type TestApp } from '../../../helpers/app.js';
import { ABSENCE_SCHOOL } from '../../../helpers/statistics.js';

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

describe('the query CSV', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
    // Labels come from the publisher's meta file; here two that a spreadsheet would run as formulas.
    await t.database.db
      .updateTable('version_filters')
      .set({ label: '=HYPERLINK("http://x","y")' })
      .where('label', '=', 'School type')
      .execute();
    await t.database.db
      .updateTable('version_indicators')
      .set({ label: '@cmd' })
      .where('public_id', '=', 'dP0Zw')
      .execute();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('escapes formulas in header cells as in data cells', async () => {
    const response = await t.app.inject({
      url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?geographicLevels.eq=NAT&filters.eq=HTzLj&indicators=dP0Zw`,
      headers: { accept: 'text/csv' },
    });
    expect(response.statusCode).toBe(200);
    const header = response.body.split('\n')[0]!;
    expect(header).toContain(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(header.endsWith(`,'@cmd`)).toBe(true);
    expect(header).not.toMatch(/(^|,)[=@]/);
  });
});
