import { EventEmitter } from 'node:events';
import type { FastifyReply } from 'fastify';
import { anonymousClient } from '../../../src/plugins/streaming.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { Table as WasmTable, writeParquet } from 'parquet-wasm';
import { RowIndexStore } from '../../../src/statistics/query/engine/index.js';
import { loadQueryVersionMeta } from '../../../src/statistics/query/engine/version-meta-cache.js';
import { buildTestApp, type TestApp } from '../../helpers/app.js';
import { ABSENCE_SCHOOL, createDataSet, importCsvVersion, multiplyFixtureRows } from '../../helpers/statistics.js';
import { timeIdentifier } from '../../../src/statistics/standard/time-periods.js';

const PARQUET = 'application/vnd.apache.parquet';
const ARROW = 'application/vnd.apache.arrow.stream';
const BASE = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;

interface Meta {
  filters: Array<{ id: string; column: string; label: string }>;
  indicators: Array<{ id: string; column: string }>;
  locations: Array<{ level: { code: string }; options: Array<{ id: string; code?: string; urn?: string }> }>;
}

interface PageJson {
  paging: { totalPages: number; totalResults: number };
  results: Array<{
    timePeriod: { period: string; code: string };
    geographicLevel: string;
    locations: Record<string, string>;
    filters: Record<string, string>;
    values: Record<string, string>;
  }>;
  labels: { filterOptions: Record<string, string>; locations: Record<string, string> };
}

type Row = Record<string, unknown>;

let t: TestApp;
const rowIndexes = new RowIndexStore();
let duck: DuckDBConnection;
let dir: string;
let meta: Meta;

