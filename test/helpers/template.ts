import type { DatabaseHandle } from '../../src/db/database.js';
import { seedCatalogue } from '../../src/statistics/seed/service.js';
import { ABSENCE_SCHOOL } from './statistics.js';

/**
 * Loads what many test files share into the template database once per run, so that each file's clone already
 * holds it: the AbsenceSchool fixture (216 rows) as catalogue data set 7d4e2f60-…, version 1.0, Published, with the
 * reference's public ids and row ids (it is the first import, so its ids start at 1 as in the reference), and its
 * row table: the SQL translation, which tests compare every engine with, reads it.
 */
export async function prepareTemplate(handle: DatabaseHandle): Promise<void> {
  // The importer takes the handle, not just Kysely: COPY needs a raw pool client.
  await seedCatalogue(handle, { dataSetIds: [ABSENCE_SCHOOL.dataSetId], rowTables: true });
}
