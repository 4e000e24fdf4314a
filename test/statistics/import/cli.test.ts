import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { threadNiceValues } from '../../helpers/processes.js';
import { publishVersion } from '../../../src/statistics/lifecycle/service.js';
import { ABSENCE_SCHOOL, createDataSet, importFixtureVersion } from '../../helpers/statistics.js';
import { loadRowIndexFacets } from '../../../src/statistics/storage/engine-form.js';

const root = path.resolve(import.meta.dirname, '../../..');
let database: TestDatabase;
let dir: string;

/** Runs a CLI in one node process (no tsx wrapper process, so a kill reaches the importer itself). */
function startCli(script: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>(
    (resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exit };
}

const count = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(database.db)).rows[0]!.n;

beforeAll(async () => {
  database = await createTestDatabase();
  dir = await mkdtemp(path.join(tmpdir(), 'import-cli-'));
});
afterAll(async () => {
  await database.drop();
  await rm(dir, { recursive: true, force: true });
});

describe('npm run import', () => {
  it('imports a version and reports rows and changes', async () => {
    const dataSetId = await createDataSet(database.db, { title: 'CLI import' });
    const { exit } = startCli('src/cli/import.ts', [
      '--data-set',
      dataSetId,
      '--version',
      '1.0',
      '--data',
      ABSENCE_SCHOOL.dataPath,
      '--meta',
      ABSENCE_SCHOOL.metaPath,
      '--draft',
      '--notes',
      'From the CLI',
    ]);
    const result = await exit;
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`Imported data set ${dataSetId} version 1\\.0 \\(Draft\\): 216 rows`));
    const version = await database.db
      .selectFrom('data_set_versions')
      .selectAll()
      .where('data_set_id', '=', dataSetId)
      .executeTakeFirstOrThrow();
    expect(version).toMatchObject({ status: 'Draft', notes: 'From the CLI', total_results: 216 });
  });

  it('--row-order reference-fixture gives the AbsenceSchool rows the reference ids; file order is the default', async () => {
    const firstIds = async (dataSetId: string) => {
      // The rows as the import stored them (its row index; no row table).
      const version = await database.db
        .selectFrom('data_set_versions')
        .select('rows_table')
        .where('data_set_id', '=', dataSetId)
        .executeTakeFirstOrThrow();
      const index = (await loadRowIndexFacets(database.db, version.rows_table!, 10000))!;
      const first = Array.from({ length: index.size }, (_, p) => p).find((p) => index.ids.at(p) === 1)!;
      return { id: index.ids.at(first), geographic_level: index.levelCodeAt(first) };
    };
    const reference = await createDataSet(database.db, { title: 'CLI reference order' });
    const args = ['--version', '1.0', '--data', ABSENCE_SCHOOL.dataPath, '--meta', ABSENCE_SCHOOL.metaPath, '--draft'];
    expect(
      (await startCli('src/cli/import.ts', ['--data-set', reference, ...args, '--row-order', 'reference-fixture']).exit)
        .code,
    ).toBe(0);
    // Row 1 of the reference's data.parquet is an LA row (Barnsley, 2020/21); row 1 of the file is NAT.
    expect(await firstIds(reference)).toEqual({ id: 1, geographic_level: 'LA' });
    const file = await createDataSet(database.db, { title: 'CLI file order' });
    expect((await startCli('src/cli/import.ts', ['--data-set', file, ...args]).exit).code).toBe(0);
    expect(await firstIds(file)).toEqual({ id: 1, geographic_level: 'NAT' });
    const bad = await startCli('src/cli/import.ts', ['--data-set', file, ...args, '--row-order', 'sorted']).exit;
    expect(bad.code).not.toBe(0);
    expect(bad.stderr + bad.stdout).toContain('--row-order');
    // Three CLI runs: generous for a loaded 2-core machine.
  }, 120_000);

  it('prints the file, line and column of a problem and exits 1', async () => {
    const dataSetId = await createDataSet(database.db, { title: 'CLI problem' });
    const dataPath = path.join(dir, 'bad.csv');
    await writeFile(
      dataPath,
      'time_period,time_identifier,geographic_level,country_code,country_name,enrolments\n202021,Academic year,National,E92000001,England,1\n202021,Academic year,Nationwide,E92000001,England,2\n',
    );
    const metaPath = path.join(dir, 'meta.csv');
    await writeFile(
      metaPath,
      'col_name,col_type,label,indicator_grouping,indicator_unit,indicator_dp,filter_hint,filter_grouping_column\nenrolments,Indicator,Enrolments,,,0,,\n',
    );
    const result = await startCli('src/cli/import.ts', [
      '--data-set',
      dataSetId,
      '--version',
      '1.0',
      '--data',
      dataPath,
      '--meta',
      metaPath,
    ]).exit;
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('bad.csv, line 3, column geographic_level: Unknown geographic level "Nationwide".');
    expect(
      await database.db.selectFrom('data_set_versions').select('id').where('data_set_id', '=', dataSetId).execute(),
    ).toEqual([]);
  });

  it('a killed import leaves no partial version behind; while it runs, every thread of it runs at BATCH_NICE', async () => {
    const dataSetId = await createDataSet(database.db, { title: 'Killed import' });
    const tablesBefore = await count(
      sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'stats_data'`,
    );
    const big = path.join(root, 'seed/spc_pupils_fsm_ethnicity_yrgp');
    const { child, exit } = startCli(
      'src/cli/import.ts',
      [
        '--data-set',
        dataSetId,
        '--version',
        '1.0',
        '--data',
        path.join(big, 'data.csv.gz'),
        '--meta',
        path.join(big, 'meta.csv'),
      ],
      { BATCH_NICE: '13' },
    );
    // Wait until rows are being read (its session says how many, in its transaction), then kill the process outright.
    // Sessions of this test's database only: other test files import at the same time in the same cluster.
    const reading = sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
        AND application_name LIKE 'statistics-import: % rows read' AND application_name <> 'statistics-import: 0 rows read'`;
    const deadline = Date.now() + 20000;
    while ((await count(reading)) === 0) {
      if (Date.now() > deadline) throw new Error('the import never started reading rows');
      await new Promise((r) => setTimeout(r, 50));
    }
    // The batch yields the CPU to the service: its main thread, Node's own and the gunzip's thread pool alike.
    const niceValues = threadNiceValues(child.pid!);
    expect(niceValues.length).toBeGreaterThan(4);
    expect(new Set(niceValues)).toEqual(new Set([13]));
    child.kill('SIGKILL');
    expect((await exit).signal).toBe('SIGKILL');
    const sessions = sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'statistics-import%'`;
    while ((await count(sessions)) > 0) await new Promise((r) => setTimeout(r, 50));
    expect(
      await database.db.selectFrom('data_set_versions').select('id').where('data_set_id', '=', dataSetId).execute(),
    ).toEqual([]);
    expect(
      await count(sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'stats_data'`),
    ).toBe(tablesBefore);
    expect(
      (await database.db.selectFrom('data_sets').select('status').where('id', '=', dataSetId).executeTakeFirstOrThrow())
        .status,
    ).toBe('Draft');
    // The import lock went with the session.
    const { rows } = await sql<{
      free: boolean;
    }>`SELECT pg_try_advisory_xact_lock(hashtext('statistics-import')) AS free`.execute(database.db);
    expect(rows[0]!.free).toBe(true);
  });
});