beforeAll(async () => {
  t = await buildTestApp({}, { rowIndexes });
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  dir = await mkdtemp(path.join(tmpdir(), 'columnar-test-'));
  meta = (await t.app.inject({ url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/meta` })).json() as Meta;
});

afterAll(async () => {
  duck?.closeSync();
  await t?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

let files = 0;
/** The rows DuckDB reads from a Parquet file, in the file's order. */
async function duckRows(parquet: Uint8Array): Promise<Row[]> {
  const file = path.join(dir, `answer-${files++}.parquet`);
  await writeFile(file, parquet);
  const reader = await duck.runAndReadAll(
    `SELECT * EXCLUDE (file_row_number) FROM read_parquet('${file}', file_row_number = true) ORDER BY file_row_number`,
  );
  return reader.getRowObjectsJS() as Row[];
}

/** An Arrow IPC stream read by arrow-rs (parquet-wasm's reader, not the library that wrote it), then by DuckDB. */
async function duckRowsOfArrow(stream: Uint8Array): Promise<Row[]> {
  return duckRows(writeParquet(WasmTable.fromIPCStream(stream)));
}

type Request = { method: 'GET'; query: Record<string, string> } | { method: 'POST'; body: Record<string, unknown> };

async function send(request: Request, accept: string, page?: { page: number; pageSize: number }) {
  if (request.method === 'GET') {
    const query = new URLSearchParams({
      ...request.query,
      ...(page ? { page: String(page.page), pageSize: String(page.pageSize), labels: 'true' } : {}),
    });
    return t.app.inject({ url: `${BASE}?${query}`, headers: { accept } });
  }
  return t.app.inject({
    method: 'POST',
    url: BASE,
    headers: { accept, 'content-type': 'application/json' },
    payload: { ...request.body, ...(page ? { ...page, labels: true } : {}) },
  });
}

/** Every JSON page of a query (labels on), as the rows the columnar answers must hold. */
async function expectedRows(request: Request): Promise<Row[]> {
  const rows: Row[] = [];
  const pageSize = 37;
  for (let page = 1; ; page++) {
    const response = await send(request, 'application/json', { page, pageSize });
    expect(response.statusCode, response.body).toBe(200);
    const json = response.json() as PageJson;
    for (const result of json.results) {
      const row: Row = {
        time_period: result.timePeriod.period,
        time_period_code: result.timePeriod.code,
        time_identifier: timeIdentifier(result.timePeriod.code)!.label,
        geographic_level: result.geographicLevel,
      };
      for (const level of meta.locations) {
        const prefix = level.level.code.toLowerCase();
        const id = result.locations[level.level.code];
        const option = level.options.find((o) => o.id === id);
        row[`${prefix}_id`] = id ?? null;
        row[`${prefix}_code`] = option ? (option.code ?? option.urn ?? null) : null;
        row[`${prefix}_name`] = id ? json.labels.locations[id] : null;
      }
      for (const filter of meta.filters) {
        const option = result.filters[filter.id];
        row[filter.column] = option === undefined ? null : json.labels.filterOptions[option];
      }
      for (const indicator of meta.indicators) {
        const text = result.values[indicator.id];
        if (text === undefined) continue;
        const number = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text.trim());
        row[indicator.column] = number ? Number(text) : null;
        row[`${indicator.column}_marker`] = number || text.trim() === '' ? null : text;
      }
      rows.push(row);
    }
    if (page >= json.paging.totalPages) break;
  }
  return rows;
}

/** What the test compares: the columns the JSON pages say something about, in their order. */
function comparable(rows: Row[], like: Row[]): Row[] {
  const keys = like.length > 0 ? Object.keys(like[0]!) : [];
  return rows.map((row) => Object.fromEntries(keys.map((k) => [k, row[k] ?? null])));
}

const SHEFFIELD = { level: 'LA', code: 'E08000019' };

/** The benchmark's five query shapes (bench/query.ts), on the AbsenceSchool fixture. */
const SHAPES: Array<[string, Request]> = [
  [
    '1-simple',
    {
      method: 'POST',
      body: {
        criteria: {
          and: [
            { filters: { eq: 'HTzLj' } },
            { geographicLevels: { eq: 'LA' } },
            { timePeriods: { eq: { period: '2022/2023', code: 'AY' } } },
          ],
        },
      },
    },
  ],
  [
    '2-complex',
    {
      method: 'POST',
      body: {
        criteria: {
          and: [
            { or: [{ filters: { in: ['LxWjE', '0kT5D'] } }, { filters: { eq: 'HTzLj' } }] },
            { not: { locations: { eq: { level: 'REG', code: 'E13000002' } } } },
            { timePeriods: { gte: { period: '2021/2022', code: 'AY' } } },
            { geographicLevels: { in: ['REG', 'LA', 'SCH'] } },
          ],
        },
        sorts: [
          { field: 'timePeriod', direction: 'Desc' },
          { field: 'location|LA', direction: 'Asc' },
        ],
      },
    },
  ],
  ['3-unfiltered', { method: 'GET', query: {} }],
  ['4-one-location', { method: 'POST', body: { criteria: { locations: { eq: SHEFFIELD } } } }],
  ['5-big-page', { method: 'GET', query: { 'geographicLevels.eq': 'REG', indicators: 'dP0Zw,7zXob' } }],
];

describe('query results as Parquet and as an Arrow IPC stream', () => {
  it.each(SHAPES)('%s: DuckDB reads exactly the rows, labels and numbers of the JSON pages', async (_name, request) => {
    const expected = await expectedRows(request);
    expect(expected.length).toBeGreaterThan(0);

    const parquet = await send(request, PARQUET);
    expect(parquet.statusCode, parquet.body).toBe(200);
    expect(parquet.headers['content-type']).toBe(PARQUET);
    expect(parquet.headers['content-disposition']).toBe('attachment; filename="query.parquet"');
    expect(comparable(await duckRows(parquet.rawPayload), expected)).toEqual(expected);

    const arrow = await send(request, ARROW);
    expect(arrow.statusCode, arrow.body).toBe(200);
    expect(arrow.headers['content-type']).toBe(ARROW);
    expect(comparable(await duckRowsOfArrow(arrow.rawPayload), expected)).toEqual(expected);
  });

  it('types the columns: dictionary-encoded labels, DOUBLE indicators with ids and labels in the field metadata', async () => {
    const arrow = await send({ method: 'GET', query: { 'geographicLevels.eq': 'NAT' } }, ARROW);
    const table = tableFromIPC(arrow.rawPayload);
    const field = (name: string) => table.schema.fields.find((f) => f.name === name)!;
    expect(String(field('school_type').type)).toBe('Dictionary<Int32, Utf8>');
    expect(field('school_type').metadata.get('label')).toBe('School type');
    expect(String(field('enrolments').type)).toBe('Float64');
    expect(field('enrolments').metadata.get('id')).toBe(meta.indicators.find((i) => i.column === 'enrolments')!.id);
    expect(String(field('enrolments_marker').type)).toBe('Utf8');

    const parquet = await send({ method: 'GET', query: { 'geographicLevels.eq': 'NAT' } }, PARQUET);
    const file = path.join(dir, 'types.parquet');
    await writeFile(file, parquet.rawPayload);
    const described = (
      await duck.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${file}')`)
    ).getRowObjectsJS() as Array<{ column_name: string; column_type: string }>;
    const types = Object.fromEntries(described.map((c) => [c.column_name, c.column_type]));
    expect(types).toMatchObject({
      time_period: 'VARCHAR',
      geographic_level: 'VARCHAR',
      la_name: 'VARCHAR',
      school_type: 'VARCHAR',
      enrolments: 'DOUBLE',
      enrolments_marker: 'VARCHAR',
    });
    const compression = (
      await duck.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${file}')`)
    ).getRowObjectsJS();
    expect(compression).toEqual([{ compression: 'ZSTD' }]);
  });

  it('a query with no results is a file with the columns and no rows', async () => {
    const request: Request = { method: 'GET', query: { 'timePeriods.eq': '2001/2002|AY' } };
    const parquet = await send(request, PARQUET);
    expect(parquet.statusCode).toBe(200);
    const file = path.join(dir, 'empty.parquet');
    await writeFile(file, parquet.rawPayload);
    expect(
      (await duck.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${file}')`)).getRowObjectsJS(),
    ).toEqual([{ n: 0 }]);
    const arrow = tableFromIPC((await send(request, ARROW)).rawPayload);
    expect(arrow.numRows).toBe(0);
    expect(arrow.schema.fields.map((f) => f.name)).toContain('sess_possible');
  });
});

