import type { Db } from '../../src/db/database.js';

/**
 * Loads what many test files share into the template database once per run (e.g. the AbsenceSchool fixture),
 * so that each file's clone already holds it. Keep it small: every file pays for copying it.
 */
export async function prepareTemplate(db: Db): Promise<void> {
  void db;
}
