import { readFile } from 'node:fs/promises';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { ABSENCE_SCHOOL, createDataSet, importCsvVersion } from '../helpers/statistics.js';
import { deleteDraftVersion } from '../../src/statistics/lifecycle/service.js';
import { insertCsvFile, insertDataSet, insertPreviewToken, insertSmallMeta, insertVersion } from './fixtures.js';

/**
 * Endpoints 7 (changes), 8 (meta) and 11 (CSV) over the seeded AbsenceSchool fixture (imported by the importer into
 * the template database) and over versions of our own for the access rules and the changes shapes.
 */

let t: TestApp;
const FIXTURE = ABSENCE_SCHOOL.dataSetId;
const ids = {} as Record<string, string>;
const tokens = {} as Record<string, string>;

async function get(url: string, headers: Record<string, string> = {}) {
  return t.app.inject({ method: 'GET', url, headers });
}

const filter = (id: string, label: string) => ({ id, column: label.toLowerCase(), label, hint: '' });

beforeAll(async () => {
  t = await buildTestApp();
  const db = t.database.db;
  const publicationId = ABSENCE_SCHOOL.publicationId;

  // A data set with a version history of its own: 1.0, 1.1 Published, 1.2 Withdrawn, 2.0 Draft (with a token).
  ids.own = await insertDataSet(db, { publicationId, title: 'Own', status: 'Published' });
  const v10 = await insertVersion(db, { dataSetId: ids.own, version: '1.0', status: 'Published' });
  await insertSmallMeta(db, v10.id);
  await insertCsvFile(
    db,
    v10.id,
    'time_period,time_identifier,geographic_level,country_code,country_name,enrolments\n202021,Academic year,National,E92000001,England,10\n',
  );
  const v11 = await insertVersion(db, { dataSetId: ids.own, version: '1.1', status: 'Published' });
  await insertSmallMeta(db, v11.id, {
    timePeriods: [
      ['2020', 'M1'],
      ['2020', 'M10'],
      ['2020', 'M2'],
      ['2020/2021', 'AY'],
      ['2021', 'CY'],
    ],
  });
  await insertCsvFile(
    db,
    v11.id,
    'time_period,time_identifier,geographic_level,country_code,country_name,enrolments\n202021,Academic year,National,E92000001,England,11\n202122,Academic year,National,E92000001,England,12\n',
  );
  const v12 = await insertVersion(db, {
    dataSetId: ids.own,
    version: '1.2',
    status: 'Withdrawn',
    withdrawn: '2025-02-01T00:00:00Z',
  });
  await insertSmallMeta(db, v12.id);
  await insertCsvFile(db, v12.id, 'time_period,enrolments\n202021,12\n');
  const v20 = await insertVersion(db, { dataSetId: ids.own, version: '2.0', status: 'Draft' });
  await insertSmallMeta(db, v20.id);
  await insertCsvFile(db, v20.id, 'time_period,enrolments\n202021,20\n');
  tokens.draft = await insertPreviewToken(db, v20.id, new Date(Date.now() + 3600_000));

  // Changes: 2.1 with stored changes; patches 2.1.1 and 2.1.2; 3.0.1 whose 3.0.0 is not viewable.
  ids.changes = await insertDataSet(db, { publicationId, title: 'Changes', status: 'Published' });
  await insertVersion(db, { dataSetId: ids.changes, version: '2.0', status: 'Published' });
  const v21 = await insertVersion(db, {
    dataSetId: ids.changes,
    version: '2.1',
    status: 'Published',
    notes: 'Adds a year.',
  });
  const v211 = await insertVersion(db, {
    dataSetId: ids.changes,
    version: '2.1.1',
    status: 'Published',
    notes: 'Fixes a label.',
  });
  await insertVersion(db, {
    dataSetId: ids.changes,
    version: '2.1.2',
    status: 'Published',
    notes: 'Fixes another label.',
  });
  await insertVersion(db, { dataSetId: ids.changes, version: '3.0.0', status: 'Draft' });
  await insertVersion(db, { dataSetId: ids.changes, version: '3.0.1', status: 'Published' });
  const schoolType = filter('F1', 'School type');
  const ncYear = filter('F2', 'Year');
  const la = { code: 'LA', label: 'Local authority' };
  const rows: Array<{ version_id: number; kind: 'major' | 'minor'; list: string; change: unknown }> = [
    { version_id: v21.id, kind: 'major', list: 'filters', change: { previousState: filter('F0', 'Old filter') } },
    {
      version_id: v21.id,
      kind: 'major',
      list: 'filterOptions',
      change: { filter: schoolType, previousState: { id: 'o1', label: 'Special' } },
    },
    {
      version_id: v21.id,
      kind: 'major',
      list: 'filterOptions',
      change: { filter: schoolType, previousState: { id: 'o2', label: 'Other' } },
    },
    {
      version_id: v21.id,
      kind: 'major',
      list: 'filterOptions',
      change: { filter: ncYear, previousState: { id: 'o3', label: 'Year 12' } },
    },
    {
      version_id: v21.id,
      kind: 'major',
      list: 'geographicLevels',
      change: { previousState: { code: 'LAD', label: 'Local authority district' } },
    },
    {
      version_id: v21.id,
      kind: 'major',
      list: 'locationOptions',
      change: {
        level: la,
        previousState: { id: 'l1', label: 'Barnet', code: 'E09000003', oldCode: '302' },
        currentState: { id: 'l1', label: 'Barnet', code: 'E09000099', oldCode: '302' },
      },
    },
    {
      version_id: v21.id,
      kind: 'minor',
      list: 'geographicLevels',
      change: { currentState: { code: 'REG', label: 'Regional' } },
    },
    {
      version_id: v21.id,
      kind: 'minor',
      list: 'indicators',
      change: {
        previousState: { id: 'i1', column: 'enrolments', label: 'Enrolments' },
        currentState: { id: 'i1', column: 'enrolments', label: 'Pupils enrolled', decimalPlaces: 0 },
      },
    },
    {
      version_id: v21.id,
      kind: 'minor',
      list: 'locationGroups',
      change: { currentState: { level: { code: 'REG', label: 'Regional' } } },
    },
    {
      version_id: v21.id,
      kind: 'minor',
      list: 'timePeriods',
      change: { currentState: { code: 'AY', period: '2023/2024', label: '2023/24' } },
    },
    {
      version_id: v211.id,
      kind: 'minor',
      list: 'filterOptions',
      change: {
        filter: schoolType,
        previousState: { id: 'o4', label: 'Primry' },
        currentState: { id: 'o4', label: 'Primary' },
      },
    },
  ];
  await db
    .insertInto('version_changes')
    .values(rows.map((r) => ({ ...r, change: JSON.stringify(r.change) })))
    .execute();
});

