import { describe, expect, it } from 'vitest';
import {
  criteria,
  emptyState,
  getUrl,
  parseState,
  postBody,
  stateToSearch,
  type QueryState,
} from '../../../src/explorer/client/query.js';

const chosen = (): QueryState => ({
  ...emptyState(),
  timePeriods: { mode: 'list', items: ['2020/2021|AY', '2021/2022|AY'] },
  geographicLevels: ['LA'],
  locations: ['LA|id|7zXob', 'LA|id|dP0Zw'],
  filters: { pTSoj: ['hgyW6'] },
  indicators: ['it6Xr', 'LxWjE'],
});

describe('explorer query state', () => {
  it('round-trips through the permalink query string, with the API GET names and readable separators', () => {
    const state = { ...chosen(), sort: 'indicator|it6Xr|Asc', page: 2, pageSize: 50 };
    const search = stateToSearch(state);
    expect(search).toBe(
      'timePeriods.in=2020/2021|AY,2021/2022|AY&geographicLevels.in=LA&locations.in=LA|id|7zXob,LA|id|dP0Zw&filters.pTSoj=hgyW6&indicators=it6Xr,LxWjE&sorts=indicator|it6Xr|Asc&page=2&pageSize=50',
    );
    expect(parseState(search)).toEqual(state);
    const range: QueryState = {
      ...emptyState(),
      timePeriods: { mode: 'range', from: '2015/2016|AY', to: '2018/2019|AY' },
      dataSetVersion: '1.1',
    };
    expect(parseState(stateToSearch(range))).toEqual(range);
  });

  it('keeps the chart settings in the permalink', () => {
    const state: QueryState = {
      ...chosen(),
      chart: { type: 'bar', indicator: 'LxWjE', period: '2021/2022|AY', lines: 'multiples', highlight: 'LA|7zXob' },
    };
    const search = stateToSearch(state);
    expect(search).toContain(
      '&chartType=bar&chartIndicator=LxWjE&chartPeriod=2021/2022|AY&chartLines=multiples&chartHighlight=LA|7zXob',
    );
    expect(parseState(search)).toEqual(state);
    expect(parseState('chartType=pie&chartLines=all').chart).toBeUndefined();
  });

  it('ignores what it does not understand in a permalink', () => {
    const state = parseState('page=-3&pageSize=abc&sorts=nonsense&other=1&filters.=x');
    expect(state).toEqual(emptyState());
  });

  it('builds one facets object when one filter is chosen, and ANDs the filters when several are', () => {
    expect(postBody(chosen())).toEqual({
      criteria: {
        timePeriods: {
          in: [
            { period: '2020/2021', code: 'AY' },
            { period: '2021/2022', code: 'AY' },
          ],
        },
        geographicLevels: { in: ['LA'] },
        locations: {
          in: [
            { level: 'LA', id: '7zXob' },
            { level: 'LA', id: 'dP0Zw' },
          ],
        },
        filters: { in: ['hgyW6'] },
      },
      indicators: ['it6Xr', 'LxWjE'],
      page: 1,
      pageSize: 20,
    });
    const two = { ...chosen(), filters: { pTSoj: ['hgyW6'], it6Xr: ['a', 'b'] } };
    const c = criteria(two) as { and: unknown[] };
    expect(c.and).toEqual([
      {
        timePeriods: {
          in: [
            { period: '2020/2021', code: 'AY' },
            { period: '2021/2022', code: 'AY' },
          ],
        },
        geographicLevels: { in: ['LA'] },
        locations: {
          in: [
            { level: 'LA', id: '7zXob' },
            { level: 'LA', id: 'dP0Zw' },
          ],
        },
      },
      { filters: { in: ['hgyW6'] } },
      { filters: { in: ['a', 'b'] } },
    ]);
    expect(postBody(emptyState())).toEqual({ page: 1, pageSize: 20 });
  });

  it('keeps a level chosen whole beside a level narrowed to some locations (either matches)', () => {
    const state: QueryState = { ...emptyState(), geographicLevels: ['NAT', 'LA'], locations: ['LA|id|7zXob'] };
    expect(criteria(state)).toEqual({
      and: [
        {
          or: [
            { geographicLevels: { in: ['NAT'] } },
            { geographicLevels: { in: ['LA'] }, locations: { in: [{ level: 'LA', id: '7zXob' }] } },
          ],
        },
      ],
    });
    expect(getUrl('http://x', 'd', state).url).toBeUndefined();
    expect(getUrl('http://x', 'd', state).reason).toMatch(/only the POST body/);
  });

  it('ignores locations of a level that is not chosen', () => {
    const state: QueryState = { ...emptyState(), geographicLevels: ['REG'], locations: ['LA|id|7zXob'] };
    expect(criteria(state)).toEqual({ geographicLevels: { in: ['REG'] } });
  });

  it('writes the GET URL of the same query, or says why there is none', () => {
    expect(
      getUrl('http://127.0.0.1:3000', 'ds', { ...chosen(), dataSetVersion: '1.1', sort: 'timePeriod|Asc' }).url,
    ).toBe(
      'http://127.0.0.1:3000/v1/data-sets/ds/query?dataSetVersion=1.1&timePeriods.in=2020/2021|AY,2021/2022|AY&geographicLevels.in=LA&locations.in=LA|id|7zXob,LA|id|dP0Zw&filters.in=hgyW6&indicators=it6Xr,LxWjE&sorts=timePeriod|Asc',
    );
    const two = getUrl('http://x', 'ds', { ...chosen(), filters: { a: ['1'], b: ['2'] } });
    expect(two.url).toBeUndefined();
    expect(two.reason).toContain('more than one filter');
    expect(
      getUrl('http://x', 'ds', { ...emptyState(), timePeriods: { mode: 'range', from: '2015/2016|AY' } }).url,
    ).toBe('http://x/v1/data-sets/ds/query?timePeriods.gte=2015/2016|AY');
  });
});
