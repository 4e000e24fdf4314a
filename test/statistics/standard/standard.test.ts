import { describe, expect, it } from 'vitest';
import {
  parseVersionNumber,
  formatVersionNumber,
  versionType,
} from '../../../src/statistics/standard/version-numbers.js';
import {
  apiPeriodFromCsv,
  compareTimePeriods,
  timeIdentifierByCsvLabel,
  timePeriodLabel,
} from '../../../src/statistics/standard/time-periods.js';
import { geographicLevelByCsvLabel } from '../../../src/statistics/standard/geographic-levels.js';
import { encodePublicId } from '../../../src/statistics/import/public-ids.js';

describe('the data file standard', () => {
  it('reads time periods in the CSV form', () => {
    expect(apiPeriodFromCsv('202021')).toBe('2020/2021');
    expect(apiPeriodFromCsv('199900')).toBe('1999/2000');
    expect(apiPeriodFromCsv('2020')).toBe('2020');
    for (const bad of ['202022', '20201', '2020/21', 'abcd', '']) expect(apiPeriodFromCsv(bad)).toBeUndefined();
  });

  it('labels time periods as the API does', () => {
    expect(timePeriodLabel('2020/2021', 'AY')).toBe('2020/21');
    expect(timePeriodLabel('2020/2021', 'T1')).toBe('2020/21 Autumn term');
    expect(timePeriodLabel('2020/2021', 'AYQ1')).toBe('2020/21 Q1');
    expect(timePeriodLabel('2020', 'CY')).toBe('2020');
    expect(timePeriodLabel('2020', 'CYQ3')).toBe('2020 Q3');
    expect(timePeriodLabel('2020/2021', 'FY')).toBe('2020-21');
    expect(timePeriodLabel('2020/2021', 'P2')).toBe('2020-21 Part 2 (Oct to Mar)');
    expect(timePeriodLabel('2019/2020', 'TY')).toBe('2019-20');
    expect(timePeriodLabel('1999/2000', 'AY')).toBe('1999/00');
    expect(timePeriodLabel('2022', 'W37')).toBe('2022 Week 37');
    expect(timePeriodLabel('2020', 'M1')).toBe('2020 January');
    expect(timePeriodLabel('2020', 'RY')).toBe('2020');
  });

  it('orders time periods by period string, then identifier order', () => {
    const periods = [
      { period: '2020/2021', code: 'AY' },
      { period: '2020', code: 'M1' },
      { period: '2020', code: 'W52' },
      { period: '2020/2021', code: 'T1' },
      { period: '2020', code: 'CY' },
    ];
    expect([...periods].sort(compareTimePeriods).map((p) => `${p.period}|${p.code}`)).toEqual([
      '2020|CY',
      '2020|W52',
      '2020|M1',
      '2020/2021|T1',
      '2020/2021|AY',
    ]);
  });

  it('matches time identifier and level labels case-insensitively', () => {
    expect(timeIdentifierByCsvLabel('academic year')?.code).toBe('AY');
    expect(timeIdentifierByCsvLabel('Week 53')).toBeUndefined();
    expect(timeIdentifierByCsvLabel('Part 1 (April to September)')?.code).toBe('P1');
    expect(geographicLevelByCsvLabel('local authority')?.code).toBe('LA');
    expect(geographicLevelByCsvLabel('RSC region')?.nameColumn).toBe('rsc_region_lead_name');
    expect(geographicLevelByCsvLabel('Nation')).toBeUndefined();
  });

  it('encodes public ids as the reference', () => {
    expect([0, 1, 2, 3, 4, 5, 10, 15, 100, 1000].map(encodePublicId)).toEqual([
      '9U4vZ',
      'dP0Zw',
      'O7CLF',
      '7zXob',
      'pTSoj',
      'IzBzg',
      'HTzLj',
      'BT7J3',
      'UhYRF',
      '67vrf',
    ]);
  });

  it('parses version numbers and derives their type', () => {
    expect(parseVersionNumber('2.1')).toEqual({ major: 2, minor: 1, patch: 0 });
    expect(parseVersionNumber('2.1.3')).toEqual({ major: 2, minor: 1, patch: 3 });
    for (const bad of ['0.1', '1', '1.x', 'v1.0', '1.0.0.0', '']) expect(parseVersionNumber(bad)).toBeUndefined();
    expect(formatVersionNumber({ major: 2, minor: 1, patch: 0 })).toBe('2.1');
    expect(formatVersionNumber({ major: 2, minor: 1, patch: 3 })).toBe('2.1.3');
    expect([
      versionType({ major: 1, minor: 0, patch: 0 }),
      versionType({ major: 1, minor: 2, patch: 0 }),
      versionType({ major: 1, minor: 2, patch: 1 }),
    ]).toEqual(['Major', 'Minor', 'Patch']);
  });
});
