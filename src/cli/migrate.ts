import { loadConfig } from '../config.js';
import { openRuntime } from '../runtime.js';
import { migrateToLatestOrThrow } from '../db/migrate.js';
import { runCli } from './run.js';

/** `npm run migrate`: applies pending migrations to DATABASE_URL (or the embedded database) and lists them. */
await runCli(async () => {
  const runtime = await openRuntime(loadConfig(), { migrate: false });
  try {
    const results = await migrateToLatestOrThrow(runtime.primary.db);
    if (results.length === 0) console.log('No pending migrations.');
    for (const r of results) console.log(`${r.status === 'Success' ? 'applied' : r.status}: ${r.migrationName}`);
  } finally {
    await runtime.close();
  }
});
