import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { ValidationError } from '../errors.js';
import { openRuntime } from '../runtime.js';
import { progressBar } from '../statistics/import/progress.js';
import { seedCatalogue } from '../statistics/seed/service.js';
import { runCli } from './run.js';

/**
 * `npm run seed`: imports the catalogue in seed/catalog.json (publications, data sets and their version histories).
 * Data sets that already have versions are skipped, so it is safe to run again.
 */
await runCli(async () => {
  let values: { 'data-set'?: string[] };
  try {
    ({ values } = parseArgs({ options: { 'data-set': { type: 'string', multiple: true } }, strict: true }));
  } catch (error) {
    throw new ValidationError(
      [{ path: 'arguments', message: `${(error as Error).message}\n\nUsage: npm run seed [-- --data-set <id> ...]` }],
      'Invalid arguments.',
    );
  }
  const runtime = await openRuntime(loadConfig(), { applicationName: 'statistics-seed' });
  try {
    let bar: ReturnType<typeof progressBar> | undefined;
    let current = '';
    const result = await seedCatalogue(runtime.primary, {
      dataSetIds: values['data-set'],
      log: (message) => console.log(message),
      onProgress: (title, version, progress) => {
        const key = `${title} v${version}`;
        if (key !== current) {
          current = key;
          bar = progressBar(`  ${key.length > 40 ? `${key.slice(0, 37)}...` : key}`);
        }
        bar?.(progress);
      },
    });
    const rows = result.versions.reduce((sum, v) => sum + v.rows, 0);
    console.log(
      `Seeded ${result.dataSets} data sets (${result.versions.length} versions, ${rows.toLocaleString('en-GB')} rows) in ${result.seconds.toFixed(1)} s.`,
    );
  } finally {
    await runtime.close();
  }
});
