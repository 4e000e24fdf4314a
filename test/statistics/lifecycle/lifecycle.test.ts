import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError, ValidationError } from '../../../src/errors.js';
import {
  addDataSet,
  addPublication,
  createPreviewToken,
  deleteDraftVersion,
  deprecateVersion,
  publishVersion,
  setDataSetStatus,
  setSupersedingDataSet,
  withdrawVersion,
} from '../../../src/statistics/lifecycle/service.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { ABSENCE_SCHOOL, createDataSet, importFixtureVersion } from '../../helpers/statistics.js';

let database: TestDatabase;
let dataSetId: string;

const versionRow = (version: string) => {
  const [major, minor] = version.split('.').map(Number);
  return database.db
    .selectFrom('data_set_versions')
    .selectAll()
    .where('data_set_id', '=', dataSetId)
    .where('major', '=', major!)
    .where('minor', '=', minor!)
    .executeTakeFirstOrThrow();
};
const dataSetRow = (id = dataSetId) =>
  database.db.selectFrom('data_sets').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

beforeAll(async () => {
  database = await createTestDatabase();
  dataSetId = await createDataSet(database.db, { title: 'Lifecycle' });
  await importFixtureVersion(database, { dataSetId, version: '1.0', status: 'Draft' });
});
afterAll(async () => {
  await database.drop();
});

describe('publisher lifecycle', () => {
  it('a preview token is for a Draft version only, with a bounded expiry', async () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const token = await createPreviewToken(database.db, dataSetId, '1.0', { label: 'Review', expiresInHours: 48, now });
    expect(token.expires.toISOString()).toBe('2026-01-03T00:00:00.000Z');
    const stored = await database.db
      .selectFrom('preview_tokens')
      .selectAll()
      .where('id', '=', token.id)
      .executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ version_id: (await versionRow('1.0')).id, label: 'Review' });
    await expect(createPreviewToken(database.db, dataSetId, '1.0', { expiresInHours: 24 * 8 })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(createPreviewToken(database.db, dataSetId, '9.0')).rejects.toBeInstanceOf(NotFoundError);
  });

  it('publishing a draft makes the version and the data set Published', async () => {
    expect((await dataSetRow()).status).toBe('Draft');
    const now = new Date('2026-02-01T09:30:00Z');
    await publishVersion(database.db, dataSetId, '1.0', now);
    const version = await versionRow('1.0');
    expect(version).toMatchObject({ status: 'Published' });
    expect(version.published_at?.toISOString()).toBe(now.toISOString());
    expect((await dataSetRow()).status).toBe('Published');
    // Published twice: refused, unchanged.
    await expect(publishVersion(database.db, dataSetId, '1.0')).rejects.toBeInstanceOf(ConflictError);
    expect((await versionRow('1.0')).published_at?.toISOString()).toBe(now.toISOString());
    await expect(createPreviewToken(database.db, dataSetId, '1.0')).rejects.toBeInstanceOf(ConflictError);
  });

  it('deprecates and withdraws versions in the allowed order only', async () => {
    await importFixtureVersion(database, { dataSetId, version: '1.1' });
    await deprecateVersion(database.db, dataSetId, '1.1');
    expect((await versionRow('1.1')).status).toBe('Deprecated');
    await expect(deprecateVersion(database.db, dataSetId, '1.1')).rejects.toBeInstanceOf(ConflictError);
    await withdrawVersion(database.db, dataSetId, '1.1', new Date('2026-03-01T00:00:00Z'));
    const withdrawn = await versionRow('1.1');
    expect(withdrawn.status).toBe('Withdrawn');
    expect(withdrawn.withdrawn_at?.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    await expect(withdrawVersion(database.db, dataSetId, '1.1')).rejects.toBeInstanceOf(ConflictError);
    await expect(withdrawVersion(database.db, dataSetId, 'one')).rejects.toBeInstanceOf(ValidationError);
  });

  it('deletes a draft with its rows, and nothing else', async () => {
    const draft = await importFixtureVersion(database, { dataSetId, version: '2.0', status: 'Draft' });
    await expect(deleteDraftVersion(database.db, dataSetId, '1.0')).rejects.toBeInstanceOf(ConflictError);
    await deleteDraftVersion(database.db, dataSetId, '2.0');
    const { rows } = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'stats_data' AND tablename = ${draft.rowsTable}`.execute(
      database.db,
    );
    expect(rows[0]!.n).toBe(0);
    expect(
      await database.db.selectFrom('data_set_versions').select('id').where('id', '=', draft.versionId).execute(),
    ).toEqual([]);
  });

  it('supersedes, deprecates and withdraws data sets', async () => {
    const publicationId = await addPublication(database.db, { title: 'Lifecycle publication', summary: 'For tests' });
    const successor = await addDataSet(database.db, { publicationId, title: 'Successor' });
    // A Draft data set cannot supersede.
    await expect(setSupersedingDataSet(database.db, dataSetId, successor)).rejects.toBeInstanceOf(ConflictError);
    await importFixtureVersion(database, { dataSetId: successor, version: '1.0' });
    await setSupersedingDataSet(database.db, dataSetId, successor);
    expect((await dataSetRow()).superseding_data_set_id).toBe(successor);
    await expect(setSupersedingDataSet(database.db, dataSetId, dataSetId)).rejects.toBeInstanceOf(ValidationError);
    await setDataSetStatus(database.db, dataSetId, 'Deprecated');
    expect((await dataSetRow()).status).toBe('Deprecated');
    await expect(setDataSetStatus(database.db, dataSetId, 'Deprecated')).rejects.toBeInstanceOf(ConflictError);
    await setDataSetStatus(database.db, dataSetId, 'Withdrawn');
    expect((await dataSetRow()).status).toBe('Withdrawn');
    await setSupersedingDataSet(database.db, dataSetId, null);
    expect((await dataSetRow()).superseding_data_set_id).toBeNull();
    await expect(
      addDataSet(database.db, { publicationId: '00000000-0000-4000-8000-000000000000', title: 'x' }),
    ).rejects.toBeInstanceOf(NotFoundError);
    await expect(addPublication(database.db, { title: 'Lifecycle publication' })).rejects.toBeInstanceOf(ConflictError);
  });

  it('leaves the template fixture alone', async () => {
    expect((await dataSetRow(ABSENCE_SCHOOL.dataSetId)).status).toBe('Published');
  });
});
