import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ABSENCE_SCHOOL } from '../../helpers/statistics.js';

const BASE = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;

interface Meta {
  filters: Array<{ id: string; label: string; options: Array<{ id: string; label: string }> }>;
  indicators: Array<{ id: string; label: string }>;
  locations: Array<{ level: { code: string; label: string }; options: Array<{ id: string; label: string }> }>;
  timePeriods: Array<{ code: string; period: string; label: string }>;
}

interface Page {
  results: Array<{
    timePeriod: { period: string; code: string };
    geographicLevel: string;
    locations: Record<string, string>;
    filters: Record<string, string>;
    values: Record<string, string>;
  }>;
  labels?: Record<string, Record<string, string>>;
}

let t: TestApp;
let meta: Meta;
beforeAll(async () => {
  t = await buildTestApp();
  meta = (await t.app.inject({ url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/meta` })).json() as Meta;
});
afterAll(async () => {
  await t?.close();
});

/** Every id of a page with its label as /meta gives it. */
function labelsFromMeta(page: Page) {
  const expected: Record<string, Record<string, string>> = {
    timePeriods: {},
    geographicLevels: {},
    locations: {},
    filters: {},
    filterOptions: {},
    indicators: {},
  };
  const locations = new Map(meta.locations.flatMap((l) => l.options.map((o) => [o.id, o.label])));
  const levels = new Map(meta.locations.map((l) => [l.level.code, l.level.label]));
  for (const row of page.results) {
    const period = meta.timePeriods.find((p) => p.period === row.timePeriod.period && p.code === row.timePeriod.code)!;
    expected.timePeriods![`${period.period}|${period.code}`] = period.label;
    expected.geographicLevels![row.geographicLevel] = levels.get(row.geographicLevel)!;
    for (const id of Object.values(row.locations)) expected.locations![id] = locations.get(id)!;
    for (const [filterId, optionId] of Object.entries(row.filters)) {
      const filter = meta.filters.find((f) => f.id === filterId)!;
      expected.filters![filterId] = filter.label;
      expected.filterOptions![optionId] = filter.options.find((o) => o.id === optionId)!.label;
    }
    for (const id of Object.keys(row.values))
      expected.indicators![id] = meta.indicators.find((i) => i.id === id)!.label;
  }
  return expected;
}

describe('labels', () => {
  it('GET labels=true adds the label of every id in the page, the results unchanged', async () => {
    const query = 'geographicLevels.in=LA,REG&pageSize=40&page=2';
    const plain = await t.app.inject({ url: `${BASE}?${query}` });
    const labelled = await t.app.inject({ url: `${BASE}?${query}&labels=true` });
    expect(labelled.statusCode).toBe(200);
    const page = labelled.json() as Page;
    const { labels, ...rest } = page;
    expect(rest).toEqual(plain.json());
    expect(labels).toEqual(labelsFromMeta(page));
    expect(Object.keys(labels!.filterOptions!).length).toBeGreaterThan(1);
  });

  it('POST "labels": true does the same', async () => {
    const body = { criteria: { geographicLevels: { eq: 'NAT' } }, pageSize: 10 };
    const response = await t.app.inject({ method: 'POST', url: BASE, payload: { ...body, labels: true } });
    const page = response.json() as Page;
    expect(page.labels).toEqual(labelsFromMeta(page));
    const { labels: _labels, ...rest } = page;
    expect(rest).toEqual((await t.app.inject({ method: 'POST', url: BASE, payload: body })).json());
  });

  it('leaves the response as it is without the option, or with false', async () => {
    const plain = await t.app.inject({ url: `${BASE}?pageSize=5` });
    expect(plain.body).not.toContain('"labels"');
    expect((await t.app.inject({ url: `${BASE}?pageSize=5&labels=false` })).body).toBe(plain.body);
    expect((await t.app.inject({ method: 'POST', url: BASE, payload: { pageSize: 5, labels: false } })).body).toBe(
      plain.body,
    );
  });

  it('with debug, keys the labels by the ids alone', async () => {
    const page = (await t.app.inject({ url: `${BASE}?pageSize=3&debug=true&labels=true` })).json() as Page;
    const optionId = Object.values(page.results[0]!.filters)[0]!.split(' :: ')[0]!;
    expect(page.labels!.filterOptions![optionId]).toBe(Object.values(page.results[0]!.filters)[0]!.split(' :: ')[1]);
  });

  it('refuses a non-boolean labels with 400 in the statistics error format', async () => {
    const get = await t.app.inject({ url: `${BASE}?labels=yes` });
    expect(get.statusCode).toBe(400);
    expect(get.json()).toMatchObject({
      title: 'One or more validation errors occurred.',
      status: 400,
      errors: [
        {
          path: 'labels',
          code: 'InvalidValue',
          message: 'Must be a valid value. Check that the type and format are correct.',
          detail: { value: 'yes' },
        },
      ],
    });
    const post = await t.app.inject({ method: 'POST', url: BASE, payload: { labels: 'true' } });
    expect(post.statusCode).toBe(400);
    expect(post.json()).toMatchObject({ status: 400, errors: [{ path: 'labels', code: 'InvalidValue' }] });
  });
});
