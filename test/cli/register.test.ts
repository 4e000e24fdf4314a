import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { addMonths } from '../../src/register/tokens.js';
import { todayUtc } from '../../src/register/values.js';
import { createDemoProviderIfEmpty } from '../../src/register/startup.js';
import { coreCommands } from '../../src/cli/register.js';

const run = promisify(execFile);
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ REGISTER_ENVIRONMENT: 'sandbox' });
});
afterAll(async () => {
  await t?.close();
});

/**
 * `npm run register -- <args>` against this file's database, as a separate process (like a script would), run the
 * way the npm script runs it: from the bundled file (src/cli/bundled-cli.mjs).
 */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: t.database.url,
    REGISTER_ENVIRONMENT: 'sandbox',
    LOG_LEVEL: 'silent',
  };
  delete env.REGISTER_TOKEN_SECRET;
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['src/cli/bundled-cli.mjs', 'src/cli/register.ts', ...args],
      { env },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The same commands in process (fast), with their printed lines; a refused command rejects with its message. */
async function command(name: string, ...args: string[]): Promise<string[]> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
  try {
    await coreCommands[name]!(args, t.database.db, t.config);
  } finally {
    spy.mockRestore();
  }
  return lines;
}

describe('npm run register', () => {
  it('as a separate process: creates a provider and a token the running app accepts, printed alone on the last line', async () => {
    const created = await cli('provider:create', '--ukprn', '12345678', '--name', 'CLI Provider');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('CLI Provider (UKPRN 12345678)');
    const token = await cli('token:create', '--provider', '12345678', '--name', 'SRS');
    expect(token.code).toBe(0);
    const lastLine = token.stdout.trim().split('\n').at(-1)!;
    expect(lastLine).toMatch(/^sandbox_[0-9a-f]{64}$/);
    const info = await t.app.inject({
      method: 'GET',
      url: '/api/v2026.1/info',
      headers: { authorization: `Bearer ${lastLine}` },
    });
    expect(info.statusCode).toBe(200);
    const refused = await cli('provider:create', '--ukprn', '12345678', '--name', 'Again');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('already exists');
  });

  it('at most 2 active tokens; token:list never shows a token; token:revoke makes it 401', async () => {
    await command('provider:create', '--ukprn', '33333333', '--name', 'Two tokens');
    const token = (await command('token:create', '--provider', '33333333')).at(-1)!;
    await command('token:create', '--provider', '33333333');
    await expect(command('token:create', '--provider', '33333333')).rejects.toThrow('already has 2 active tokens');
    const list = await command('token:list', '--provider', '33333333');
    expect(list).toHaveLength(2);
    expect(list.join('\n')).not.toContain(token);
    const firstId = list[0]!.split('\t')[0]!;
    await command('token:revoke', firstId);
    const after = await t.app.inject({
      method: 'GET',
      url: '/api/v2026.1/info',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.statusCode).toBe(401);
    await expect(command('token:revoke', firstId)).rejects.toThrow(`No active token with id ${firstId}`);
    // The revoked token frees a place.
    expect((await command('token:create', '--provider', '33333333')).at(-1)).toMatch(/^sandbox_/);
  });

  it('refuses an expiry beyond 6 months or not in the future, and an unknown provider', async () => {
    await command('provider:create', '--ukprn', '22222222', '--name', 'Expiry');
    await expect(
      command('token:create', '--provider', '22222222', '--expires', addMonths(todayUtc(), 7)),
    ).rejects.toThrow('at most 6 months ahead');
    await expect(command('token:create', '--provider', '22222222', '--expires', todayUtc())).rejects.toThrow(
      'must be in the future',
    );
    await expect(command('token:create', '--provider', '99999999')).rejects.toThrow('No provider with UKPRN 99999999');
    expect(
      (await command('token:create', '--provider', '22222222', '--expires', addMonths(todayUtc(), 6))).at(-1),
    ).toMatch(/^sandbox_/);
  });

  it('provider:discard stops the provider’s tokens', async () => {
    await command('provider:create', '--ukprn', '44444444', '--name', 'Gone');
    const token = (await command('token:create', '--provider', '44444444')).at(-1)!;
    await command('provider:discard', '--ukprn', '44444444');
    const response = await t.app.inject({ method: 'GET', url: '/api/v2026.1/info', headers: { authorization: token } });
    expect(response.statusCode).toBe(401);
  });
});

describe('demo provider on first start', () => {
  it('creates the demo provider and one token only when there is no provider', async () => {
    const empty = await buildTestApp();
    try {
      const token = await createDemoProviderIfEmpty(
        empty.database.db,
        'sandbox',
        'register-development-secret-not-for-production',
      );
      expect(token).toMatch(/^sandbox_[0-9a-f]{64}$/);
      const info = await empty.app.inject({
        method: 'GET',
        url: '/api/v2026.1/info',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(info.statusCode).toBe(200);
      expect(await createDemoProviderIfEmpty(empty.database.db, 'sandbox', 'x'.repeat(20))).toBeUndefined();
      const providers = await empty.database.db.selectFrom('providers').selectAll().execute();
      expect(providers).toHaveLength(1);
    } finally {
      await empty.close();
    }
  });
});
