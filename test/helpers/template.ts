import { sql } from 'kysely';
import { createDatabase, type Db } from '../../src/db/database.js';
import { seedCatalogue } from '../../src/statistics/seed.js';
import { ABSENCE_SCHOOL } from './statistics.js';

/**
 * Loads what many test files share into the template database once per run, so that each file's clone already
 * holds it: the AbsenceSchool fixture (216 rows) as catalogue data set 7d4e2f60-…, version 1.0, Published, with the
 * reference's public ids and row ids (it is the first import, so its ids start at 1 as in the reference).
 */
export async function prepareTemplate(db: Db): Promise<void> {
  // The importer needs a pool (COPY uses a raw client): open one on the same database.
  const { rows } = await sql<{ database: string; port: number }>`
    SELECT current_database() AS database, inet_server_port() AS port`.execute(db);
  const base = new URL(process.env.TEST_DATABASE_URL ?? `postgres://postgres:postgres@127.0.0.1:${rows[0]!.port}/postgres`);
  base.pathname = `/${rows[0]!.database}`;
  const handle = createDatabase(base.toString(), { max: 2, statementTimeoutMillis: 600000 });
  try {
    await seedCatalogue(handle, { dataSetIds: [ABSENCE_SCHOOL.dataSetId] });
  } finally {
    await handle.close();
  }
}