describe('suppression markers', () => {
  it('are null in the DOUBLE column and kept in the <indicator>_marker column', async () => {
    const dataSetId = await createDataSet(t.database.db, { status: 'Published' });
    const data = [
      'time_period,time_identifier,geographic_level,country_code,country_name,school_type,pupils,rate',
      '202223,Academic year,National,E92000001,England,Primary,1200,4.5',
      '202223,Academic year,National,E92000001,England,Secondary,c,x',
      '202223,Academic year,National,E92000001,England,Special,low,z',
      '202223,Academic year,National,E92000001,England,Total,:,-0.25',
      '202223,Academic year,National,E92000001,England,Unknown,007,1.50',
    ].join('\n');
    const metaCsv = [
      'col_name,col_type,label,indicator_grouping,indicator_unit,indicator_dp,filter_hint,filter_grouping_column',
      'school_type,Filter,School type,,,,,',
      'pupils,Indicator,Pupils,,,0,,',
      'rate,Indicator,Rate,,%,1,,',
    ].join('\n');
    const { versionId, rowsTable } = await importCsvVersion(t.database, {
      dataSetId,
      version: '1.0',
      data,
      meta: metaCsv,
    });
    const url = `/v1/data-sets/${dataSetId}/query?sorts=filter|${await filterId(dataSetId)}|Asc`;
    // The same answer from the version's stored columns (before its row index is in) and from the row index, whose
    // numbers go into the DOUBLE columns as they are held and whose texts (markers, "007", "1.50") are parsed.
    for (const engine of ['stored columns', 'row index']) {
      if (engine === 'row index') {
        const index = await rowIndexes.ensure(
          t.database.db,
          await loadQueryVersionMeta(t.database.db, versionId, rowsTable),
        );
        expect(index?.size).toBe(5);
      }
      const parquet = await t.app.inject({ url, headers: { accept: PARQUET } });
      expect(parquet.statusCode, parquet.body).toBe(200);
      const rows = (await duckRows(parquet.rawPayload)).map((r) => [
        r.school_type,
        r.pupils,
        r.pupils_marker,
        r.rate,
        r.rate_marker,
      ]);
      expect(rows, engine).toEqual([
        ['Primary', 1200, null, 4.5, null],
        ['Secondary', null, 'c', null, 'x'],
        ['Special', null, 'low', null, 'z'],
        ['Total', null, ':', -0.25, null],
        ['Unknown', 7, null, 1.5, null],
      ]);
      const arrow = await t.app.inject({ url, headers: { accept: ARROW } });
      expect(
        (await duckRowsOfArrow(arrow.rawPayload)).map((r) => [r.pupils, r.pupils_marker]),
        engine,
      ).toEqual([
        [1200, null],
        [null, 'c'],
        [null, 'low'],
        [null, ':'],
        [7, null],
      ]);
    }
  });
});

async function filterId(dataSetId: string): Promise<string> {
  const response = await t.app.inject({ url: `/v1/data-sets/${dataSetId}/meta` });
  return (response.json() as Meta).filters[0]!.id;
}

