import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db } from '../../src/db/database.js';
import { importDataSetVersion, type ImportResult } from '../../src/statistics/import/import.js';
import type { DataSetStatus, VersionStatus } from '../../src/statistics/tables.js';

/** The reference's AbsenceSchool fixture as the template database holds it: data set, publication, files. */
export const ABSENCE_SCHOOL = {
  dataSetId: '7d4e2f60-1b3c-4a8e-9f25-6c0a3b9d8e71',
  publicationId: '3f1c2a9e-7d4b-4c55-9a61-2b8f0e6d4a10',
  version: '1.0',
  dataPath: path.resolve(import.meta.dirname, '../../seed/absence-school/data.csv'),
  metaPath: path.resolve(import.meta.dirname, '../../seed/absence-school/meta.csv'),
  rows: 216,
} as const;

export interface TestDatabaseLike {
  db: Db;
  pool: pg.Pool;
}

/** A data set (and its publication when missing) with no versions yet. */
export async function createDataSet(
  db: Db,
  options: {
    id?: string;
    publicationId?: string;
    title?: string;
    status?: DataSetStatus;
    supersedingDataSetId?: string;
  } = {},
): Promise<string> {
  const publicationId = options.publicationId ?? ABSENCE_SCHOOL.publicationId;
  const { rows } = await sql<{ id: string }>`SELECT gen_random_uuid()::text AS id`.execute(db);
  const id = options.id ?? rows[0]!.id;
  await db
    .insertInto('publications')
    .values({
      id: publicationId,
      title: `Publication ${publicationId}`,
      slug: `publication-${publicationId}`,
      summary: '',
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
  await db
    .insertInto('data_sets')
    .values({
      id,
      publication_id: publicationId,
      title: options.title ?? `Data set ${id}`,
      summary: '',
      status: options.status ?? 'Draft',
      superseding_data_set_id: options.supersedingDataSetId ?? null,
    })
    .execute();
  return id;
}

/** The importer makes Draft or Published versions; a test wanting Deprecated or Withdrawn sets it afterwards. */
async function setImportedStatus(database: TestDatabaseLike, versionId: number, status: VersionStatus): Promise<void> {
  if (status !== 'Deprecated' && status !== 'Withdrawn') return;
  await database.db
    .updateTable('data_set_versions')
    .set({ status, withdrawn_at: status === 'Withdrawn' ? new Date() : null })
    .where('id', '=', versionId)
    .execute();
}

/**
 * Imports the AbsenceSchool files as another version of a data set (new ids are carried over from its previous
 * version), then sets the version's status (Draft, Published, Deprecated, Withdrawn) for access tests.
 */
export async function importFixtureVersion(
  database: TestDatabaseLike,
  options: {
    dataSetId: string;
    version: string;
    status?: VersionStatus;
    notes?: string;
    publishedAt?: string;
    dataSetStatus?: DataSetStatus;
  },
): Promise<ImportResult> {
  const status = options.status ?? 'Published';
  const result = await importDataSetVersion(database, {
    dataSetId: options.dataSetId,
    version: options.version,
    dataPath: ABSENCE_SCHOOL.dataPath,
    metaPath: ABSENCE_SCHOOL.metaPath,
    draft: status === 'Draft',
    notes: options.notes,
    publishedAt: options.publishedAt,
    rowOrder: 'reference-fixture',
  });
  await setImportedStatus(database, result.versionId, status);
  if (options.dataSetStatus) {
    await database.db
      .updateTable('data_sets')
      .set({ status: options.dataSetStatus })
      .where('id', '=', options.dataSetId)
      .execute();
  }
  return { ...result, status };
}

/**
 * Makes the AbsenceSchool fixture's version serve `copies` copies of its rows, through a view named `view`: a large
 * result for tests of streaming and stalled readers, without importing a large file.
 */
export async function multiplyFixtureRows(db: Db, view: string, copies: number): Promise<void> {
  const version = await fixtureVersion(db);
  await sql`CREATE VIEW ${sql.table(`stats_data.${view}`)} AS
    SELECT r.* FROM ${sql.table(`stats_data.${version.rows_table}`)} r CROSS JOIN generate_series(1, ${sql.lit(copies)})`.execute(
    db,
  );
  await db
    .updateTable('data_set_versions')
    .set({ rows_table: view })
    .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
    .execute();
}

/** The AbsenceSchool fixture's version: its id and its row table. */
export async function fixtureVersion(db: Db): Promise<{ id: number; rows_table: string }> {
  const version = await db
    .selectFrom('data_set_versions')
    .select(['id', 'rows_table'])
    .where('data_set_id', '=', ABSENCE_SCHOOL.dataSetId)
    .executeTakeFirstOrThrow();
  return { id: version.id, rows_table: version.rows_table! };
}

/**
 * Imports a version from data and meta CSV text (written to a temporary folder for the importer), then sets its
 * status as `importFixtureVersion` does.
 */
export async function importCsvVersion(
  database: TestDatabaseLike,
  options: { dataSetId: string; version: string; data: string; meta: string; status?: VersionStatus; notes?: string },
): Promise<ImportResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'import-csv-version-'));
  try {
    const dataPath = path.join(dir, 'data.csv');
    const metaPath = path.join(dir, 'meta.csv');
    await writeFile(dataPath, options.data);
    await writeFile(metaPath, options.meta);
    const status = options.status ?? 'Published';
    const result = await importDataSetVersion(database, {
      dataSetId: options.dataSetId,
      version: options.version,
      dataPath,
      metaPath,
      draft: status === 'Draft',
      notes: options.notes,
    });
    await setImportedStatus(database, result.versionId, status);
    return { ...result, status };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
