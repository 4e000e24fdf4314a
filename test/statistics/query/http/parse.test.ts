import { describe, expect, it } from 'vitest';
import { ValidationError, type FieldError } from '../../../../src/errors.js';
import { parseGetQuery, type RawQuery } from '../../../../src/statistics/query/http/parse-get.js';
import { parsePostBody } from '../../../../src/statistics/query/http/parse-post.js';

function getErrors(query: RawQuery): FieldError[] {
  try {
    parseGetQuery(query);
  } catch (error) {
    if (error instanceof ValidationError) return error.errors;
    throw error;
  }
  throw new Error('expected a validation error');
}

function postErrors(body: unknown): FieldError[] {
  try {
    parsePostBody(body);
  } catch (error) {
    if (error instanceof ValidationError) return error.errors;
    throw error;
  }
  throw new Error('expected a validation error');
}

const brief = (errors: FieldError[]) => errors.map((e) => [e.path, e.code]);

describe('GET query string binding', () => {
  it('accepts repeated, indexed and comma-separated lists alike', () => {
    const repeated = parseGetQuery({ 'filters.in': ['a', 'b'] }).request;
    const indexed = parseGetQuery({ 'filters.in[1]': 'b', 'filters.in[0]': 'a' }).request;
    const comma = parseGetQuery({ 'filters.in': 'a,,b' }).request;
    for (const r of [repeated, indexed, comma]) {
      expect(r.criteria).toMatchObject({
        kind: 'facets',
        facets: { filters: { in: [{ value: 'a' }, { value: 'b' }] } },
      });
    }
  });

  it('reports every unknown key and unparseable value, and only those', () => {
    const errors = getErrors({ foo: '1', 'filters.bar': 'x', page: 'abc', debug: 'xyz', 'filters.eq': '' });
    expect(brief(errors)).toEqual([
      ['foo', 'UnknownField'],
      ['filters.bar', 'UnknownField'],
      ['page', 'InvalidValue'],
      ['debug', 'InvalidValue'],
    ]);
  });

  it('defaults: page 1, pageSize 1000, no criteria, all indicators', () => {
    expect(parseGetQuery({}).request).toEqual({
      criteria: undefined,
      indicators: undefined,
      sorts: undefined,
      debug: false,
      page: 1,
      pageSize: 1000,
    });
  });

  it('case 25/26/27: indicators NotEmpty and MaximumLength', () => {
    expect(brief(getErrors({ 'indicators[0]': '' }))).toEqual([['indicators[0]', 'NotEmpty']]);
    expect(brief(getErrors({ indicators: ['', ' ', '  '] }))).toEqual([
      ['indicators[0]', 'NotEmpty'],
      ['indicators[1]', 'NotEmpty'],
      ['indicators[2]', 'NotEmpty'],
    ]);
    const errors = getErrors({ indicators: ['a'.repeat(41), 'b'.repeat(42)] });
    expect(brief(errors)).toEqual([
      ['indicators[0]', 'MaximumLength'],
      ['indicators[1]', 'MaximumLength'],
    ]);
    expect(errors[0]!.detail).toEqual({ maxLength: 40, totalLength: 41, value: 'a'.repeat(41) });
  });

  it('case 29/30: filter option ids', () => {
    expect(brief(getErrors({ 'filters.in': ['', ' ', '  ', 'a'.repeat(11), 'a'.repeat(12)] }))).toEqual([
      ['filters.in[0]', 'NotEmpty'],
      ['filters.in[1]', 'NotEmpty'],
      ['filters.in[2]', 'NotEmpty'],
      ['filters.in[3]', 'MaximumLength'],
      ['filters.in[4]', 'MaximumLength'],
    ]);
    const errors = getErrors({
      'filters.eq': 'a'.repeat(11),
      'filters.notEq': 'a'.repeat(12),
      'filters.in[0]': '',
      'filters.notIn': ['a'.repeat(11), ''],
    });
    expect(brief(errors).sort()).toEqual(
      [
        ['filters.eq', 'MaximumLength'],
        ['filters.notEq', 'MaximumLength'],
        ['filters.in[0]', 'NotEmpty'],
        ['filters.notIn[0]', 'MaximumLength'],
        ['filters.notIn[1]', 'NotEmpty'],
      ].sort(),
    );
  });

  it('case 34/35: geographic levels are AllowedValue with the 19 codes', () => {
    const [empty] = getErrors({ 'geographicLevels.in[0]': '' });
    expect(empty).toMatchObject({ path: 'geographicLevels.in[0]', code: 'AllowedValue', detail: { value: null } });
    expect((empty!.detail as { allowed: string[] }).allowed).toHaveLength(19);
    const errors = getErrors({
      'geographicLevels.in': ['', ' ', 'LADD', 'NATT', 'National', 'Local authority', 'LocalAuthority'],
    });
    expect(errors.map((e) => e.code)).toEqual(Array(7).fill('AllowedValue'));
    expect(errors.map((e) => (e.detail as { value: unknown }).value)).toEqual([
      null,
      null,
      'LADD',
      'NATT',
      'National',
      'Local authority',
      'LocalAuthority',
    ]);
  });

  it('case 38: location strings, stage by stage', () => {
    const values = [
      '',
      'invalid',
      '||',
      'LADD|code|12345',
      'NATT|code|12345',
      'NAT|invalid|12345',
      'LA|urn|12345',
      'SCH|code|12345',
      'PROV|oldCode|12345',
      'RSC|code|12345',
      'NAT|id| ',
      'LA|code| ',
      `NAT|id|${'a'.repeat(11)}`,
      `LA|code|${'a'.repeat(31)}`,
      `LA|oldCode|${'a'.repeat(21)}`,
      `SCH|urn|${'a'.repeat(21)}`,
      `PROV|ukprn|${'a'.repeat(21)}`,
      `RSC|id|${'a'.repeat(11)}`,
    ];
    const errors = getErrors({ 'locations.in': values });
    expect(errors.map((e) => e.code)).toEqual([
      'NotEmpty',
      'LocationFormat',
      'LocationFormat',
      'LocationAllowedLevel',
      'LocationAllowedLevel',
      'LocationAllowedProperty',
      'LocationAllowedProperty',
      'LocationAllowedProperty',
      'LocationAllowedProperty',
      'LocationAllowedProperty',
      'LocationValueNotEmpty',
      'LocationValueNotEmpty',
      'LocationValueMaxLength',
      'LocationValueMaxLength',
      'LocationValueMaxLength',
      'LocationValueMaxLength',
      'LocationValueMaxLength',
      'LocationValueMaxLength',
    ]);
    expect(errors.map((e) => e.path)).toEqual(values.map((_, i) => `locations.in[${i}]`));
    expect(errors[5]!.detail).toMatchObject({ allowedProperties: ['id', 'code'] });
    expect(errors[6]!.detail).toMatchObject({ allowedProperties: ['id', 'code', 'oldCode'] });
    expect(errors[7]!.detail).toMatchObject({ allowedProperties: ['id', 'urn', 'laEstab'] });
    expect(errors[8]!.detail).toMatchObject({ allowedProperties: ['id', 'ukprn'] });
    expect(errors[9]!.detail).toMatchObject({ allowedProperties: ['id'] });
    expect(errors[10]!.detail).toMatchObject({ property: 'id' });
    expect(errors[13]!.detail).toMatchObject({ property: 'code', maxLength: 30 });
    expect(errors[14]!.detail).toMatchObject({ property: 'oldCode', maxLength: 20 });
    expect(errors[17]!.detail).toMatchObject({ property: 'id', maxLength: 10 });
  });

  it('case 45: time period strings', () => {
    const values = [
      '',
      'invalid',
      '|',
      '2020/2019|AY',
      '2020/2022|AY',
      '2020|INVALID',
      '2020/2021|CY',
      '2020/2021|CYQ2',
      '2020/2021|RY',
      '2020/2021|W10',
      '2020/2021|M5',
    ];
    const errors = getErrors({ 'timePeriods.in': values });
    expect(errors.map((e) => e.code)).toEqual([
      'NotEmpty',
      'TimePeriodFormat',
      'TimePeriodAllowedCode',
      'TimePeriodInvalidYearRange',
      'TimePeriodInvalidYearRange',
      'TimePeriodAllowedCode',
      'TimePeriodAllowedCode',
      'TimePeriodAllowedCode',
      'TimePeriodAllowedCode',
      'TimePeriodAllowedCode',
      'TimePeriodAllowedCode',
    ]);
    const rangeCodes = (errors[6]!.detail as { allowedCodes: string[] }).allowedCodes;
    expect(rangeCodes).toContain('AY');
    expect(rangeCodes).not.toContain('CY');
    expect((errors[5]!.detail as { allowedCodes: string[] }).allowedCodes.slice(0, 4)).toEqual([
      'AY',
      'AYQ1',
      'AYQ2',
      'AYQ3',
    ]);
  });

  it('time periods: single years of academic codes read as ranges; odd years rejected', () => {
    const { request } = parseGetQuery({ 'timePeriods.eq': '2021|AY', 'timePeriods.gt': '2021|CY' });
    expect(request.criteria).toMatchObject({
      facets: {
        timePeriods: {
          eq: { value: { period: '2021/2022', code: 'AY' }, shown: '2021|AY' },
          gt: { value: { period: '2021', code: 'CY' } },
        },
      },
    });
    expect(brief(getErrors({ 'timePeriods.in': ['20201|CY', '-2022|CY', '2022/ 2023|AY'] }))).toEqual([
      ['timePeriods.in[0]', 'TimePeriodInvalidYear'],
      ['timePeriods.in[1]', 'TimePeriodInvalidYear'],
      ['timePeriods.in[2]', 'TimePeriodInvalidYearRange'],
    ]);
  });

  it('case 52: sort strings', () => {
    const values = [
      '',
      'invalid',
      '|',
      'test|',
      'test|invalid',
      'test|asc',
      'test|desc',
      `${'a'.repeat(41)}|Asc`,
      `${'b'.repeat(41)}|Desc`,
      'missing1|Asc',
      'missing2|Desc',
    ];
    const errors = getErrors({ sorts: values });
    expect(brief(errors)).toEqual([
      ['sorts[0]', 'NotEmpty'],
      ['sorts[1]', 'SortFormat'],
      ['sorts[2]', 'SortFieldNotEmpty'],
      ['sorts[2]', 'SortDirection'],
      ['sorts[3]', 'SortDirection'],
      ['sorts[4]', 'SortDirection'],
      ['sorts[5]', 'SortDirection'],
      ['sorts[6]', 'SortDirection'],
      ['sorts[7]', 'SortFieldMaxLength'],
      ['sorts[8]', 'SortFieldMaxLength'],
    ]);
    expect(errors[4]!.detail).toMatchObject({ value: '' });
    expect(errors[6]!.detail).toMatchObject({ value: 'asc' });
  });

  it('sorts: the last pipe separates the direction', () => {
    expect(parseGetQuery({ sorts: 'location|REG|Asc,timePeriod|Desc' }).request.sorts).toEqual([
      { field: 'location|REG', direction: 'Asc', shown: 'location|REG|Asc' },
      { field: 'timePeriod', direction: 'Desc', shown: 'timePeriod|Desc' },
    ]);
  });

  it('case 19: paging bounds', () => {
    for (const pageSize of ['-1', '0', '10001']) {
      const [error] = getErrors({ pageSize });
      expect(error).toMatchObject({
        path: 'pageSize',
        code: 'InclusiveBetween',
        detail: { from: 1, to: 10000, value: Number(pageSize) },
      });
    }
    expect(getErrors({ page: '0' })[0]).toMatchObject({
      path: 'page',
      code: 'GreaterThanOrEqual',
      detail: { comparisonValue: 1, value: 0 },
    });
  });
});

