import { execFile } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { Ajv } from 'ajv';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RowIndexStore } from '../../../../src/statistics/query/engine/index.js';
import { loadQueryVersionMeta } from '../../../../src/statistics/query/engine/version-meta-cache.js';
import { PagingViewModel } from '../../../../src/statistics/schemas.js';
import {
  DataSetQueryLabels,
  DataSetQueryPaginatedList,
  DataSetQueryResult,
  DataSetQueryResultTimePeriod,
  DataSetQueryWarning,
} from '../../../../src/statistics/query/http/contract.js';
import { buildTestApp, type TestApp } from '../../../helpers/app.js';
import { ABSENCE_SCHOOL } from '../../../helpers/statistics.js';

/**
 * The query endpoints' documented contract holds for what they really send: the row-index engine writes its JSON
 * bytes itself (no serializer), so those bytes are validated against the documented response schema here; and a
 * client generated from /openapi.json compiles and runs a query.
 */
const rowIndexes = new RowIndexStore();
let t: TestApp;
const url = `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query`;

beforeAll(async () => {
  t = await buildTestApp({ RATE_LIMIT_STATISTICS_MAX: '1000' }, { rowIndexes });
  const version = await t.database.db
    .selectFrom('data_set_versions')
    .select(['id', 'rows_table'])
    .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
    .executeTakeFirstOrThrow();
  await rowIndexes.ensure(t.database.db, await loadQueryVersionMeta(t.database.db, version.id, version.rows_table!));
});
afterAll(async () => {
  await t?.close();
});

describe('the documented response schema', () => {
  const ajv = new Ajv({ allErrors: true, strict: false });
  for (const schema of [
    PagingViewModel,
    DataSetQueryResultTimePeriod,
    DataSetQueryResult,
    DataSetQueryWarning,
    DataSetQueryLabels,
  ])
    ajv.addSchema(schema);
  const validate = ajv.compile(DataSetQueryPaginatedList);

  it.each([
    ['the row-index engine', 'index', `${url}?geographicLevels.eq=NAT&pageSize=5`],
    ['the row-index engine, debug and a warning', 'index', `${url}?filters.eq=nothing&debug=true`],
    ['the row-index engine, an indicator sort', 'index', `${url}?sorts=indicator|dP0Zw|Desc&pageSize=5`],
    ['the row-index engine, with labels', 'index', `${url}?geographicLevels.eq=LA&pageSize=5&labels=true`],
  ])('holds for %s', async (_name, engine, path) => {
    const response = await t.app.inject({ url: path });
    expect(response.statusCode).toBe(200);
    expect(response.headers['x-query-engine']).toBe(engine);
    const body = JSON.parse(response.body) as unknown;
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
  });

  it('is what /openapi.json documents for both query operations', async () => {
    const document = (await t.app.inject({ url: '/openapi.json' })).json();
    const operations = document.paths['/v1/data-sets/{dataSetId}/query'];
    for (const method of ['get', 'post']) {
      expect(operations[method].responses['200'].content['application/json'].schema.$ref).toBe(
        '#/components/schemas/DataSetQueryPaginatedListViewModel',
      );
    }
    expect(operations.get.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(['filters.in', 'timePeriods.gte', 'indicators', 'sorts', 'pageSize', 'dataSetVersion']),
    );
    expect(document.components.schemas.DataSetQueryRequest.properties).toHaveProperty('criteria');
  });
});

describe('a client generated from /openapi.json', () => {
  const dir = path.resolve(import.meta.dirname, '../../../../.test-data', `openapi-client-${process.pid}`);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('compiles (openapi-typescript types, openapi-fetch client) and runs a query', async () => {
    const document = (await t.app.inject({ url: '/openapi.json' })).json();
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'schema.d.ts'), astToString(await openapiTS(document)));
    await writeFile(
      path.join(dir, 'client.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

/** Enrolments in England for one data set, through the typed client. */
export async function nationalEnrolments(baseUrl: string, dataSetId: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl });
  const { data, error } = await client.POST('/v1/data-sets/{dataSetId}/query', {
    params: { path: { dataSetId } },
    body: { criteria: { and: [{ geographicLevels: { eq: 'NAT' } }, { timePeriods: { gte: { period: '2022/2023', code: 'AY' } } }] }, indicators: ['dP0Zw'], pageSize: 5 },
  });
  if (error) throw new Error(JSON.stringify(error));
  const total: number = data.paging.totalResults;
  return data.results.map((row) => row.values['dP0Zw'] ?? String(total));
}
`,
    );
    await writeFile(
      path.join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          skipLibCheck: true,
          lib: ['ES2022', 'DOM'],
        },
        files: ['client.ts'],
      }),
    );
    const tsc = path.resolve(import.meta.dirname, '../../../../node_modules/typescript/bin/tsc');
    await promisify(execFile)(process.execPath, [tsc, '-p', dir]);

    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { nationalEnrolments } = (await import(path.join(dir, 'client.ts'))) as {
      nationalEnrolments: (base: string, id: string) => Promise<string[]>;
    };
    const values = await nationalEnrolments(address, ABSENCE_SCHOOL.dataSetId);
    expect(values.length).toBeGreaterThan(0);
    expect(values.every((v) => /^\d+$/.test(v))).toBe(true);
  }, 60000);
});
