import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import type { Runtime } from '../../../src/runtime.js';
import {
  DEFAULT_SEED_DIR,
  catalogueSeedPending,
  seedCatalogue,
  seedCatalogueOnStart,
} from '../../../src/statistics/seed/service.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

const ETHNICITY = '9eee125b-5538-49b8-aa49-4fda877b5e57';
let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

describe('catalogue seed', () => {
  it('builds the version history of 9eee125b with keepRows and real changes (issue 3)', async () => {
    const logged: string[] = [];
    const result = await seedCatalogue(database, { dataSetIds: [ETHNICITY], log: (m) => logged.push(m) });
    expect(result.versions.map((v) => [v.version, v.rows])).toEqual([
      ['1.0', 132181],
      ['1.1', 154192],
      ['2.0', 129835],
    ]);
    expect(logged).toHaveLength(3);
    const versions = await database.db
      .selectFrom('data_set_versions')
      .select(['id', 'major', 'minor', 'status', 'notes', 'published_at', 'release_title', 'release_slug'])
      .where('data_set_id', '=', ETHNICITY)
      .orderBy('major')
      .orderBy('minor')
      .execute();
    expect(
      versions.map((v) => [
        `${v.major}.${v.minor}`,
        v.status,
        v.published_at?.toISOString(),
        v.release_title,
        v.release_slug,
      ]),
    ).toEqual([
      ['1.0', 'Published', '2023-06-08T08:30:00.000Z', 'Academic year 2020/21', '2020-21'],
      ['1.1', 'Published', '2024-06-06T08:30:00.000Z', 'Academic year 2021/22', '2021-22'],
      ['2.0', 'Published', '2025-06-05T08:30:00.000Z', 'Academic year 2021/22', '2021-22'],
    ]);
    expect(versions[1]!.notes).toBe('Adds the 2021/22 academic year.');
    const changes = async (versionId: number) =>
      database.db
        .selectFrom('version_changes')
        .select(['kind', 'list', 'change'])
        .where('version_id', '=', versionId)
        .orderBy('id')
        .execute();
    const minor11 = await changes(versions[1]!.id);
    expect(minor11).toContainEqual({
      kind: 'minor',
      list: 'timePeriods',
      change: { currentState: { code: 'AY', period: '2021/2022', label: '2021/22' } },
    });
    expect(minor11.every((c) => c.kind === 'minor')).toBe(true);
    const major20 = await changes(versions[2]!.id);
    expect(major20).toHaveLength(1);
    expect(major20[0]).toMatchObject({
      kind: 'major',
      list: 'filterOptions',
      change: {
        filter: { column: 'phase_type_grouping', label: 'School type' },
        previousState: { label: 'Pupil referral unit' },
      },
    });
    const dataSet = await database.db
      .selectFrom('data_sets')
      .select(['status', 'title'])
      .where('id', '=', ETHNICITY)
      .executeTakeFirstOrThrow();
    expect(dataSet).toEqual({ status: 'Published', title: 'Pupil characteristics - Ethnicity and Language' });
    // About 400,000 rows in three imports: seconds alone, longer when the machine is busy.
  }, 180_000);

  it('skips data sets that already have versions when run again', async () => {
    const logged: string[] = [];
    const result = await seedCatalogue(database, { dataSetIds: [ETHNICITY], log: (m) => logged.push(m) });
    expect(result.versions).toEqual([]);
    expect(logged).toEqual(['Pupil characteristics - Ethnicity and Language: already has versions, skipped']);
  });

  it('on start: seeds only when pending and SEED_ON_START is true', async () => {
    // The template holds the fixture's data set with its version: nothing is pending.
    expect(await catalogueSeedPending(database.db)).toBe(false);
    const logged: string[] = [];
    const runtime = { primary: database, read: database } as unknown as Runtime;
    await seedCatalogueOnStart({ config: loadConfig({ SEED_ON_START: 'true' }), runtime, log: (m) => logged.push(m) });
    expect(logged).toEqual([]);
    // A catalogue data set without versions (an interrupted seed) makes it pending; with SEED_ON_START off nothing runs.
    await database.db
      .insertInto('data_sets')
      .values({
        id: '14f4e111-506c-4bb9-86ff-6d4923acdd07',
        publication_id: '3f1c2a9e-7d4b-4c55-9a61-2b8f0e6d4a10',
        title: 'Interrupted',
        status: 'Draft',
        superseding_data_set_id: null,
      })
      .execute();
    expect(await catalogueSeedPending(database.db)).toBe(true);
    await seedCatalogueOnStart({ config: loadConfig({ SEED_ON_START: 'false' }), runtime, log: (m) => logged.push(m) });
    expect(logged).toEqual([]);
  });

  it('on start: resumes an interrupted seed and prints progress', async () => {
    // A one-entry catalogue whose data set exists without versions, as after an interrupted seed.
    const seedDir = await mkdtemp(path.join(tmpdir(), 'seed-on-start-'));
    try {
      await cp(path.join(DEFAULT_SEED_DIR, 'absence-school'), path.join(seedDir, 'absence-school'), {
        recursive: true,
      });
      const id = 'a1b2c3d4-0000-4000-8000-000000000001';
      const catalogue = {
        publications: [
          { id: '3f1c2a9e-7d4b-4c55-9a61-2b8f0e6d4a10', title: 'Pupil absence in schools in England', summary: '' },
        ],
        dataSets: [
          {
            id,
            publicationId: '3f1c2a9e-7d4b-4c55-9a61-2b8f0e6d4a10',
            title: 'Resumed',
            summary: '',
            versions: [{ version: '1.0', source: 'absence-school', notes: 'First.' }],
          },
        ],
      };
      await writeFile(path.join(seedDir, 'catalog.json'), JSON.stringify(catalogue));
      await database.db
        .insertInto('data_sets')
        .values({
          id,
          publication_id: catalogue.dataSets[0]!.publicationId,
          title: 'Resumed',
          status: 'Draft',
          superseding_data_set_id: null,
        })
        .execute();
      expect(await catalogueSeedPending(database.db, seedDir)).toBe(true);
      const logged: string[] = [];
      const runtime = { primary: database, read: database } as unknown as Runtime;
      await seedCatalogueOnStart(
        { config: loadConfig({ SEED_ON_START: 'true' }), runtime, log: (m) => logged.push(m) },
        seedDir,
      );
      expect(logged[0]).toMatch(/^Seeding the statistics catalogue/);
      expect(logged[1]).toMatch(/^ {2}Resumed v1\.0: 216 rows in \d+\.\d s$/);
      expect(logged[2]).toMatch(/^Seeded 1 data sets \(1 versions\) in/);
      const version = await database.db
        .selectFrom('data_set_versions')
        .select(['status', 'total_results'])
        .where('data_set_id', '=', id)
        .executeTakeFirstOrThrow();
      expect(version).toEqual({ status: 'Published', total_results: 216 });
      expect(await catalogueSeedPending(database.db, seedDir)).toBe(false);
    } finally {
      await rm(seedDir, { recursive: true, force: true });
    }
  });
});
