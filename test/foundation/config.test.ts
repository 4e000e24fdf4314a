import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('configuration', () => {
  it('fills defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 3000, HOST: '127.0.0.1', DATA_DIR: '.data', LOG_LEVEL: 'info' });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('converts numbers and booleans', () => {
    const config = loadConfig({ PORT: '8080', SEED_ON_START: 'false', DATABASE_URL: 'postgres://u@h:5432/d' });
    expect(config.PORT).toBe(8080);
    expect(config.SEED_ON_START).toBe(false);
    expect(config.DATABASE_URL).toBe('postgres://u@h:5432/d');
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://x'],
    ['REGISTER_ENVIRONMENT', 'staging'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid environment variable ${name} `));
  });

  it('requires a token secret in the production register environment', () => {
    expect(() => loadConfig({ REGISTER_ENVIRONMENT: 'production' })).toThrow(
      /^Invalid environment variable REGISTER_TOKEN_SECRET: required/,
    );
    expect(
      loadConfig({ REGISTER_ENVIRONMENT: 'production', REGISTER_TOKEN_SECRET: 'x'.repeat(32) }).REGISTER_ENVIRONMENT,
    ).toBe('production');
  });

  it('stops the server at start-up with a one-line message', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      env: { ...process.env, PORT: 'abc' },
      encoding: 'utf8',
      timeout: 20000,
    });
    expect(result.status).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Invalid environment variable PORT \(got "abc"\)/);
  });
});
