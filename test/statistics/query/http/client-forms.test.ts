import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../../helpers/app.js';
import { ABSENCE_SCHOOL } from '../../../helpers/statistics.js';

/**
 * Request forms the reference accepts because of how ASP.NET reads them: JSON member names matched
 * case-insensitively, comments skipped, numbers in JSON strings; query-string names case-insensitive, values
 * trimmed. Unknown members and trailing commas stay errors.
 */
const url = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '1000' });
});
afterAll(async () => {
  await t?.close();
});

const post = (payload: string) =>
  t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': 'application/json' } });
const CANONICAL = JSON.stringify({
  criteria: { locations: { eq: { level: 'NAT', code: 'E92000001' } } },
  indicators: ['dP0Zw'],
  pageSize: 5,
});

describe('POST query bodies', () => {
  it('match member names case-insensitively and read numbers from strings', async () => {
    const expected = await post(CANONICAL);
    expect(expected.statusCode).toBe(200);
    const response = await post(
      JSON.stringify({
        Criteria: { Locations: { EQ: { Level: 'NAT', CODE: 'E92000001' } } },
        INDICATORS: ['dP0Zw'],
        PageSize: '5',
      }),
    );
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(expected.body);
  });

  it('skip // and /* */ comments', async () => {
    const annotated = `{
      // England only
      "criteria": { /* a location by its code */ "locations": { "eq": { "level": "NAT", "code": "E92000001" } } },
      "indicators": ["dP0Zw"], // enrolments
      "pageSize": 5 /* five rows */
    }`;
    const response = await post(annotated);
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe((await post(CANONICAL)).body);
  });

  it('keep the documented names in error paths', async () => {
    const response = await post(JSON.stringify({ PageSize: 0, Criteria: { GeographicLevels: { Eq: 'XX' } } }));
    expect(response.statusCode).toBe(400);
    const paths = response.json<{ errors: Array<{ path: string }> }>().errors.map((e) => e.path);
    expect(paths).toEqual(expect.arrayContaining(['pageSize', 'criteria.geographicLevels.eq']));
  });

  it('still refuse unknown members, trailing commas and numbers that are not numbers', async () => {
    const unknown = await post(JSON.stringify({ indicators: ['dP0Zw'], Colour: 'red' }));
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors).toEqual([expect.objectContaining({ path: 'Colour', code: 'UnknownField' })]);
    const trailing = await post('{ "indicators": ["dP0Zw"], }');
    expect(trailing.statusCode).toBe(400);
    const notANumber = await post(JSON.stringify({ pageSize: 'five' }));
    expect(notANumber.statusCode).toBe(400);
    expect(notANumber.json().errors[0]).toMatchObject({ path: 'pageSize', code: 'InvalidValue' });
  });
});

describe('query-string names', () => {
  it('are matched case-insensitively and values are trimmed, on the GET query', async () => {
    const expected = await t.app.inject({
      url: `${url}?geographicLevels.eq=NAT&indicators=dP0Zw&pageSize=5&dataSetVersion=1.0`,
    });
    expect(expected.statusCode).toBe(200);
    const response = await t.app.inject({
      url: `${url}?GeographicLevels.Eq=NAT&Indicators=dP0Zw&PageSize=%205%20&DataSetVersion=1.0`,
    });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(expected.body);
  });

  it('are matched case-insensitively on the other endpoints and beside a POST body', async () => {
    const expected = await t.app.inject({ url: '/v1/publications?page=1&pageSize=1' });
    const response = await t.app.inject({ url: '/v1/publications?Page=1&PAGESIZE=1' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toBe(expected.body);
    const meta = await t.app.inject({
      url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/meta?Types=Indicators&DataSetVersion=1.0`,
    });
    expect(meta.statusCode).toBe(200);
    expect(meta.json().filters).toEqual([]);
    expect(meta.json().indicators.length).toBeGreaterThan(0);
    const withVersion = await t.app.inject({
      method: 'POST',
      url: `${url}?DataSetVersion=1.0`,
      payload: CANONICAL,
      headers: { 'content-type': 'application/json' },
    });
    expect(withVersion.statusCode).toBe(200);
  });

  it('still refuse unknown names', async () => {
    const response = await t.app.inject({ url: `${url}?Colour=red` });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0]).toMatchObject({ path: 'Colour', code: 'UnknownField' });
  });

  it('name a second `?` when it left the rest of the query in the version (eesyapi 0.4 with GET and a version)', async () => {
    const response = await t.app.inject({ url: `${url}?dataSetVersion=1.0?indicators=dP0Zw&timePeriods.eq=2020|AY` });
    // 404 as the reference answers a version it cannot read, with what went wrong.
    expect(response.statusCode).toBe(404);
    expect(response.json().detail).toBe(
      "'1.0?indicators=dP0Zw' is not a data set version. Parameters after the first are joined with '&', not '?'.",
    );
    const plain = await t.app.inject({ url: `${url}?dataSetVersion=one` });
    expect(plain.json().detail).toBe("'one' is not a data set version.");
  });
});