describe('npm run stats-admin', () => {
  it('creates a preview token for a draft and refuses to publish a published version', async () => {
    const dataSetId = await createDataSet(database.db, { title: 'CLI admin' });
    await importFixtureVersion(database, { dataSetId, version: '1.0', status: 'Draft' });
    const token = await startCli('src/cli/stats-admin.ts', [
      'preview-token',
      '--data-set',
      dataSetId,
      '--version',
      '1.0',
      '--label',
      'Review',
      '--expires-in-hours',
      '2',
    ]).exit;
    expect(token.code).toBe(0);
    const id = /Preview token ([0-9a-f-]{36}) for data set/.exec(token.stdout)?.[1];
    expect(id).toBeDefined();
    expect(token.stdout).toContain(`preview-token: ${id}`);
    const stored = await database.db
      .selectFrom('preview_tokens')
      .selectAll()
      .where('id', '=', id!)
      .executeTakeFirstOrThrow();
    expect(stored.label).toBe('Review');
    expect(stored.expires_at.getTime() - stored.created_at.getTime()).toBe(2 * 3600_000);

    await publishVersion(database.db, dataSetId, '1.0');
    const again = await startCli('src/cli/stats-admin.ts', ['publish', '--data-set', dataSetId, '--version', '1.0'])
      .exit;
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('Error: Version 1.0 is Published; only Draft can be published.\n');
  });
});
