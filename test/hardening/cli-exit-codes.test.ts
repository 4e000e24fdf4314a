import { spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { ABSENCE_SCHOOL } from '../helpers/statistics.js';

/**
 * Every CLI that opens the database fails loudly: exit code 1 and a one-line `Error: …` message, also when it
 * started (and so stops) the embedded PostgreSQL itself, which is where the exit code used to be reset to 0.
 */
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'cli-exit-'));
  await chmod(dataDir, 0o755);
});

afterAll(async () => {
  if (dataDir) {
    // Nothing may be left running: a CLI stops the cluster it started.
    const db = await startEmbeddedPostgres(dataDir);
    await db.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
});

function cli(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `src/cli/${script}.ts`, ...args], {
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function expectLoudFailure(result: { code: number | null; stderr: string }, message: RegExp): void {
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines[0]).toMatch(/^Error: /);
  expect(lines[0]).toMatch(message);
  expect(result.stderr).not.toMatch(/^\s+at /m);
}

describe('CLI exit codes on the embedded database', () => {
  it('migrate succeeds with 0, and each CLI exits 1 with its one-line message on a failure', async () => {
    const migrated = await cli('migrate', []);
    expect(migrated.code).toBe(0);

    const created = await cli('register', ['provider:create', '--ukprn', '12345678', '--name', 'Example University']);
    expect(created.code).toBe(0);
    const duplicate = await cli('register', ['provider:create', '--ukprn', '12345678', '--name', 'Example University']);
    expectLoudFailure(duplicate, /12345678/);

    const refusedImport = await cli('import', [
      '--data-set',
      '00000000-0000-4000-8000-000000000000',
      '--version',
      '1.0',
      '--data',
      ABSENCE_SCHOOL.dataPath,
      '--meta',
      ABSENCE_SCHOOL.metaPath,
    ]);
    expectLoudFailure(refusedImport, /00000000-0000-4000-8000-000000000000|data set/i);

    const refusedPublish = await cli('stats-admin', [
      'publish',
      '--data-set',
      '00000000-0000-4000-8000-000000000000',
      '--version',
      '1.0',
    ]);
    expectLoudFailure(refusedPublish, /data set|not found|No /i);

    // A database the migrator cannot trust: a migration applied that this release does not know.
    const cluster = await startEmbeddedPostgres(dataDir);
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    await client.query(
      `INSERT INTO kysely_migration (name, timestamp) VALUES ('9999-12-31T0000-from-the-future', now()::text)`,
    );
    await client.end();
    await cluster.stop();

    expectLoudFailure(await cli('migrate', []), /migrat/i);
    expectLoudFailure(await cli('seed', []), /migrat/i);
  }, 300000);
});
