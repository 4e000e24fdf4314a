import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishVersion } from '../../../src/statistics/lifecycle/service.js';
import { computeChanges } from '../../../src/statistics/import/change-detection.js';
import { importDataSetVersion } from '../../../src/statistics/import/import.js';
import { writeKeptRows } from '../../../src/statistics/seed/service.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { ABSENCE_SCHOOL, createDataSet } from '../../helpers/statistics.js';

let database: TestDatabase;
let dir: string;
let dataSetId: string;
let renamedMeta: string;

async function changesOf(version: { major: number; minor: number }) {
  return database.db
    .selectFrom('version_changes as c')
    .innerJoin('data_set_versions as v', 'v.id', 'c.version_id')
    .select(['c.kind', 'c.list', 'c.change'])
    .where('v.data_set_id', '=', dataSetId)
    .where('v.major', '=', version.major)
    .where('v.minor', '=', version.minor)
    .orderBy('c.id')
    .execute();
}

async function publicIds(versionId: number) {
  const filters = await database.db
    .selectFrom('version_filters')
    .select(['column_name', 'public_id'])
    .where('version_id', '=', versionId)
    .execute();
  const options = await database.db
    .selectFrom('version_filter_options as o')
    .innerJoin('version_filters as f', 'f.id', 'o.filter_id')
    .select(['o.label', 'o.public_id'])
    .where('f.version_id', '=', versionId)
    .execute();
  const indicators = await database.db
    .selectFrom('version_indicators')
    .select(['column_name', 'public_id'])
    .where('version_id', '=', versionId)
    .execute();
  return {
    filters: Object.fromEntries(filters.map((f) => [f.column_name, f.public_id])),
    options: Object.fromEntries(options.map((o) => [o.label, o.public_id])),
    indicators: Object.fromEntries(indicators.map((i) => [i.column_name, i.public_id])),
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = await mkdtemp(path.join(tmpdir(), 'import-changes-'));
  dataSetId = await createDataSet(database.db, { title: 'Version history' });
  renamedMeta = path.join(dir, 'meta-renamed.csv');
  await writeFile(
    renamedMeta,
    (await readFile(ABSENCE_SCHOOL.metaPath, 'utf8')).replace(
      'enrolments,Indicator,Enrolments,',
      'enrolments,Indicator,Number of enrolments,',
    ),
  );
});
afterAll(async () => {
  await database.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('changes against the latest live version', () => {
  const ids: Record<string, Awaited<ReturnType<typeof publicIds>>> = {};

  it('1.0 (two years) has no changes', async () => {
    const data = path.join(dir, 'two-years.csv.gz');
    expect(await writeKeptRows(ABSENCE_SCHOOL.dataPath, data, { time_period: { lte: '202122' } })).toBe(144);
    const result = await importDataSetVersion(database, {
      dataSetId,
      version: '1.0',
      dataPath: data,
      metaPath: ABSENCE_SCHOOL.metaPath,
    });
    expect(result).toMatchObject({ rows: 144, majorChanges: 0, minorChanges: 0 });
    expect(await changesOf({ major: 1, minor: 0 })).toEqual([]);
    ids['1.0'] = await publicIds(result.versionId);
  });

  it('1.1 adds a time period and renames an indicator: minor changes, same ids', async () => {
    const result = await importDataSetVersion(database, {
      dataSetId,
      version: '1.1',
      dataPath: ABSENCE_SCHOOL.dataPath,
      metaPath: renamedMeta,
      notes: 'Adds 2022/23.',
    });
    expect(result).toMatchObject({ rows: 216, majorChanges: 0, minorChanges: 2 });
    ids['1.1'] = await publicIds(result.versionId);
    expect(ids['1.1']).toEqual(ids['1.0']);
    const enrolments = ids['1.0']!.indicators.enrolments!;
    expect(await changesOf({ major: 1, minor: 1 })).toEqual([
      {
        kind: 'minor',
        list: 'indicators',
        change: {
          previousState: { id: enrolments, column: 'enrolments', label: 'Enrolments', decimalPlaces: 0 },
          currentState: { id: enrolments, column: 'enrolments', label: 'Number of enrolments', decimalPlaces: 0 },
        },
      },
      {
        kind: 'minor',
        list: 'timePeriods',
        change: { currentState: { code: 'AY', period: '2022/2023', label: '2022/23' } },
      },
    ]);
  });

  it('2.0 drops an option (and the school only it had): major changes', async () => {
    const data = path.join(dir, 'no-free-schools.csv.gz');
    await writeKeptRows(ABSENCE_SCHOOL.dataPath, data, { academy_type: { notIn: ['Secondary free school'] } });
    const result = await importDataSetVersion(database, {
      dataSetId,
      version: '2.0',
      dataPath: data,
      metaPath: renamedMeta,
    });
    expect(result).toMatchObject({ rows: 210, majorChanges: 2, minorChanges: 0 });
    const before = ids['1.1']!;
    expect(await changesOf({ major: 2, minor: 0 })).toEqual([
      {
        kind: 'major',
        list: 'filterOptions',
        change: {
          filter: {
            id: before.filters.academy_type,
            column: 'academy_type',
            label: 'Academy type',
            hint: 'Only applicable for academies, otherwise no value',
          },
          previousState: { id: before.options['Secondary free school'], label: 'Secondary free school' },
        },
      },
      {
        kind: 'major',
        list: 'locationOptions',
        // Locations are global: the school has the fixture's id everywhere.
        change: {
          level: { code: 'SCH', label: 'School' },
          previousState: { id: 'qFjG7', label: 'The Kingston Academy', urn: '141862', laEstab: '3144001' },
        },
      },
    ]);
    const after = await publicIds(result.versionId);
    const { ['Secondary free school']: _dropped, ...kept } = before.options;
    expect(after).toEqual({ ...before, options: kept });
  });

  it('a new level, a removed level and a removed filter', async () => {
    const id = await createDataSet(database.db, { title: 'Levels' });
    const header =
      'time_period,time_identifier,geographic_level,country_code,country_name,region_code,region_name,sex,phase,count';
    const meta = [
      'col_name,col_type,label,indicator_grouping,indicator_unit,indicator_dp,filter_hint,filter_grouping_column',
      'sex,Filter,Sex,,,,,',
      'phase,Filter,Phase,,,,,',
      'count,Indicator,Count,,,0,,',
    ].join('\n');
    const metaPath = path.join(dir, 'levels-meta.csv');
    await writeFile(metaPath, meta);
    const v1 = path.join(dir, 'levels-1.csv');
    await writeFile(
      v1,
      [
        header,
        '2020,Calendar year,National,E92000001,England,,,Male,Primary,1',
        '2020,Calendar year,Regional,E92000001,England,E12000003,Yorkshire and The Humber,Female,Primary,2',
      ].join('\n'),
    );
    await importDataSetVersion(database, { dataSetId: id, version: '1.0', dataPath: v1, metaPath });
    const v2 = path.join(dir, 'levels-2.csv');
    await writeFile(
      v2,
      [
        'time_period,time_identifier,geographic_level,country_code,country_name,new_la_code,old_la_code,la_name,sex,count',
        '2021,Calendar year,Local authority,E92000001,England,E08000016,370,Barnsley,Male,1',
      ].join('\n'),
    );
    const v2Meta = path.join(dir, 'levels-meta-2.csv');
    await writeFile(v2Meta, meta.replace('\nphase,Filter,Phase,,,,,', ''));
    const result = await importDataSetVersion(database, {
      dataSetId: id,
      version: '2.0',
      dataPath: v2,
      metaPath: v2Meta,
    });
    const rows = await database.db
      .selectFrom('version_changes')
      .select(['kind', 'list', 'change'])
      .where('version_id', '=', result.versionId)
      .orderBy('id')
      .execute();
    const summary = rows.map((r) => {
      const change = r.change as {
        previousState?: { label?: string; level?: { code: string }; code?: string; period?: string };
        currentState?: { label?: string; level?: { code: string }; code?: string; period?: string };
      };
      const state = change.previousState ?? change.currentState!;
      return `${r.kind} ${r.list} ${change.previousState ? '-' : '+'}${state.level?.code ?? state.period ?? state.code ?? state.label}`;
    });
    expect(summary).toEqual([
      'major filters -Phase',
      'major filterOptions -Female',
      'major geographicLevels -NAT',
      'major geographicLevels -REG',
      'minor geographicLevels +LA',
      'major locationGroups -REG',
      'minor locationGroups +LA',
      // Neither the new level's locations nor the deleted level's are listed (as the reference's processor).
      'major timePeriods -2020',
      'minor timePeriods +2021',
    ]);
  });

  it('a draft published after a lower version lists its changes against that version', async () => {
    const id = await createDataSet(database.db, { title: 'Publish order' });
    const changesOfVersion = (versionId: number) =>
      database.db
        .selectFrom('version_changes')
        .select(['kind', 'list'])
        .where('version_id', '=', versionId)
        .orderBy('id')
        .execute();
    const twoYears = path.join(dir, 'publish-order-two-years.csv.gz');
    await writeKeptRows(ABSENCE_SCHOOL.dataPath, twoYears, { time_period: { lte: '202122' } });
    await importDataSetVersion(database, {
      dataSetId: id,
      version: '1.0',
      dataPath: twoYears,
      metaPath: ABSENCE_SCHOOL.metaPath,
    });
    // Imported while 1.0 is the latest live version: the added year and the renamed indicator.
    const draft = await importDataSetVersion(database, {
      dataSetId: id,
      version: '2.0',
      dataPath: ABSENCE_SCHOOL.dataPath,
      metaPath: renamedMeta,
      draft: true,
    });
    expect(await changesOfVersion(draft.versionId)).toEqual([
      { kind: 'minor', list: 'indicators' },
      { kind: 'minor', list: 'timePeriods' },
    ]);
    // 1.1 brings the same year and name and is published first.
    await importDataSetVersion(database, {
      dataSetId: id,
      version: '1.1',
      dataPath: ABSENCE_SCHOOL.dataPath,
      metaPath: renamedMeta,
    });
    await publishVersion(database.db, id, '2.0');
    expect(await changesOfVersion(draft.versionId)).toEqual([]);
  });

  it('lists a new or deleted filter, not its options (pure computation)', () => {
    const empty = { filters: [], indicators: [], geographicLevels: ['NAT'], locations: new Map(), timePeriods: [] };
    const sex = {
      id: 'AbCdE',
      column: 'sex',
      label: 'Sex',
      hint: '',
      options: [
        { id: 'FgHiJ', label: 'Male' },
        { id: 'KlMnO', label: 'Female' },
      ],
    };
    expect(computeChanges(empty, { ...empty, filters: [sex] })).toEqual([
      {
        kind: 'minor',
        list: 'filters',
        change: { currentState: { id: 'AbCdE', column: 'sex', label: 'Sex', hint: '' } },
      },
    ]);
    expect(computeChanges({ ...empty, filters: [sex] }, empty)).toEqual([
      {
        kind: 'major',
        list: 'filters',
        change: { previousState: { id: 'AbCdE', column: 'sex', label: 'Sex', hint: '' } },
      },
    ]);
  });

  it('orders option changes across filters: deletions, updates, additions, each by label in natural order (pure computation)', () => {
    // The reference processor's FiltersOptionsAddedAndDeletedAndUpdated_ChangesInsertedIntoDatabaseInCorrectOrder.
    const empty = { filters: [], indicators: [], geographicLevels: ['NAT'], locations: new Map(), timePeriods: [] };
    const option = (id: string, label: string) => ({ id, label });
    const f1 = { id: 'F1', column: 'f1', label: 'Filter 1', hint: 'Hint 1' };
    const f2 = { id: 'F2', column: 'f2', label: 'Filter 2', hint: '' };
    const before = {
      ...empty,
      filters: [
        { ...f1, options: [option('o1', 'd'), option('o2', 'a'), option('o3', 'b'), option('o4', 'k')] },
        { ...f2, options: [option('o5', 'c'), option('o6', 'h'), option('o7', 'f'), option('o8', 'Item 10')] },
      ],
    };
    // Filter 1 is relabelled: its deleted options stay under its previous state.
    const f1After = { ...f1, label: 'Filter one' };
    const after = {
      ...empty,
      filters: [
        { ...f1After, options: [option('o3', 'b2'), option('o4', 'k2'), option('o9', 'j'), option('o10', 'e')] },
        { ...f2, options: [option('o7', 'f2'), option('o8', 'Item 9'), option('o11', 'g'), option('o12', 'l')] },
      ],
    };
    const summary = computeChanges(before, after)
      .filter((c) => c.list === 'filterOptions')
      .map((c) => {
        const change = c.change as {
          filter: { label: string };
          previousState?: { id: string };
          currentState?: { id: string };
        };
        return `${c.kind} ${change.filter.label} ${change.previousState?.id ?? '-'} ${change.currentState?.id ?? '-'}`;
      });
    expect(summary).toEqual([
      'major Filter 1 o2 -',
      'major Filter 2 o5 -',
      'major Filter 1 o1 -',
      'major Filter 2 o6 -',
      'minor Filter one o3 o3',
      'minor Filter 2 o7 o7',
      'minor Filter 2 o8 o8',
      'minor Filter one o4 o4',
      'minor Filter one - o10',
      'minor Filter 2 - o11',
      'minor Filter one - o9',
      'minor Filter 2 - o12',
    ]);
  });
});
