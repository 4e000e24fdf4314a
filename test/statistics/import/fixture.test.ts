import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { importDataSetVersion } from '../../../src/statistics/import/import.js';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { RowIndexStore } from '../../../src/statistics/query/engine/index.js';
import { rebuildStorage } from '../../../src/statistics/storage/rebuild.js';
import { StoredColumnsCache } from '../../../src/statistics/query/engine/stored/stored-columns.js';
import { loadQueryVersionMeta } from '../../../src/statistics/query/engine/version-meta-cache.js';
import { ABSENCE_SCHOOL, createDataSet } from '../../helpers/statistics.js';

// The template database holds the AbsenceSchool fixture, imported by test/helpers/template.ts through the seed.
let database: TestDatabase;
let versionId: number;
let rowsTable: string;

beforeAll(async () => {
  database = await createTestDatabase();
  const version = await database.db
    .selectFrom('data_set_versions')
    .selectAll()
    .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
    .executeTakeFirstOrThrow();
  versionId = version.id;
  rowsTable = version.rows_table!;
});
afterAll(async () => {
  await database.drop();
});

describe('the AbsenceSchool fixture in the template', () => {
  it('is a published version 1.0 with 216 rows', async () => {
    const version = await database.db
      .selectFrom('data_set_versions')
      .selectAll()
      .where('id', '=', versionId)
      .executeTakeFirstOrThrow();
    expect(version).toMatchObject({
      major: 1,
      minor: 0,
      patch: 0,
      status: 'Published',
      total_results: 216,
      notes: 'First release.',
    });
    expect(version.published_at?.toISOString()).toBe('2024-03-21T09:30:00.000Z');
    const dataSet = await database.db
      .selectFrom('data_sets')
      .selectAll()
      .where('id', '=', ABSENCE_SCHOOL.dataSetId)
      .executeTakeFirstOrThrow();
    expect(dataSet).toMatchObject({
      status: 'Published',
      publication_id: ABSENCE_SCHOOL.publicationId,
      title: 'Absence rates by school and geography',
    });
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM ${sql.table(`stats_data.${rowsTable}`)}`.execute(database.db);
    expect(rows[0]!.n).toBe(216);
  });

  it('has the reference public ids for filters, options and indicators', async () => {
    const filters = await database.db
      .selectFrom('version_filters')
      .select(['public_id', 'column_name', 'label', 'hint', 'ordinal'])
      .where('version_id', '=', versionId)
      .orderBy('ordinal')
      .execute();
    expect(filters).toEqual([
      {
        public_id: 'dP0Zw',
        column_name: 'academy_type',
        label: 'Academy type',
        hint: 'Only applicable for academies, otherwise no value',
        ordinal: 1,
      },
      {
        public_id: 'O7CLF',
        column_name: 'ncyear',
        label: 'National Curriculum year',
        hint: 'Ranges from years 1 to 11',
        ordinal: 2,
      },
      { public_id: '7zXob', column_name: 'school_type', label: 'School type', hint: '', ordinal: 3 },
    ]);
    const options = await database.db
      .selectFrom('version_filter_options as o')
      .innerJoin('version_filters as f', 'f.id', 'o.filter_id')
      .select(['f.column_name', 'o.public_id', 'o.label', 'o.is_default'])
      .where('f.version_id', '=', versionId)
      .orderBy('o.id')
      .execute();
    expect(options.map((o) => `${o.column_name}:${o.public_id}:${o.label}`)).toEqual([
      'academy_type:dP0Zw:Primary sponsor led academy',
      'academy_type:O7CLF:Secondary free school',
      'academy_type:7zXob:Secondary sponsor led academy',
      'ncyear:pTSoj:Year 10',
      'ncyear:IzBzg:Year 4',
      'ncyear:it6Xr:Year 6',
      'ncyear:LxWjE:Year 8',
      'school_type:6jrfe:State-funded primary',
      'school_type:0kT5D:State-funded secondary',
      'school_type:HTzLj:Total',
    ]);
    expect(options.filter((o) => o.is_default).map((o) => o.label)).toEqual(['Total']);
    const indicators = await database.db
      .selectFrom('version_indicators')
      .select(['public_id', 'column_name', 'unit', 'decimal_places', 'ordinal'])
      .where('version_id', '=', versionId)
      .orderBy('ordinal')
      .execute();
    expect(indicators).toEqual([
      { public_id: 'dP0Zw', column_name: 'enrolments', unit: '', decimal_places: 0, ordinal: 1 },
      { public_id: 'O7CLF', column_name: 'sess_authorised', unit: '', decimal_places: 0, ordinal: 2 },
      { public_id: '7zXob', column_name: 'sess_possible', unit: '', decimal_places: 0, ordinal: 3 },
      { public_id: 'pTSoj', column_name: 'sess_unauthorised', unit: '', decimal_places: 0, ordinal: 4 },
      { public_id: 'IzBzg', column_name: 'sess_unauthorised_percent', unit: '%', decimal_places: 2, ordinal: 5 },
    ]);
  });

  it('has the reference location ids with every code of their level', async () => {
    const locations = await database.db
      .selectFrom('version_locations as vl')
      .innerJoin('locations as l', 'l.id', 'vl.location_id')
      .select(['l.public_id', 'l.level', 'l.label', 'l.code', 'l.old_code', 'l.urn', 'l.la_estab'])
      .where('vl.version_id', '=', versionId)
      .orderBy('l.level')
      .orderBy('l.label')
      .execute();
    expect(
      locations.map(
        (l) =>
          `${l.level}:${l.public_id}:${l.label}:${l.code ?? ''}:${l.old_code ?? ''}:${l.urn ?? ''}:${l.la_estab ?? ''}`,
      ),
    ).toEqual([
      'LA:7zXob:Barnet:E09000003:302::',
      'LA:dP0Zw:Barnsley:E08000016:370::',
      'LA:pTSoj:Kingston upon Thames / Richmond upon Thames:E09000021 / E09000027:314::',
      'LA:O7CLF:Sheffield:E08000019:373::',
      'NAT:IzBzg:England:E92000001:::',
      'REG:LxWjE:Outer London:E13000002:::',
      'REG:it6Xr:Yorkshire and The Humber:E12000003:::',
      'SCH:6jrfe:Colindale Primary School:::101269:3022014',
      'SCH:BT7J3:Greenhill Primary School:::145374:3732341',
      'SCH:arLPb:Hoyland Springwood Primary School:::141973:3702039',
      'SCH:0kT5D:King Athelstan Primary School:::102579:3142032',
      'SCH:YPHKM:Newfield Secondary School:::140821:3734008',
      'SCH:HTzLj:Penistone Grammar School:::106653:3704027',
      'SCH:qFjG7:The Kingston Academy:::141862:3144001',
      'SCH:CpId1:Wren Academy Finchley:::135507:3026906',
    ]);
    const levels = await database.db
      .selectFrom('version_geographic_levels')
      .select('code')
      .where('version_id', '=', versionId)
      .orderBy('code')
      .execute();
    expect(levels.map((l) => l.code)).toEqual(['LA', 'NAT', 'REG', 'SCH']);
  });

  it('numbers time periods chronologically', async () => {
    const periods = await database.db
      .selectFrom('version_time_periods')
      .select(['id', 'period', 'code'])
      .where('version_id', '=', versionId)
      .orderBy('id')
      .execute();
    expect(periods.map((p) => `${p.period}|${p.code}`)).toEqual(['2020/2021|AY', '2021/2022|AY', '2022/2023|AY']);
  });

  it('keeps the reference row ids', async () => {
    const { rows } = await sql<{
      id: number;
      period: string;
      geographic_level: string;
      la: string | null;
      sch: string | null;
      ncyear: string | null;
      school_type: string | null;
      enrolments: string;
      sess_authorised: string;
    }>`
      SELECT r.id, tp.period, r.geographic_level, la.label AS la, sch.label AS sch, ny.label AS ncyear, st.label AS school_type,
             r.i1 AS enrolments, r.i2 AS sess_authorised
      FROM ${sql.table(`stats_data.${rowsTable}`)} r
      JOIN version_time_periods tp ON tp.id = r.time_period_id
      LEFT JOIN locations la ON la.id = r.l_la
      LEFT JOIN locations sch ON sch.id = r.l_sch
      LEFT JOIN version_filter_options ny ON ny.id = r.f2
      LEFT JOIN version_filter_options st ON st.id = r.f3
      ORDER BY r.id`.execute(database.db);
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 216 }, (_, i) => i + 1));
    expect(rows[0]).toMatchObject({
      period: '2020/2021',
      geographic_level: 'LA',
      la: 'Barnsley',
      sch: null,
      ncyear: 'Year 4',
      school_type: 'Total',
    });
    expect(rows[64]).toMatchObject({
      id: 65,
      period: '2022/2023',
      la: 'Barnsley',
      ncyear: 'Year 4',
      school_type: 'Total',
      sess_authorised: '577798',
    });
    expect(rows[168]).toMatchObject({
      id: 169,
      period: '2020/2021',
      la: 'Barnsley',
      sch: 'Hoyland Springwood Primary School',
      enrolments: '296352',
    });
    const levelsOf = (from: number, to: number) =>
      [...new Set(rows.slice(from - 1, to).map((r) => `${r.geographic_level}${r.sch ? '+SCH' : ''}`))].sort();
    expect(levelsOf(1, 96)).toEqual(['LA']);
    expect(levelsOf(97, 144)).toEqual(['REG']);
    expect(levelsOf(145, 168)).toEqual(['NAT']);
    expect(levelsOf(169, 216)).toEqual(['LA+SCH', 'SCH+SCH']);
  });

  it('stores the rows physically in the default result order (time period newest first, then id)', async () => {
    const { rows } = await sql<{ id: number; time_period_id: number }>`
      SELECT id, time_period_id FROM ${sql.table(`stats_data.${rowsTable}`)} ORDER BY ctid`.execute(database.db);
    const expected = [...rows].sort((a, b) => b.time_period_id - a.time_period_id || a.id - b.id);
    expect(rows.map((r) => r.id)).toEqual(expected.map((r) => r.id));
  });

  it('has one GIN index over the location and filter columns and the level, but a column holding one value in every row', async () => {
    const table = sql.table(`stats_data.${rowsTable}`);
    const { rows: columns } = await sql<{ column_name: string }>`
      SELECT column_name FROM information_schema.columns WHERE table_schema = 'stats_data' AND table_name = ${rowsTable}`.execute(
      database.db,
    );
    const facets = columns
      .map((c) => c.column_name)
      .filter((c) => c === 'geographic_level' || /^(f\d+|l_[a-z0-9_]+)$/.test(c));
    const { rows: indexes } = await sql<{ indexname: string; indexdef: string }>`
      SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'stats_data' AND tablename = ${rowsTable}`.execute(
      database.db,
    );
    const oneValued: string[] = [];
    for (const column of facets) {
      const { rows } = await sql<{
        n: number;
      }>`SELECT count(DISTINCT ${sql.ref(column)})::int AS n FROM ${table}`.execute(database.db);
      if (rows[0]!.n <= 1) oneValued.push(column);
    }
    // The fixture has both kinds: its national location is England in every row.
    expect(oneValued).toContain('l_nat');
    const gin = indexes.find((i) => i.indexname === `${rowsTable}_facets_idx`);
    const indexedColumns = /USING gin \((.*)\)/.exec(gin?.indexdef ?? '')?.[1]?.split(', ');
    expect(indexedColumns?.sort()).toEqual(facets.filter((c) => !oneValued.includes(c)).sort());
    expect(indexedColumns!.length).toBeGreaterThan(3);
    expect(indexes.map((i) => i.indexname).sort()).toEqual([
      `${rowsTable}_default_order_idx`,
      `${rowsTable}_facets_idx`,
      `${rowsTable}_pkey`,
    ]);
  });

  it('stores the original data file gzip-compressed', async () => {
    const file = await database.db
      .selectFrom('data_set_version_files')
      .selectAll()
      .where('version_id', '=', versionId)
      .executeTakeFirstOrThrow();
    expect(gunzipSync(file.content_gzip).equals(readFileSync(ABSENCE_SCHOOL.dataPath))).toBe(true);
    expect(file.size_bytes).toBe(file.content_gzip.length);
  });

  it('stores the row index a build from its row table stores, to the byte (made from the rows as the file was read)', async () => {
    // The fixture's (reference row ids), and the same rows shuffled in file order (ids in file order, periods mixed).
    const dir = await mkdtemp(path.join(tmpdir(), 'import-index-'));
    const [header, ...lines] = readFileSync(ABSENCE_SCHOOL.dataPath, 'utf8').trimEnd().split('\n');
    const shuffled = lines.map((line, i) => ({ line, key: (i * 7919) % lines.length })).sort((a, b) => a.key - b.key);
    await writeFile(path.join(dir, 'data.csv'), `${[header, ...shuffled.map((l) => l.line)].join('\n')}\n`);
    const dataSetId = await createDataSet(database.db, { title: 'Shuffled' });
    const imported = await importDataSetVersion(database, {
      dataSetId,
      version: '1.0',
      dataPath: path.join(dir, 'data.csv'),
      metaPath: ABSENCE_SCHOOL.metaPath,
      rowTable: true,
    });
    await rm(dir, { recursive: true, force: true });

    for (const table of [rowsTable, imported.rowsTable]) {
      const stored = () =>
        database.db
          .selectFrom('version_row_index_chunks')
          .select(['part', 'chunk', 'bytes'])
          .where('rows_table', '=', table)
          .orderBy('part')
          .orderBy('chunk')
          .execute();
      const fromImport = await stored();
      expect(fromImport.length).toBeGreaterThan(2);
      await database.db.deleteFrom('version_row_index_chunks').where('rows_table', '=', table).execute();
      expect(await rebuildStorage(database.db, {}, 60000, () => undefined)).toBe(1);
      expect(await stored(), table).toEqual(fromImport);
    }
  });

  it('by default writes no row table: the stored row index holds the rows, and queries read it', async () => {
    const dataSetId = await createDataSet(database.db, { title: 'No row table' });
    const imported = await importDataSetVersion(database, {
      dataSetId,
      version: '1.0',
      dataPath: ABSENCE_SCHOOL.dataPath,
      metaPath: ABSENCE_SCHOOL.metaPath,
    });
    const { rows: tables } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'stats_data' AND table_name = ${imported.rowsTable}`.execute(
      database.db,
    );
    expect(tables[0]!.n).toBe(0);
    const version = await database.db
      .selectFrom('data_set_versions')
      .selectAll()
      .where('id', '=', imported.versionId)
      .executeTakeFirstOrThrow();
    expect(version).toMatchObject({ rows_table: imported.rowsTable, total_results: 216 });
    expect([...version.location_levels!].sort()).toEqual(['LA', 'NAT', 'REG', 'SCH']);
    // The same location columns, and the same rows, as the fixture's version with its row table.
    const meta = await loadQueryVersionMeta(database.db, imported.versionId, imported.rowsTable);
    const fixtureMeta = await loadQueryVersionMeta(database.db, versionId, rowsTable);
    expect(meta.locationLevels).toEqual(fixtureMeta.locationLevels);
    const stored = await new StoredColumnsCache().open(database.db, imported.rowsTable, 10000);
    const all = await stored!.query(
      database.db,
      10000,
      { kind: 'const', value: true },
      [{ column: 'time_period_id', direction: 'Desc', kind: 'integer' }],
      0,
      1000,
      [],
    );
    expect(all.total).toBe(216);

    // Over HTTP: from the stored columns (no index in memory), and from an index whose values are not in memory
    // (as while its values part loads): those come from the stored columns too, not from a row table.
    const query = `/v1/data-sets/${dataSetId}/query?pageSize=50&sorts=timePeriod|Asc`;
    const answers = [];
    for (const rowIndexes of [
      new RowIndexStore({ memoryBudgetBytes: 0 }),
      new RowIndexStore({ indicatorValues: false }),
    ]) {
      await rowIndexes.ensure(database.db, meta);
      const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url }), {
        db: database.db,
        logger: false,
        rowIndexes,
      });
      const response = await app.inject(query);
      await app.close();
      expect(response.statusCode, response.body).toBe(200);
      answers.push({ engine: response.headers['x-query-engine'], body: response.json() });
    }
    expect(answers.map((a) => a.engine)).toEqual(['stored', 'index']);
    expect(answers[1]!.body).toEqual(answers[0]!.body);
    expect(answers[0]!.body.results[0].values).not.toEqual({});
  });
});
