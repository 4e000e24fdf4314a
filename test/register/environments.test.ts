/**
 * One register environment per database and never the public development key in production; the duplicate check
 * compares names as the real service stores them (squished), so spaces cannot beat it (duplicate_trainees_spec.rb).
 */
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Runtime } from '../../src/runtime.js';
import { registerDemoStartupTask } from '../../src/register/startup.js';
import {
  createToken,
  DEVELOPMENT_TOKEN_SECRET,
  RegisterEnvironmentError,
  tokenSecret,
} from '../../src/register/tokens.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/database.js';
import { createProviderWithToken, validTrainee, type TestProvider, withRegisterApp } from './helpers.js';

const SECRET = 'a-production-secret-0123456789';

describe('REGISTER_TOKEN_SECRET in production', () => {
  it('the public development key is refused, whether explicit or padded; sandbox may use it', () => {
    for (const secret of [DEVELOPMENT_TOKEN_SECRET, ` ${DEVELOPMENT_TOKEN_SECRET} `]) {
      const config = loadConfig({ REGISTER_ENVIRONMENT: 'production', REGISTER_TOKEN_SECRET: secret });
      expect(() => tokenSecret(config)).toThrow(
        /public development key cannot be used when REGISTER_ENVIRONMENT is production/,
      );
    }
    expect(tokenSecret(loadConfig({ REGISTER_ENVIRONMENT: 'sandbox' }))).toBe(DEVELOPMENT_TOKEN_SECRET);
    expect(tokenSecret(loadConfig({ REGISTER_ENVIRONMENT: 'production', REGISTER_TOKEN_SECRET: SECRET }))).toBe(SECRET);
  });

  it('the app does not start in production with the development key', async () => {
    const database = await createTestDatabase();
    try {
      const config = loadConfig({
        LOG_LEVEL: 'silent',
        DATABASE_URL: database.url,
        REGISTER_ENVIRONMENT: 'production',
        REGISTER_TOKEN_SECRET: DEVELOPMENT_TOKEN_SECRET,
      });
      await expect(buildApp(config, { db: database.db, logger: false })).rejects.toThrow(/public development key/);
    } finally {
      await database.drop();
    }
  });
});

describe('one environment per database', () => {
  const context = (db: TestApp['database'], env: Record<string, string>) => ({
    config: loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: db.url, ...env }),
    runtime: { primary: db } as unknown as Runtime,
    log: () => undefined,
  });

  it('production refuses to start on a database holding sandbox tokens and trainees, and the reverse', async () => {
    const sandbox = await buildTestApp();
    try {
      await createProviderWithToken(sandbox.database.db, { environment: 'sandbox' });
      await expect(
        registerDemoStartupTask(
          context(sandbox.database, { REGISTER_ENVIRONMENT: 'production', REGISTER_TOKEN_SECRET: SECRET }),
        ),
      ).rejects.toThrow('REGISTER_ENVIRONMENT is production but this database holds sandbox tokens and trainees');
      // The same environment starts.
      await expect(
        registerDemoStartupTask(context(sandbox.database, { REGISTER_ENVIRONMENT: 'sandbox' })),
      ).resolves.toBeUndefined();
    } finally {
      await sandbox.close();
    }
    const production = await buildTestApp({ REGISTER_ENVIRONMENT: 'production', REGISTER_TOKEN_SECRET: SECRET });
    try {
      await createProviderWithToken(production.database.db, { environment: 'production', secret: SECRET });
      await expect(
        registerDemoStartupTask(context(production.database, { REGISTER_ENVIRONMENT: 'sandbox' })),
      ).rejects.toThrow('REGISTER_ENVIRONMENT is sandbox but this database holds production tokens and trainees');
    } finally {
      await production.close();
    }
  });

  it('the startup task refuses the development key in production before touching the database', async () => {
    const fresh = await buildTestApp();
    try {
      await expect(
        registerDemoStartupTask(
          context(fresh.database, {
            REGISTER_ENVIRONMENT: 'production',
            REGISTER_TOKEN_SECRET: DEVELOPMENT_TOKEN_SECRET,
          }),
        ),
      ).rejects.toThrow(/public development key/);
    } finally {
      await fresh.close();
    }
  });

  it('a token of the other environment cannot be created on the database (nothing is written)', async () => {
    const sandbox = await buildTestApp();
    try {
      const provider = await createProviderWithToken(sandbox.database.db, { environment: 'sandbox' });
      await expect(
        createToken(sandbox.database.db, { providerUkprn: provider.ukprn, environment: 'production', secret: SECRET }),
      ).rejects.toBeInstanceOf(RegisterEnvironmentError);
      const rows = await sandbox.database.db.selectFrom('authentication_tokens').select('environment').execute();
      expect(rows.map((r) => r.environment)).toEqual(['sandbox']);
    } finally {
      await sandbox.close();
    }
  });
});

describe('duplicate_trainees_spec.rb: names are compared as stored (squished)', () => {
  let t: TestApp;
  let p: TestProvider;
  withRegisterApp((app, provider) => {
    t = app;
    p = provider;
  });
  const post = (data: unknown) =>
    t.app.inject({ method: 'POST', url: '/api/v2026.1/trainees', headers: p.auth, payload: { data } });

  it('surrounding, doubled and non-breaking spaces are stored squished', async () => {
    const response = await post(
      validTrainee({
        first_names: '  Mary\u00a0\u00a0Ann ',
        last_name: '\u3000Squish\u00a0',
        email: ' mary@example.com ',
      }),
    );
    expect(response.statusCode).toBe(201);
    expect(response.json().data).toMatchObject({
      first_names: 'Mary Ann',
      last_name: 'Squish',
      email: 'mary@example.com',
    });
  });

  it.each([
    ['surrounding spaces', { first_names: '  John ', last_name: ' Spaced  ' }],
    ['non-breaking spaces', { first_names: '\u00a0John\u00a0', last_name: '\u00a0Spaced\u00a0' }],
    ['other Unicode spaces', { first_names: '\u2003John\u202f', last_name: 'Spaced\ufeff' }],
  ])(
    'returns status code 409 (conflict) with the potential duplicates when the names differ only by %s',
    async (_title, names) => {
      const before = await t.database.db.selectFrom('trainees').select('id').execute();
      const existing =
        before.length === 0 ||
        !(await t.database.db.selectFrom('trainees').select('id').where('last_name', '=', 'Spaced').executeTakeFirst());
      if (existing)
        expect(
          (await post(validTrainee({ first_names: 'John', last_name: 'Spaced', email: 'spaced@example.com' })))
            .statusCode,
        ).toBe(201);
      const count = (await t.database.db.selectFrom('trainees').select('id').execute()).length;
      const response = await post(validTrainee({ ...names, email: 'other@example.com' }));
      expect(response.statusCode).toBe(409);
      expect(response.json().data.map((d: { last_name: string }) => d.last_name)).toEqual(['Spaced']);
      expect((await t.database.db.selectFrom('trainees').select('id').execute()).length).toBe(count);
    },
  );
});
