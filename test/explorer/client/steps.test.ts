import { describe, expect, it } from 'vitest';
import type { Meta } from '../../../src/explorer/client/api.js';
import { emptyState, parseState, stateToSearch, type QueryState } from '../../../src/explorer/client/query.js';
import { parseStep, stepSummaries } from '../../../src/explorer/client/steps.js';

const meta: Meta = {
  filters: [
    {
      id: 'F1',
      column: 'ethnicity',
      label: 'Ethnicity',
      hint: '',
      options: ['A', 'B', 'C', 'D', 'E', 'F', 'G'].map((l, i) => ({ id: `o${i}`, label: l })),
    },
  ],
  indicators: [
    { id: 'I1', column: 'headcount', label: 'Headcount' },
    { id: 'I2', column: 'percent', label: 'Percent', unit: '%' },
  ],
  geographicLevels: [
    { code: 'NAT', label: 'National' },
    { code: 'LA', label: 'Local authority' },
  ],
  locations: [
    { level: { code: 'NAT', label: 'National' }, options: [{ id: 'E', label: 'England' }] },
    {
      level: { code: 'LA', label: 'Local authority' },
      options: [
        { id: 'D1', label: 'Dorset', code: 'E06000059' },
        { id: 'D2', label: 'Dorset', code: 'E10000009' },
        { id: 'B', label: 'Barnet' },
      ],
    },
  ],
  timePeriods: [
    { code: 'AY', period: '2019/2020', label: '2019/20' },
    { code: 'AY', period: '2020/2021', label: '2020/21' },
    { code: 'AY', period: '2021/2022', label: '2021/22' },
  ],
};

describe('builder steps', () => {
  it('summarises nothing chosen as "all" at every step', () => {
    expect(stepSummaries(meta, emptyState())).toEqual([
      ['All 3 time periods'],
      ['All locations'],
      ['Ethnicity: all 7 options'],
      ['All 2 indicators'],
    ]);
  });

  it('summarises the choices in words: a range, locations per level (codes for repeated names), options, indicators', () => {
    const state: QueryState = {
      ...emptyState(),
      timePeriods: { mode: 'range', from: '2019/2020|AY', to: '2020/2021|AY' },
      geographicLevels: ['NAT', 'LA'],
      locations: ['LA|id|D2', 'LA|id|B'],
      filters: { F1: ['o0', 'o1', 'o2', 'o3', 'o4', 'o5'] },
      indicators: ['I2'],
    };
    expect(stepSummaries(meta, state)).toEqual([
      ['2019/20 to 2020/21'],
      ['National: all 1', 'Local authority: Dorset (E10000009), Barnet'],
      ['Ethnicity: A, B, C, D, E and 1 more'],
      ['Percent'],
    ]);
    expect(stepSummaries(meta, { ...emptyState(), timePeriods: { mode: 'list', items: ['2021/2022|AY'] } })[0]).toEqual(
      ['2021/22'],
    );
  });

  it('keeps the open step and the table layout in the permalink, and ignores a step out of range', () => {
    const state: QueryState = {
      ...emptyState(),
      step: 3,
      layout: { rows: ['timePeriod', 'filter:F1'], columns: ['location', 'indicator'] },
    };
    const search = stateToSearch(state);
    expect(search).toBe('tableRows=timePeriod,filter:F1&tableColumns=location,indicator&step=3');
    expect(parseState(search)).toEqual(state);
    expect(parseStep('5')).toBeUndefined();
    expect(parseState('step=0').step).toBeUndefined();
  });
});
