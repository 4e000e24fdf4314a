import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openRuntime, type Runtime } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';
import { waitUntilReady } from '../helpers/app.js';
import { createProviderWithToken, validTrainee } from '../register/helpers.js';

/**
 * DATABASE_READ_URL: the statistics API reads from the read pool, the register API (reads and writes) uses the
 * primary. Two different databases stand in for primary and replica, made distinguishable: the publication's title
 * differs, the primary's AbsenceSchool rows are emptied, and the "replica" has no register tables at all, so any
 * register query sent there would fail.
 */
let primary: TestDatabase;
let replica: TestDatabase;
let runtime: Runtime;
let app: FastifyInstance;

beforeAll(async () => {
  [primary, replica] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  const { rows_table: rowsTable } = await primary.db
    .selectFrom('data_set_versions')
    .select('rows_table')
    .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
    .executeTakeFirstOrThrow();
  await primary.db
    .updateTable('publications')
    .set({ title: 'Served by the primary' })
    .where('id', '=', ABSENCE_SCHOOL.publicationId)
    .execute();
  await sql`DELETE FROM ${sql.table(`stats_data.${rowsTable}`)}`.execute(primary.db);
  await primary.db.deleteFrom('version_row_index_chunks').execute();
  await replica.db
    .updateTable('publications')
    .set({ title: 'Served by the replica' })
    .where('id', '=', ABSENCE_SCHOOL.publicationId)
    .execute();
  await sql`DROP TABLE trainee_degrees, trainee_placements, trainee_audits, trainees, authentication_tokens, providers CASCADE`.execute(
    replica.db,
  );

  // As the server wires it (src/server.ts): openRuntime from the configuration, then the app on both pools.
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATABASE_URL: primary.url,
    DATABASE_READ_URL: replica.url,
    SEED_ON_START: 'false',
    RATE_LIMIT_REGISTER_MAX: '10000',
  });
  runtime = await openRuntime(config);
  app = await buildApp(config, {
    db: runtime.primary.db,
    readDb: runtime.read.db,
    pools: { primary: runtime.primary.pool, read: runtime.read.pool },
    logger: false,
  });
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
  await Promise.all([primary?.drop(), replica?.drop()]);
});

describe('DATABASE_READ_URL', () => {
  it('opens a separate read pool on the replica', async () => {
    expect(runtime.read).not.toBe(runtime.primary);
    const names = async (handle: Runtime['read']) =>
      (await sql<{ name: string }>`SELECT current_database() AS name`.execute(handle.db)).rows[0]!.name;
    expect(await names(runtime.read)).toBe(replica.name);
    expect(await names(runtime.primary)).toBe(primary.name);
  });

  it('statistics reads (catalogue, query, CSV) come from the replica', async () => {
    const publication = await app.inject({ method: 'GET', url: `/v1/publications/${ABSENCE_SCHOOL.publicationId}` });
    expect(publication.statusCode).toBe(200);
    expect(publication.json().title).toBe('Served by the replica');

    const query = await app.inject({
      method: 'GET',
      url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/query?pageSize=1`,
    });
    expect(query.statusCode).toBe(200);
    expect(query.json().paging.totalResults).toBe(216); // the primary's copy has no rows

    const csv = await app.inject({ method: 'GET', url: `/v1/data-sets/${ABSENCE_SCHOOL.dataSetId}/csv` });
    expect(csv.statusCode).toBe(200);
    expect(csv.body.trim().split('\n')).toHaveLength(217);
  });

  it('the register API reads and writes the primary only', async () => {
    const provider = await createProviderWithToken(primary.db);
    const created = await app.inject({
      method: 'POST',
      url: '/api/v2026.1/trainees',
      headers: { ...provider.auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ data: validTrainee() }),
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.trainee_id as string;

    const read = await app.inject({ method: 'GET', url: `/api/v2026.1/trainees/${id}`, headers: provider.auth });
    expect(read.statusCode).toBe(200);
    const list = await app.inject({ method: 'GET', url: '/api/v2026.1/trainees', headers: provider.auth });
    expect(list.statusCode).toBe(200);
    expect(list.json().data.map((t: { trainee_id: string }) => t.trainee_id)).toContain(id);

    const rows = await primary.db.selectFrom('trainees').select('id').where('id', '=', id).execute();
    expect(rows).toHaveLength(1);
  });

  it('readiness checks both databases, and /metrics reports both pools', async () => {
    // 200 once nothing else holds readiness back (the row index of the version queried above still loading, or load
    // shedding on a busy machine: 503 meanwhile, as a balancer sees it; a CI run found one such 503). It is never 200
    // with either database unreachable.
    await waitUntilReady(app);
    const metrics = await app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toMatch(/db_pool_connections\{pool="read",state="total"\} \d+/);
    expect(metrics.body).toMatch(/db_pool_connections\{pool="primary",state="total"\} \d+/);
  });
});
