import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { projectPath } from '../../src/paths.js';
import { SERVICE_PROCESS_ENV } from '../../src/process-env.js';

/** The environment the service's processes must start with is set by every way of starting them that a user has. */
describe('the service process environment', () => {
  const settings = Object.entries(SERVICE_PROCESS_ENV).map(([name, value]) => `${name}=${value}`);

  it('is set by `npm start`', () => {
    const start = (JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts.start!;
    for (const setting of settings) expect(start).toContain(`${setting} node `);
  });

  it('is set by the npm scripts of the CLIs that load data', () => {
    const scripts = (
      JSON.parse(readFileSync(projectPath('package.json'), 'utf8')) as { scripts: Record<string, string> }
    ).scripts;
    for (const name of ['import', 'seed', 'stats-admin']) {
      for (const setting of settings) expect(scripts[name]).toContain(`${setting} tsx src/cli/${name}.ts`);
    }
  });

  it('is set by the container image', () => {
    const env = readFileSync(projectPath('Dockerfile'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('ENV '))
      .join(' ');
    for (const setting of settings) expect(env.split(/\s+/)).toContain(setting);
  });
});
