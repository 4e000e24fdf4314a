import { describe, expect, it } from 'vitest';
import type { Meta, ResultRow } from '../../../src/explorer/client/api.js';
import { describeChangeSet } from '../../../src/explorer/client/changes.js';
import { axisLabel, buildChartData, niceTicks, xLabels } from '../../../src/explorer/client/chart.js';
import { formatValue } from '../../../src/explorer/client/format.js';
import { chartTotals, warningText } from '../../../src/explorer/client/pages/query.js';
import { emptyState } from '../../../src/explorer/client/query.js';

const meta: Meta = {
  filters: [
    {
      id: 'F1',
      column: 'ethnicity',
      label: 'Ethnicity',
      hint: '',
      options: [
        { id: 'o1', label: 'White - Irish' },
        { id: 'o2', label: 'Total' },
      ],
    },
    {
      id: 'F2',
      column: 'school',
      label: 'School type',
      hint: '',
      options: [
        { id: 's1', label: 'Primary' },
        { id: 's2', label: 'Secondary' },
      ],
    },
  ],
  indicators: [{ id: 'I1', column: 'headcount', label: 'Headcount', unit: '', decimalPlaces: 0 }],
  geographicLevels: [{ code: 'LA', label: 'Local authority' }],
  locations: [
    {
      level: { code: 'LA', label: 'Local authority' },
      options: [
        { id: 'L1', label: 'Barnet' },
        { id: 'L2', label: 'Barnsley' },
      ],
    },
  ],
  timePeriods: [
    { code: 'AY', period: '2020/2021', label: '2020/21' },
    { code: 'AY', period: '2021/2022', label: '2021/22' },
  ],
};

const row = (period: string, la: string, school: string, value: string): ResultRow => ({
  timePeriod: { period, code: 'AY' },
  geographicLevel: 'LA',
  locations: { LA: la },
  filters: { F1: 'o1', F2: school },
  values: { I1: value },
});

