import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { FastifyInstance } from 'fastify';
import { asyncBufferFromUrl, parquetMetadataAsync, parquetRead } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { seedCatalogue } from '../../../src/statistics/seed/service.js';
import { PARQUET_ROW_GROUP_ROWS } from '../../../src/statistics/storage/parquet-copy.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { waitUntilReady } from '../../helpers/app.js';

/**
 * Other tools read every seeded version's Parquet download: DuckDB finds the rows, indicator sums and filter options
 * the API gives (its version JSON, CSV download and metadata), and a range reader (hyparquet over HTTP) reads one
 * column of one row group of the largest version fetching a small part of the file.
 */

const NUMERIC = /^[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?$/;

let database: TestDatabase;
let app: FastifyInstance;
let base: string;
let dir: string;
let duck: DuckDBConnection;
let versions: Array<{ dataSetId: string; version: string; rows: number }>;

beforeAll(async () => {
  database = await createTestDatabase();
  // The template holds the AbsenceSchool fixture; the seed adds the other data sets and their versions.
  await seedCatalogue(database);
  app = await buildApp(
    loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, RATE_LIMIT_STATISTICS_MAX: '100000' }),
    { db: database.db, pools: { primary: database.pool }, logger: false },
  );
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  await waitUntilReady(app, 120_000);
  dir = await mkdtemp(path.join(tmpdir(), 'parquet-readers-'));
  duck = await (await DuckDBInstance.create(':memory:')).connect();
  const rows = await database.db
    .selectFrom('data_set_versions')
    .select(['data_set_id', 'major', 'minor', 'patch', 'total_results'])
    .orderBy('id')
    .execute();
  versions = rows.map((v) => ({
    dataSetId: v.data_set_id,
    version: `${v.major}.${v.minor}${v.patch ? `.${v.patch}` : ''}`,
    rows: Number(v.total_results),
  }));
}, 900_000);
afterAll(async () => {
  duck?.closeSync();
  await app?.close();
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function getJson(url: string): Promise<any> {
  const response = await app.inject({ method: 'GET', url });
  expect(response.statusCode, url).toBe(200);
  return response.json();
}

describe('the Parquet download, read by other tools', () => {
  it("gives DuckDB the API's row count, indicator sums and filter options, for every seeded version", async () => {
    expect(versions.length).toBeGreaterThanOrEqual(6);
    for (const { dataSetId, version } of versions) {
      const query = `dataSetVersion=${version}`;
      const download = await app.inject({ method: 'GET', url: `/v1/data-sets/${dataSetId}/parquet?${query}` });
      expect(download.statusCode, `${dataSetId} ${version}`).toBe(200);
      const file = path.join(dir, `${dataSetId}_${version}.parquet`);
      await writeFile(file, download.rawPayload);

      const totalResults = (await getJson(`/v1/data-sets/${dataSetId}/versions/${version}`)).totalResults as number;
      const meta = await getJson(`/v1/data-sets/${dataSetId}/meta?${query}`);
      const csv = await app.inject({
        method: 'GET',
        url: `/v1/data-sets/${dataSetId}/csv?${query}`,
        headers: { 'accept-encoding': 'identity' },
      });
      const records = parse<Record<string, string>>(csv.body, { columns: true, bom: true });
      expect(records.length).toBe(totalResults);

      const indicators = (meta.indicators as Array<{ column: string }>).map((i) => i.column);
      const sums = (
        await duck.runAndReadAll(
          `SELECT count(*)::DOUBLE, ${indicators.map((c) => `coalesce(sum("${c}"), 0)`).join(', ')} FROM read_parquet('${file}')`,
        )
      )
        .getRows()[0]!
        .map(Number);
      expect(sums[0], `${dataSetId} ${version} rows`).toBe(totalResults);
      indicators.forEach((column, k) => {
        let expected = 0;
        for (const record of records) if (NUMERIC.test(record[column]!)) expected += Number(record[column]);
        expect(
          Math.abs(sums[k + 1]! - expected),
          `${dataSetId} ${version} sum of ${column}: ${sums[k + 1]} vs ${expected}`,
        ).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(expected)));
      });

      for (const filter of meta.filters as Array<{ column: string; options: Array<{ label: string }> }>) {
        const distinct = (
          await duck.runAndReadAll(
            `SELECT DISTINCT "${filter.column}" FROM read_parquet('${file}') WHERE "${filter.column}" IS NOT NULL`,
          )
        )
          .getRows()
          .map((r) => String(r[0]));
        expect(distinct.sort(), `${dataSetId} ${version} options of ${filter.column}`).toEqual(
          filter.options.map((o) => o.label).sort(),
        );
      }
    }
  }, 900_000);

  it('lets a range reader read one column of one row group over HTTP, fetching under 10 % of the file', async () => {
    const largest = [...versions].sort((a, b) => b.rows - a.rows)[0]!;
    expect(largest.rows).toBeGreaterThan(2 * PARQUET_ROW_GROUP_ROWS);
    const url = `${base}/v1/data-sets/${largest.dataSetId}/parquet?dataSetVersion=${largest.version}`;
    let received = 0;
    const counting = async (input: string | URL | Request, init?: RequestInit) => {
      const response = await fetch(input, init);
      const body = new Uint8Array(await response.arrayBuffer());
      received += body.byteLength;
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const file = await asyncBufferFromUrl({ url, fetch: counting });
    // The footer only (its default first fetch, 512 KB, is a quarter of this 2 MB file).
    const metadata = await parquetMetadataAsync(file, { initialFetchSize: 1 << 16 });
    expect(metadata.row_groups.length).toBeGreaterThanOrEqual(3);
    const meta = await getJson(`/v1/data-sets/${largest.dataSetId}/meta?dataSetVersion=${largest.version}`);
    // A filter's column: with 3 row groups, one row group of a numeric column is a third of this small file's
    // numbers (of a 5,000,000-row file's 38 row groups, any column's is well under 10 %).
    const column = (meta.filters as Array<{ column: string }>)[0]!.column;
    const values: unknown[] = [];
    await parquetRead({
      file,
      metadata,
      compressors,
      columns: [column],
      rowStart: PARQUET_ROW_GROUP_ROWS,
      rowEnd: 2 * PARQUET_ROW_GROUP_ROWS,
      rowFormat: 'array',
      onComplete: (rows: unknown[][]) => {
        for (const row of rows) values.push(row[0]);
      },
    });
    expect(values).toHaveLength(PARQUET_ROW_GROUP_ROWS);
    expect(received).toBeLessThan(0.1 * file.byteLength);

    // The same values as DuckDB reads from the whole file.
    const local = path.join(dir, 'largest.parquet');
    await writeFile(local, (await app.inject({ method: 'GET', url: url.slice(base.length) })).rawPayload);
    const expected = (
      await duck.runAndReadAll(
        `SELECT "${column}" FROM read_parquet('${local}') LIMIT ${PARQUET_ROW_GROUP_ROWS} OFFSET ${PARQUET_ROW_GROUP_ROWS}`,
      )
    )
      .getRows()
      .map((r) => r[0]);
    expect(values).toEqual(expected);
  }, 300_000);
});
