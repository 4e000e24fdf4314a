import { rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatestOrThrow } from '../src/db/migrate.js';
import { prepareTemplate } from './helpers/template.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A URL of the test server's maintenance database, for CREATE/DROP DATABASE. */
    adminUrl: string;
    /** The migrated (and fixture-loaded) template every test file clones. */
    templateDatabase: string;
  }
}

let embedded: EmbeddedDatabase | undefined;
let clusterDir: string | undefined;

/**
 * Starts a throwaway embedded PostgreSQL for this run (or uses TEST_DATABASE_URL), migrates a template database
 * once, loads the shared fixtures into it, and hands its name to the test files, which each clone it.
 */
export default async function setup(project: TestProject) {
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    clusterDir = path.resolve('.test-data', `run-${process.pid}`);
    embedded = await startEmbeddedPostgres(clusterDir, { database: 'postgres' });
    adminUrl = embedded.url;
  }
  const templateDatabase = `tmpl_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${templateDatabase}"`);
  await admin.end();

  const templateUrl = withDatabase(adminUrl, templateDatabase);
  const handle = createDatabase(templateUrl, { max: 4, statementTimeoutMillis: 600000 });
  try {
    await migrateToLatestOrThrow(handle.db);
    await prepareTemplate(handle);
  } finally {
    // Postgres refuses to clone a template that has open sessions.
    await handle.close();
  }

  project.provide('adminUrl', adminUrl);
  project.provide('templateDatabase', templateDatabase);

  return async () => {
    const cleanup = new pg.Client({ connectionString: adminUrl });
    await cleanup.connect();
    const { rows } = await cleanup.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $2`,
      [templateDatabase, `t_${templateDatabase}_%`],
    );
    for (const { datname } of rows) await cleanup.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await cleanup.end();
    if (embedded) {
      await embedded.destroy();
      if (clusterDir) await rm(clusterDir, { recursive: true, force: true });
    }
  };
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