describe('explorer views', () => {
  it('describes changes in words', () => {
    expect(
      describeChangeSet({
        filterOptions: [
          {
            filter: { id: 'F', column: 'phase', label: 'School type', hint: '' },
            options: [{ previousState: { id: 'x', label: 'Pupil referral unit' } }],
          },
        ],
        timePeriods: [{ currentState: { code: 'AY', period: '2021/2022', label: '2021/22' } }],
        locationOptions: [
          {
            level: { code: 'LA', label: 'Local authority' },
            options: [{ currentState: { id: 'n', label: 'North Northamptonshire' } }],
          },
        ],
        indicators: [
          {
            previousState: { id: 'i', column: 'a', label: 'Old' },
            currentState: { id: 'i', column: 'b', label: 'New' },
          },
        ],
      }),
    ).toEqual([
      'Removed option “Pupil referral unit” of filter “School type”.',
      'Added location “North Northamptonshire” (Local authority).',
      'Changed indicator “New”: renamed from “Old” to “New”, column changed from a to b.',
      'Added time period “2021/22”.',
    ]);
    expect(describeChangeSet({})).toEqual([]);
  });

  it('makes one chart series per location, split by the filters that vary, in time order', () => {
    const one = buildChartData(
      [row('2021/2022', 'L1', 's1', '5'), row('2020/2021', 'L1', 's1', '4'), row('2020/2021', 'L2', 's1', 'c')],
      meta,
      'I1',
      'line',
    );
    expect(one.xs.map((x) => x.label)).toEqual(['2020/21', '2021/22']);
    expect(one.series.map((s) => s.label)).toEqual(['Barnet', 'Barnsley']);
    expect(one.series[0]!.values.get('2020/2021|AY')).toEqual({ raw: '4', value: 4 });
    expect(one.series[1]!.values.get('2020/2021|AY')).toEqual({ raw: 'c', value: undefined });

    const split = buildChartData(
      [row('2020/2021', 'L1', 's1', '1'), row('2020/2021', 'L1', 's2', '2')],
      meta,
      'I1',
      'bar',
    );
    // Bars: largest first.
    expect(split.series.map((s) => s.label)).toEqual(['Barnet, Secondary', 'Barnet, Primary']);

    expect(buildChartData([], meta, 'I1', 'line').problem).toBe('There is nothing to chart: no rows match.');
  });

  it('charts any number of bars, largest first (no number last), named in words', () => {
    const many = Array.from({ length: 40 }, (_, i) => row('2020/2021', `X${i}`, 's1', String((i * 7) % 40)));
    many.push(row('2020/2021', 'L1', 's1', 'c'));
    const bars = buildChartData(many, meta, 'I1', 'bar');
    expect(bars.series).toHaveLength(41);
    const values = bars.series.map((s) => s.values.get('2020/2021|AY')!.value);
    expect(values.slice(0, 40)).toEqual([...values.slice(0, 40)].sort((a, b) => b! - a!));
    expect(bars.series[40]!.label).toBe('Barnet');
    expect(axisLabel({ id: 'p', column: 'p', label: 'Percent', unit: '%', decimalPlaces: 1 })).toBe('Percent (%)');
    expect(axisLabel({ id: 'h', column: 'h', label: 'Headcount', unit: '' })).toBe('Headcount');
  });

  it('draws a bar chart for one chosen period only', () => {
    const bars = buildChartData(
      [row('2021/2022', 'L1', 's1', '5'), row('2020/2021', 'L2', 's1', '4')],
      meta,
      'I1',
      'bar',
      '2020/2021|AY',
    );
    expect(bars.xs).toEqual([{ key: '2020/2021|AY', label: '2020/21' }]);
    expect(bars.series.map((s) => s.label)).toEqual(['Barnsley']);
  });

  it('spaces a line chart’s x labels by their width, keeps the last inside the chart and never lets two overlap', () => {
    const weeks = Array.from({ length: 30 }, (_, i) => `2022 Week ${i + 14}`);
    for (const width of [280, 640, 960]) {
      const plot = width - 64 - 36;
      const centres = weeks.map((_, i) => 64 + (plot * i) / (weeks.length - 1));
      const shown = xLabels(weeks, centres, width);
      const half = (weeks[0]!.length * 8.2) / 2;
      expect(shown[0]!.index).toBe(0);
      expect(shown.at(-1)!.index).toBe(weeks.length - 1);
      for (const { x } of shown) expect(x - half >= 0 && x + half <= width, `inside ${width}`).toBe(true);
      for (let i = 1; i < shown.length; i++)
        expect(shown[i]!.x - shown[i - 1]!.x, `apart at ${width}`).toBeGreaterThanOrEqual(half * 2);
    }
    // Few periods: every label.
    expect(xLabels(['2019/20', '2020/21', '2021/22'], [64, 334, 604], 640).map((l) => l.index)).toEqual([0, 1, 2]);
  });

  it('formats values with the indicator’s unit and decimal places, and leaves codes alone', () => {
    expect(formatValue('12345', { unit: '', decimalPlaces: 0 })).toBe('12,345');
    expect(formatValue('0.10800432', { unit: '', decimalPlaces: 1 })).toBe('0.1');
    expect(formatValue('7.5', { unit: '%', decimalPlaces: 2 })).toBe('7.50%');
    expect(formatValue('3', { unit: '£m' })).toBe('£3m');
    expect(formatValue('c', { unit: '' })).toBe('c');
    expect(niceTicks(0, 548)).toEqual([0, 200, 400, 600]);
    expect(niceTicks(-3, 7)).toEqual([-4, -2, 0, 2, 4, 6, 8]);
  });

  it('formats numbers exactly as Intl’s en-GB format would (rounding, padding, grouping, ties, long numbers)', () => {
    const formats = new Map(
      [undefined, 0, 1, 2, 3].map((dp) => [
        dp,
        new Intl.NumberFormat(
          'en-GB',
          dp === undefined ? { maximumFractionDigits: 20 } : { minimumFractionDigits: dp, maximumFractionDigits: dp },
        ),
      ]),
    );
    const intl = (raw: string, dp: number | undefined) => formats.get(dp)!.format(Number(raw));
    const values = [
      '0',
      '-0',
      '0.0',
      '-0.04',
      '999',
      '1000',
      '-1000',
      '9.95',
      '99.95',
      '0.05',
      '0.15',
      '2.5',
      '-2.5',
      '1.005',
      '0.0450',
      '10.50',
      '007',
      '123456789012345',
      '1234567890123456',
      '999999999999.5',
      '1.4999999999',
      '1.160862355',
      '0.089686099',
    ];
    // A fixed pseudo-random spread of integers and decimals of up to 10 places (the same every run).
    let seed = 7;
    const next = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    for (let i = 0; i < 20000; i++) {
      const whole = String(next(10 ** (1 + next(9))));
      const fraction = next(2)
        ? ''
        : `.${String(next(10 ** 9))
            .padStart(9, '0')
            .slice(0, 1 + next(10))}`;
      values.push(`${next(5) ? '' : '-'}${whole}${fraction}`);
    }
    const differ = [undefined, 0, 1, 2, 3].flatMap((dp) =>
      values
        .filter((raw) => formatValue(raw, { unit: '', decimalPlaces: dp }) !== intl(raw, dp))
        .map((raw) => `${raw} to ${dp} places`),
    );
    expect(differ).toEqual([]);
  });

  it('says the API’s warnings in words', () => {
    expect(warningText({ code: 'NoResults', message: 'The query did not match any results.' })).toBe(
      'Nothing matches these choices. Choose more time periods, locations or filter options.',
    );
    expect(
      warningText({
        code: 'LocationsNotFound',
        message: 'One or more locations could not be found.',
        detail: { items: [{ level: 'LA', id: 'x' }] },
      }),
    ).toBe('One or more locations could not be found. ({"level":"LA","id":"x"})');
  });

  it('holds unchosen filters at their Total option for the chart', () => {
    expect(chartTotals(meta, emptyState())).toEqual({ filters: { F1: ['o2'] }, held: ['Ethnicity'] });
    expect(chartTotals(meta, { ...emptyState(), filters: { F1: ['o1'] } })).toEqual({ filters: {}, held: [] });
  });
});