describe('POST body parsing', () => {
  it('no body or null: everything, all indicators', () => {
    expect(parsePostBody(undefined)).toEqual({ debug: false, page: 1, pageSize: 1000 });
    expect(parsePostBody(null)).toEqual({ debug: false, page: 1, pageSize: 1000 });
  });

  it('unknown members and wrong types are binding errors, reported alone', () => {
    expect(brief(postErrors({ foo: 1, page: 'x', criteria: { filters: { eq: ['x'] }, bar: 1 }, pageSize: 0 }))).toEqual(
      [
        ['foo', 'UnknownField'],
        ['page', 'InvalidValue'],
        ['criteria.bar', 'UnknownField'],
        ['criteria.filters.eq', 'InvalidValue'],
      ],
    );
    expect(brief(postErrors({ criteria: { and: [{ filters: { eq: 'x' } }], filters: {} } }))).toEqual([
      ['criteria.filters', 'UnknownField'],
    ]);
    expect(brief(postErrors({ criteria: { timePeriods: { eq: { period: '2020' } } } }))).toEqual([
      ['criteria.timePeriods.eq.code', 'InvalidValue'],
    ]);
    expect(brief(postErrors({ sorts: [{ field: 'timePeriod' }] }))).toEqual([['sorts[0].direction', 'InvalidValue']]);
    expect(brief(postErrors({ criteria: { locations: { eq: { id: 'x' } } } }))).toEqual([
      ['criteria.locations.eq.level', 'InvalidValue'],
    ]);
    expect(brief(postErrors({ criteria: { locations: { eq: { level: 'NAT', id: 'x', code: 'y' } } } }))).toEqual([
      ['criteria.locations.eq.id', 'UnknownField'],
    ]);
    expect(brief(postErrors([1]))).toEqual([['', 'InvalidValue']]);
  });

  it('case 31/67/68: empty lists and conditions are NotEmpty, null children NotNull', () => {
    for (const facet of ['filters', 'geographicLevels', 'locations', 'timePeriods']) {
      expect(brief(postErrors({ criteria: { [facet]: { in: [] } } }))).toEqual([[`criteria.${facet}.in`, 'NotEmpty']]);
    }
    expect(brief(postErrors({ criteria: { and: [] } }))).toEqual([['criteria.and', 'NotEmpty']]);
    expect(brief(postErrors({ criteria: { or: [] } }))).toEqual([['criteria.or', 'NotEmpty']]);
    expect(brief(postErrors({ criteria: { or: [null, {}] } }))).toEqual([['criteria.or[0]', 'NotNull']]);
    expect(brief(postErrors({ criteria: { not: null } }))).toEqual([['criteria.not', 'NotNull']]);
    expect(brief(postErrors({ sorts: [] }))).toEqual([['sorts', 'NotEmpty']]);
  });

  it('case 26/27: indicators (whitespace counts as empty)', () => {
    expect(brief(postErrors({ indicators: ['', ' ', '  '] }))).toEqual([
      ['indicators[0]', 'NotEmpty'],
      ['indicators[1]', 'NotEmpty'],
      ['indicators[2]', 'NotEmpty'],
    ]);
    expect(brief(postErrors({ indicators: ['a'.repeat(41), 'a'.repeat(42)] }))).toEqual([
      ['indicators[0]', 'MaximumLength'],
      ['indicators[1]', 'MaximumLength'],
    ]);
    expect(parsePostBody({ indicators: [] }).indicators).toEqual([]);
  });

  it('case 35/37: levels are not trimmed', () => {
    const errors = postErrors({
      criteria: { geographicLevels: { eq: 'NATT', notEq: 'LADD', in: ['  ', 'National'], notIn: [] } },
    });
    expect(brief(errors)).toEqual([
      ['criteria.geographicLevels.eq', 'AllowedValue'],
      ['criteria.geographicLevels.notEq', 'AllowedValue'],
      ['criteria.geographicLevels.in[0]', 'AllowedValue'],
      ['criteria.geographicLevels.in[1]', 'AllowedValue'],
      ['criteria.geographicLevels.notIn', 'NotEmpty'],
    ]);
    expect(errors[2]!.detail).toMatchObject({ value: '  ' });
  });

  it('case 39/40: location objects', () => {
    const errors = postErrors({
      criteria: {
        locations: {
          in: [
            { level: 'LADD', code: 'x' },
            { level: 'NAT', id: '' },
            { level: 'NAT', id: ' ' },
            { level: 'REG', code: '' },
            { level: 'LA', code: 'a'.repeat(31) },
            { level: 'LA', oldCode: 'a'.repeat(21) },
            { level: 'PROV', ukprn: 'a'.repeat(21) },
            { level: 'SCH', urn: 'a'.repeat(21) },
            { level: 'SCH', laEstab: 'a'.repeat(21) },
            { level: '', id: '' },
          ],
        },
      },
    });
    expect(brief(errors)).toEqual([
      ['criteria.locations.in[0].level', 'AllowedValue'],
      ['criteria.locations.in[1].id', 'NotEmpty'],
      ['criteria.locations.in[2].id', 'NotEmpty'],
      ['criteria.locations.in[3].code', 'NotEmpty'],
      ['criteria.locations.in[4].code', 'MaximumLength'],
      ['criteria.locations.in[5].oldCode', 'MaximumLength'],
      ['criteria.locations.in[6].ukprn', 'MaximumLength'],
      ['criteria.locations.in[7].urn', 'MaximumLength'],
      ['criteria.locations.in[8].laEstab', 'MaximumLength'],
      ['criteria.locations.in[9].id', 'NotEmpty'],
      ['criteria.locations.in[9].level', 'AllowedValue'],
    ]);
    expect(errors[4]!.detail).toMatchObject({ maxLength: 30 });
    expect(errors[5]!.detail).toMatchObject({ maxLength: 20 });
    expect(errors[10]!.detail).toMatchObject({ value: '' });
  });

  it('case 46: time period objects', () => {
    const errors = postErrors({
      criteria: {
        timePeriods: {
          eq: { code: 'AY', period: '2020/2019' },
          notEq: { code: 'W10', period: '2020/2021' },
          in: [
            { code: 'INVALID', period: '2020' },
            { code: 'CY', period: '' },
          ],
          notIn: [],
          gt: { code: 'CY', period: '2020/2021' },
          gte: { code: 'AY', period: '2020/' },
          lt: { code: '', period: '2020' },
          lte: { code: '', period: '2020/2021' },
        },
      },
    });
    expect(brief(errors)).toEqual([
      ['criteria.timePeriods.eq.period', 'TimePeriodInvalidYearRange'],
      ['criteria.timePeriods.notEq.code', 'TimePeriodAllowedCode'],
      ['criteria.timePeriods.in[0].code', 'TimePeriodAllowedCode'],
      ['criteria.timePeriods.in[1].period', 'TimePeriodInvalidYear'],
      ['criteria.timePeriods.notIn', 'NotEmpty'],
      ['criteria.timePeriods.gt.code', 'TimePeriodAllowedCode'],
      ['criteria.timePeriods.gte.period', 'TimePeriodInvalidYearRange'],
      ['criteria.timePeriods.lt.code', 'TimePeriodAllowedCode'],
      ['criteria.timePeriods.lte.code', 'TimePeriodAllowedCode'],
    ]);
  });

  it('case 53: sort objects', () => {
    const errors = postErrors({
      sorts: [
        { field: '', direction: 'Asc' },
        { field: 'a', direction: 'asc' },
        { field: 'b', direction: '' },
        { field: 'c', direction: 'invalid' },
        { field: 'd', direction: 'desc' },
        { field: 'x'.repeat(41), direction: 'Asc' },
        { field: 'y'.repeat(41), direction: 'Desc' },
      ],
    });
    expect(brief(errors)).toEqual([
      ['sorts[0].field', 'NotEmpty'],
      ['sorts[1].direction', 'AllowedValue'],
      ['sorts[2].direction', 'AllowedValue'],
      ['sorts[3].direction', 'AllowedValue'],
      ['sorts[4].direction', 'AllowedValue'],
      ['sorts[5].field', 'MaximumLength'],
      ['sorts[6].field', 'MaximumLength'],
    ]);
  });

  it('bounds: more than 32 levels or 1,000 conditions is a 400, not a stack overflow', () => {
    let deep: unknown = { filters: { eq: 'a' } };
    for (let i = 0; i < 40; i++) deep = { not: deep };
    expect(brief(postErrors({ criteria: deep }))).toEqual([
      [
        'criteria.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not.not',
        'CriteriaMaxDepth',
      ],
    ]);
    let ok: unknown = { filters: { eq: 'a' } };
    for (let i = 0; i < 31; i++) ok = { not: ok };
    expect(parsePostBody({ criteria: ok }).criteria).toBeDefined();

    const wide = { or: Array.from({ length: 600 }, () => ({ filters: { eq: 'a' } })) };
    const [error] = postErrors({ criteria: wide });
    expect(error).toMatchObject({ path: 'criteria', code: 'CriteriaMaxConditions' });

    let veryDeep: unknown = {};
    for (let i = 0; i < 100000; i++) veryDeep = { not: veryDeep };
    expect(brief(postErrors({ criteria: veryDeep }))[0]![1]).toBe('CriteriaMaxDepth');
  });
});