afterAll(async () => {
  await t?.close();
});

describe('GET /v1/data-sets/{dataSetId}/meta', () => {
  it('returns the whole metadata of the latest version of the fixture, with the reference ids and orderings', async () => {
    const res = await get(`/v1/data-sets/${FIXTURE}/meta`);
    expect(res.statusCode).toBe(200);
    const meta = res.json();
    expect(meta.filters.map((f: { id: string; label: string }) => [f.id, f.label])).toEqual([
      ['dP0Zw', 'Academy type'],
      ['O7CLF', 'National Curriculum year'],
      ['7zXob', 'School type'],
    ]);
    expect(meta.filters[0]).toEqual({
      id: 'dP0Zw',
      column: 'academy_type',
      label: 'Academy type',
      hint: 'Only applicable for academies, otherwise no value',
      options: [
        { id: 'dP0Zw', label: 'Primary sponsor led academy' },
        { id: 'O7CLF', label: 'Secondary free school' },
        { id: '7zXob', label: 'Secondary sponsor led academy' },
      ],
    });
    // Plain string order: Year 10 before Year 4.
    expect(meta.filters[1].options.map((o: { label: string }) => o.label)).toEqual([
      'Year 10',
      'Year 4',
      'Year 6',
      'Year 8',
    ]);
    expect(meta.indicators).toEqual([
      { id: 'dP0Zw', column: 'enrolments', label: 'Enrolments', decimalPlaces: 0 },
      { id: 'O7CLF', column: 'sess_authorised', label: 'Number of authorised sessions', decimalPlaces: 0 },
      { id: '7zXob', column: 'sess_possible', label: 'Number of possible sessions', decimalPlaces: 0 },
      { id: 'pTSoj', column: 'sess_unauthorised', label: 'Number of unauthorised sessions', decimalPlaces: 0 },
      {
        id: 'IzBzg',
        column: 'sess_unauthorised_percent',
        label: 'Percentage of unauthorised sessions',
        unit: '%',
        decimalPlaces: 2,
      },
    ]);
    expect(meta.geographicLevels).toEqual([
      { code: 'LA', label: 'Local authority' },
      { code: 'NAT', label: 'National' },
      { code: 'REG', label: 'Regional' },
      { code: 'SCH', label: 'School' },
    ]);
    expect(meta.locations.map((g: { level: { code: string } }) => g.level.code)).toEqual(['LA', 'NAT', 'REG', 'SCH']);
    // Each level's options carry that level's identifying properties.
    expect(meta.locations[0].options[0]).toEqual({ id: '7zXob', label: 'Barnet', code: 'E09000003', oldCode: '302' });
    expect(meta.locations[1].options).toEqual([{ id: 'IzBzg', label: 'England', code: 'E92000001' }]);
    expect(meta.locations[3].options[0]).toEqual({
      id: '6jrfe',
      label: 'Colindale Primary School',
      urn: '101269',
      laEstab: '3022014',
    });
    expect(meta.timePeriods).toEqual([
      { code: 'AY', period: '2020/2021', label: '2020/21' },
      { code: 'AY', period: '2021/2022', label: '2021/22' },
      { code: 'AY', period: '2022/2023', label: '2022/23' },
    ]);
  });

  it.each([
    ['types=Filters', ['filters']],
    ['types=Filters,Filters', ['filters']],
    ['types=Filters&types=Locations', ['filters', 'geographicLevels', 'locations']],
    ['types=Indicators,TimePeriods', ['indicators', 'timePeriods']],
    ['types[0]=Locations&types[1]=Indicators', ['indicators', 'geographicLevels', 'locations']],
  ])('?%s returns only those sections (the others are empty arrays)', async (query, filled) => {
    const res = await get(`/v1/data-sets/${FIXTURE}/meta?${query}`);
    expect(res.statusCode).toBe(200);
    const meta = res.json();
    expect(Object.keys(meta).sort()).toEqual(['filters', 'geographicLevels', 'indicators', 'locations', 'timePeriods']);
    for (const [section, items] of Object.entries(meta)) {
      expect((items as unknown[]).length > 0, section).toBe(filled.includes(section));
    }
  });

  it.each([
    ['types=filters', [['types[0]', 'filters']]],
    [
      'types=invalid1,invalid2',
      [
        ['types[0]', 'invalid1'],
        ['types[1]', 'invalid2'],
      ],
    ],
    ['types=Filters&types=locations', [['types[1]', 'locations']]],
    ['types=', [['types[0]', null]]],
    ['types=%20', [['types[0]', null]]],
  ])('?%s is a 400 AllowedValue, even for an unknown data set', async (query, expected) => {
    for (const id of [FIXTURE, '0d0f2d3e-aaaa-4bbb-8ccc-123456789abc']) {
      const res = await get(`/v1/data-sets/${id}/meta?${query}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().errors).toEqual(
        expected.map(([path, value]) => ({
          path,
          code: 'AllowedValue',
          message: 'Must be one of the allowed values.',
          detail: { value, allowed: ['Filters', 'Indicators', 'Locations', 'TimePeriods'] },
        })),
      );
    }
  });

  it('orders time periods by code then period, and labels them', async () => {
    const res = await get(`/v1/data-sets/${ids.own}/meta?types=TimePeriods&dataSetVersion=1.1`);
    expect(res.json().timePeriods).toEqual([
      { code: 'AY', period: '2020/2021', label: '2020/21' },
      { code: 'CY', period: '2021', label: '2021' },
      { code: 'M1', period: '2020', label: '2020 January' },
      { code: 'M10', period: '2020', label: '2020 October' },
      { code: 'M2', period: '2020', label: '2020 February' },
    ]);
  });

  it('selects the version: latest live by default, exact, wildcard; 404 for a missing version or data set', async () => {
    // Latest live version of `own` is 1.2 (Withdrawn versions stay viewable); its meta is the small meta.
    expect((await get(`/v1/data-sets/${ids.own}/meta?types=TimePeriods`)).json().timePeriods).toHaveLength(2);
    expect(
      (await get(`/v1/data-sets/${ids.own}/meta?types=TimePeriods&dataSetVersion=`)).json().timePeriods,
    ).toHaveLength(2);
    expect(
      (await get(`/v1/data-sets/${ids.own}/meta?types=TimePeriods&dataSetVersion=*`)).json().timePeriods,
    ).toHaveLength(2);
    expect(
      (await get(`/v1/data-sets/${ids.own}/meta?types=TimePeriods&dataSetVersion=1.*`)).json().timePeriods,
    ).toHaveLength(5);
    expect((await get(`/v1/data-sets/${ids.own}/meta?dataSetVersion=3.0`)).statusCode).toBe(404);
    expect((await get(`/v1/data-sets/${FIXTURE}/meta?dataSetVersion=2.0`)).statusCode).toBe(404);
    expect((await get('/v1/data-sets/0d0f2d3e-aaaa-4bbb-8ccc-123456789abc/meta')).statusCode).toBe(404);
    expect((await get(`/v1/data-sets/${ids.changes}/meta?foo=1`)).json().errors[0]).toMatchObject({
      path: 'foo',
      code: 'UnknownField',
    });
  });

  it('is 403 for a draft version without its preview token, 200 with it', async () => {
    const denied = await get(`/v1/data-sets/${ids.own}/meta?dataSetVersion=2.0`);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toMatchObject({ status: 403, title: 'Forbidden' });
    const allowed = await get(`/v1/data-sets/${ids.own}/meta?dataSetVersion=2.0`, { 'preview-token': tokens.draft! });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json().filters).toHaveLength(2);
  });

  it('shows the meta of the version there is now: a draft deleted and imported again under its number has the new meta', async () => {
    // The app keeps the meta it has read per version; this asks for a draft's meta, deletes the draft, imports
    // another file under the same number and asks again, in the same app.
    const dataSetId = await createDataSet(t.database.db, { status: 'Published' });
    const draft = async (filter: string, indicator: string) => {
      const { versionId } = await importCsvVersion(t.database, {
        dataSetId,
        version: '1.0',
        status: 'Draft',
        data: `time_period,time_identifier,geographic_level,country_code,country_name,${filter},${indicator}\n202223,Academic year,National,E92000001,England,Total,5\n`,
        meta: `col_name,col_type,label,indicator_grouping,indicator_unit,indicator_dp,filter_hint,filter_grouping_column\n${filter},Filter,${filter} label,,,,,\n${indicator},Indicator,${indicator} label,,,0,,\n`,
      });
      const token = await insertPreviewToken(t.database.db, versionId, new Date(Date.now() + 3_600_000));
      return { 'preview-token': token };
    };
    const summary = (meta: { filters: Array<{ column: string }>; indicators: Array<{ column: string }> }) => ({
      filters: meta.filters.map((f) => f.column),
      indicators: meta.indicators.map((i) => i.column),
    });

    const first = await draft('school_type', 'pupils');
    const before = await get(`/v1/data-sets/${dataSetId}/meta?dataSetVersion=1.0`, first);
    expect(before.statusCode).toBe(200);
    expect(summary(before.json())).toEqual({ filters: ['school_type'], indicators: ['pupils'] });
    // The version's summary too (kept per version like the meta).
    const versionBefore = await get(`/v1/data-sets/${dataSetId}/versions/1.0`, first);
    expect(versionBefore.json()).toMatchObject({ filters: ['school_type label'], indicators: ['pupils label'] });

    await deleteDraftVersion(t.database.db, dataSetId, '1.0');
    expect((await get(`/v1/data-sets/${dataSetId}/meta?dataSetVersion=1.0`, first)).statusCode).toBe(404);

    const second = await draft('phase', 'teachers');
    const after = await get(`/v1/data-sets/${dataSetId}/meta?dataSetVersion=1.0`, second);
    expect(after.statusCode).toBe(200);
    expect(summary(after.json())).toEqual({ filters: ['phase'], indicators: ['teachers'] });
    expect(after.headers.etag).not.toBe(before.headers.etag);
    const versionAfter = await get(`/v1/data-sets/${dataSetId}/versions/1.0`, second);
    expect(versionAfter.json()).toMatchObject({ filters: ['phase label'], indicators: ['teachers label'] });
  });
});

describe('GET /v1/data-sets/{dataSetId}/meta, answered again', () => {
  const url = `/v1/data-sets/${FIXTURE}/meta`;

  it('sends the same JSON plain, gzip and brotli, with one tag, and 304 for it', async () => {
    const plain = await get(url);
    const gzip = await get(url, { 'accept-encoding': 'gzip' });
    const br = await get(url, { 'accept-encoding': 'gzip, deflate, br' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(br.headers['content-encoding']).toBe('br');
    expect(gunzipSync(gzip.rawPayload).toString()).toBe(plain.body);
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
    expect(plain.json().locations.length).toBeGreaterThan(0);
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=300, must-revalidate');
    for (const answer of [plain, gzip, br]) {
      // Each name once (`Accept-Encoding` was sent twice, once in each case).
      const names = String(answer.headers.vary)
        .split(',')
        .map((name) => name.trim().toLowerCase());
      expect(names.sort()).toEqual(['accept-encoding', 'preview-token']);
    }
    const etag = plain.headers.etag as string;
    expect(etag).toMatch(/^W\/".+"$/);
    expect([gzip.headers.etag, br.headers.etag]).toEqual([etag, etag]);

    const again = await get(url, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
  });

  it('has one tag per set of sections, whatever their order or repetition', async () => {
    const both = await get(`${url}?types=Filters,Indicators`);
    const reordered = await get(`${url}?types=Indicators&types=Filters&types=Indicators`);
    const filters = await get(`${url}?types=Filters`);
    expect(reordered.body).toBe(both.body);
    expect(reordered.headers.etag).toBe(both.headers.etag);
    expect(filters.headers.etag).not.toBe(both.headers.etag);
    expect(filters.json()).toEqual({ ...both.json(), indicators: [] });
  });

  it('is private to a preview token holder', async () => {
    const draft = await get(`/v1/data-sets/${ids.own}/meta?dataSetVersion=2.0`, { 'preview-token': tokens.draft! });
    expect(draft.statusCode).toBe(200);
    expect(draft.headers['cache-control']).toBe('private, no-cache');
    // The answer kept for the draft is not a way around its token.
    expect((await get(`/v1/data-sets/${ids.own}/meta?dataSetVersion=2.0`)).statusCode).toBe(403);
  });
});

describe('GET /v1/data-sets/{dataSetId}/versions/{dataSetVersion}/changes', () => {
  it('returns the major and minor changes, option changes grouped under their filter or level', async () => {
    const res = await get(`/v1/data-sets/${ids.changes}/versions/2.1/changes`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      versionNumber: '2.1',
      notes: 'Adds a year.',
      majorChanges: {
        filters: [{ previousState: filter('F0', 'Old filter') }],
        filterOptions: [
          {
            filter: filter('F1', 'School type'),
            options: [
              { previousState: { id: 'o1', label: 'Special' } },
              { previousState: { id: 'o2', label: 'Other' } },
            ],
          },
          { filter: filter('F2', 'Year'), options: [{ previousState: { id: 'o3', label: 'Year 12' } }] },
        ],
        geographicLevels: [{ previousState: { code: 'LAD', label: 'Local authority district' } }],
        locationOptions: [
          {
            level: { code: 'LA', label: 'Local authority' },
            options: [
              {
                previousState: { id: 'l1', label: 'Barnet', code: 'E09000003', oldCode: '302' },
                currentState: { id: 'l1', label: 'Barnet', code: 'E09000099', oldCode: '302' },
              },
            ],
          },
        ],
      },
      minorChanges: {
        geographicLevels: [{ currentState: { code: 'REG', label: 'Regional' } }],
        indicators: [
          {
            previousState: { id: 'i1', column: 'enrolments', label: 'Enrolments' },
            currentState: { id: 'i1', column: 'enrolments', label: 'Pupils enrolled', decimalPlaces: 0 },
          },
        ],
        locationGroups: [{ currentState: { level: { code: 'REG', label: 'Regional' } } }],
        timePeriods: [{ currentState: { code: 'AY', period: '2023/2024', label: '2023/24' } }],
      },
      patchHistory: [],
    });
  });

  it('lists the patch history oldest first with includePatchHistory=true, [] without', async () => {
    const res = await get(`/v1/data-sets/${ids.changes}/versions/2.1.2/changes?includePatchHistory=true`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      versionNumber: '2.1.2',
      notes: 'Fixes another label.',
      majorChanges: {},
      minorChanges: {},
    });
    expect(body.patchHistory.map((p: { versionNumber: string }) => p.versionNumber)).toEqual(['2.1', '2.1.1']);
    expect(body.patchHistory[1]).toEqual({
      versionNumber: '2.1.1',
      notes: 'Fixes a label.',
      majorChanges: {},
      minorChanges: {
        filterOptions: [
          {
            filter: filter('F1', 'School type'),
            options: [{ previousState: { id: 'o4', label: 'Primry' }, currentState: { id: 'o4', label: 'Primary' } }],
          },
        ],
      },
    });
    expect((await get(`/v1/data-sets/${ids.changes}/versions/2.1.2/changes`)).json().patchHistory).toEqual([]);
    expect(
      (await get(`/v1/data-sets/${ids.changes}/versions/2.1.2/changes?includePatchHistory=false`)).json().patchHistory,
    ).toEqual([]);
  });

  it('gives [] (not an error) for includePatchHistory on a non-patch version', async () => {
    const res = await get(`/v1/data-sets/${ids.changes}/versions/2.1/changes?includePatchHistory=true`);
    expect(res.statusCode).toBe(200);
    expect(res.json().patchHistory).toEqual([]);
  });

  it('is 403 when a patch in the history is not viewable, and resolves wildcards', async () => {
    expect((await get(`/v1/data-sets/${ids.changes}/versions/3.0.1/changes`)).statusCode).toBe(200);
    expect((await get(`/v1/data-sets/${ids.changes}/versions/3.0.1/changes?includePatchHistory=true`)).statusCode).toBe(
      403,
    );
    expect((await get(`/v1/data-sets/${ids.changes}/versions/2.1.*/changes`)).json().versionNumber).toBe('2.1.2');
  });

  it('answers 400 for a bad includePatchHistory, 404 for an unknown version, 403 for a draft', async () => {
    const bad = await get(`/v1/data-sets/${ids.changes}/versions/2.1/changes?includePatchHistory=maybe`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([
      {
        path: 'includePatchHistory',
        code: 'InvalidValue',
        message: 'Must be a valid value. Check that the type and format are correct.',
        detail: { value: 'maybe' },
      },
    ]);
    expect((await get(`/v1/data-sets/${ids.changes}/versions/9.9/changes`)).statusCode).toBe(404);
    expect((await get(`/v1/data-sets/${ids.changes}/versions/3.0.0/changes`)).statusCode).toBe(403);
    expect((await get(`/v1/data-sets/${FIXTURE}/versions/1.0/changes`)).json()).toEqual({
      versionNumber: '1.0',
      notes: 'First release.',
      majorChanges: {},
      minorChanges: {},
      patchHistory: [],
    });
  });
});

describe('GET /v1/data-sets/{dataSetId}/csv', () => {
  it('sends the stored gzip as-is when the client accepts gzip: the original CSV with labels', async () => {
    const res = await get(`/v1/data-sets/${FIXTURE}/csv`, { 'accept-encoding': 'gzip, deflate, br' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['content-disposition']).toContain(`attachment; filename=${FIXTURE}_v1.0.csv`);
    expect(res.headers['x-robots-tag']).toBe('noindex');
    const csv = gunzipSync(res.rawPayload).toString('utf8');
    expect(csv).toBe(await readFile(ABSENCE_SCHOOL.dataPath, 'utf8'));
  });

  it('decompresses for clients that do not accept gzip; header row, 216 rows, labels not ids', async () => {
    const res = await get(`/v1/data-sets/${FIXTURE}/csv`, { 'accept-encoding': 'identity' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    const lines = res.body.trimEnd().split(/\r?\n/);
    expect(lines[0]).toBe(
      'time_period,time_identifier,geographic_level,country_code,country_name,region_code,region_name,old_la_code,new_la_code,la_name,' +
        'school_urn,school_laestab,school_name,school_type,academy_type,ncyear,enrolments,sess_possible,sess_authorised,sess_unauthorised,sess_unauthorised_percent',
    );
    expect(lines).toHaveLength(1 + 216);
    expect(res.body).toContain('Academic year');
    expect(res.body).toContain('Barnsley');
    expect(res.body).toContain('State-funded primary');
    // No public ids (Sqids) in place of labels.
    expect(lines.slice(1).every((line) => !/,(dP0Zw|O7CLF|7zXob|IzBzg),/.test(line))).toBe(true);
  });

  it('answers HEAD with the headers only', async () => {
    const res = await t.app.inject({
      method: 'HEAD',
      url: `/v1/data-sets/${FIXTURE}/csv`,
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toContain(`${FIXTURE}_v1.0.csv`);
    expect(res.body).toBe('');
    // The pool is not left with a busy client by the unread stream.
    expect((await get(`/v1/data-sets/${FIXTURE}/csv`)).statusCode).toBe(200);
  });

  it('names the file after the version, resolves versions, and 304s a matching ETag', async () => {
    const v11 = await get(`/v1/data-sets/${ids.own}/csv?dataSetVersion=1.1`);
    expect(v11.statusCode).toBe(200);
    expect(v11.headers['content-disposition']).toContain(`filename=${ids.own}_v1.1.csv`);
    expect(v11.body.trimEnd().split('\n')).toHaveLength(3);
    const wildcard = await get(`/v1/data-sets/${ids.own}/csv?dataSetVersion=1.*`);
    expect(wildcard.headers['content-disposition']).toContain('_v1.1.csv');
    const etag = v11.headers.etag as string;
    expect(etag).toBeTruthy();
    const cached = await get(`/v1/data-sets/${ids.own}/csv?dataSetVersion=1.1`, { 'if-none-match': etag });
    expect(cached.statusCode).toBe(304);
    expect(cached.body).toBe('');
  });

  it('downloads a Withdrawn latest version, 403s a draft without token, 404s a missing version', async () => {
    const latest = await get(`/v1/data-sets/${ids.own}/csv`);
    expect(latest.statusCode).toBe(200);
    expect(latest.headers['content-disposition']).toContain('_v1.2.csv');
    expect((await get(`/v1/data-sets/${ids.own}/csv?dataSetVersion=2.0`)).statusCode).toBe(403);
    const preview = await get(`/v1/data-sets/${ids.own}/csv?dataSetVersion=2.0`, { 'preview-token': tokens.draft! });
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toBe('time_period,enrolments\n202021,20\n');
    expect((await get(`/v1/data-sets/${FIXTURE}/csv?dataSetVersion=2.0`)).statusCode).toBe(404);
    expect((await get(`/v1/data-sets/${ids.own}/csv?dataSetVersion=2.*`)).statusCode).toBe(404);
    expect((await get('/v1/data-sets/x/csv')).statusCode).toBe(404);
    expect((await get(`/v1/data-sets/${ids.own}/csv?format=csv`)).statusCode).toBe(400);
  });
});
