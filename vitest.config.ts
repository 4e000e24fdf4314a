import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Each file gets its own cloned database, so files run in parallel; 2 cores here, so keep it modest.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30000,
    hookTimeout: 120000,
    env: { TZ: 'UTC' },
  },
});