describe('content negotiation', () => {
  it('answers an Accept that allows none of its types with 406 naming them', async () => {
    for (const accept of ['text/html', 'application/xml', 'image/png, text/plain;q=0.5']) {
      const response = await t.app.inject({ url: BASE, headers: { accept } });
      expect(response.statusCode, accept).toBe(406);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      const body = response.json() as { status: number; accepted: string[]; detail: string };
      expect(body.status).toBe(406);
      expect(body.accepted).toEqual(['application/json', 'text/csv', PARQUET, ARROW]);
      expect(body.detail).toContain(PARQUET);
    }
    const post = await t.app.inject({
      method: 'POST',
      url: BASE,
      headers: { accept: 'text/html', 'content-type': 'application/json' },
      payload: {},
    });
    expect(post.statusCode).toBe(406);
  });

  it('keeps JSON for no Accept, */* and application/json, and CSV for text/csv', async () => {
    for (const headers of [{}, { accept: '*/*' }, { accept: 'application/json' }, { accept: 'text/html, */*;q=0.1' }]) {
      const response = await t.app.inject({ url: `${BASE}?pageSize=1`, headers });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    }
    const csv = await t.app.inject({ url: `${BASE}?pageSize=1`, headers: { accept: 'text/csv' } });
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
  });

  it('takes an export slot as CSV does: past the per-client limit, 429', async () => {
    // Slots held as a running export holds them: by responses that have not closed yet.
    const held = Array.from({ length: t.config.QUERY_CSV_MAX_PER_CLIENT }, () => {
      const raw = Object.assign(new EventEmitter(), { destroyed: false, writableFinished: false });
      const socket = Object.assign(new EventEmitter(), { destroyed: false });
      t.app.streaming.exports.hold(
        { raw, request: { raw: { socket } } } as unknown as FastifyReply,
        anonymousClient('127.0.0.1'),
      );
      return () => raw.emit('close');
    });
    try {
      expect((await t.app.inject({ url: BASE, headers: { accept: PARQUET } })).statusCode).toBe(429);
      expect((await t.app.inject({ url: BASE, headers: { accept: ARROW } })).statusCode).toBe(429);
    } finally {
      for (const release of held) release();
    }
    expect((await t.app.inject({ url: BASE, headers: { accept: PARQUET } })).statusCode).toBe(200);
  });
});

describe('a result of more rows than one record batch', () => {
  it("holds every row, in the CSV export's order, over several record batches", { timeout: 120_000 }, async () => {
    // inject's socket never counts bytes written, so the stalled-reader check would cut a response taking this long.
    // Four exports at once below: the default per-client limit is two.
    const large = await buildTestApp({ STREAM_STALL_TIMEOUT_MS: '600000', QUERY_CSV_MAX_PER_CLIENT: '4' });
    try {
      // 216 rows × 160: 34,560 rows, more than two batches (16,384 each): the Parquet writer's batches share arrays in turn.
      await multiplyFixtureRows(large.database.db, 'absence_x160', 160);
      const url = `${BASE}?indicators=dP0Zw`;
      const csv = await large.app.inject({ url, headers: { accept: 'text/csv' } });
      const csvRows = csv.body.trim().split('\n').slice(1);
      expect(csvRows).toHaveLength(34560);
      const parquet = await large.app.inject({ url, headers: { accept: PARQUET } });
      const file = path.join(dir, 'large.parquet');
      await writeFile(file, parquet.rawPayload);
      const groups = (
        await duck.runAndReadAll(`SELECT count(DISTINCT row_group_id)::INTEGER AS n FROM parquet_metadata('${file}')`)
      ).getRowObjectsJS();
      expect(groups).toEqual([{ n: 1 }]);
      const rows = await duckRows(parquet.rawPayload);
      expect(rows).toHaveLength(34560);
      // The enrolments column of the CSV (its last), row by row.
      expect(rows.map((r) => String(r.enrolments))).toEqual(
        csvRows.map((line) => line.slice(line.lastIndexOf(',') + 1)),
      );
      const arrow = tableFromIPC((await large.app.inject({ url, headers: { accept: ARROW } })).rawPayload);
      expect(arrow.batches.map((b) => b.numRows)).toEqual([16384, 16384, 1792]);

      // Exports side by side share one Parquet writer (one WebAssembly instance): each file is the one it is alone.
      const urls = [
        url,
        `${BASE}?indicators=7zXob`,
        `${BASE}?geographicLevels.eq=SCH`,
        `${BASE}?indicators=dP0Zw,7zXob`,
      ];
      const alone: Buffer[] = [];
      for (const u of urls) alone.push((await large.app.inject({ url: u, headers: { accept: PARQUET } })).rawPayload);
      const together = await Promise.all(urls.map((u) => large.app.inject({ url: u, headers: { accept: PARQUET } })));
      expect(together.map((r) => r.statusCode)).toEqual([200, 200, 200, 200]);
      together.forEach((r, i) => expect(Buffer.compare(r.rawPayload, alone[i]!), urls[i]).toBe(0));
    } finally {
      await large.close();
    }
  });
});
