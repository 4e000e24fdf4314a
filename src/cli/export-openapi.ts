import { writeFile, mkdir } from 'node:fs/promises';
import { buildApp, OPENAPI_DOCUMENTS } from '../app.js';
import { loadConfig } from '../config.js';
import { createDatabase } from '../db/database.js';
import { runCli } from './run.js';

/** `npm run openapi`: writes the OpenAPI documents the app serves to openapi/ (a test keeps them in sync). */
await runCli(async () => {
  // The documents come from route schemas alone; the pool never connects.
  const handle = createDatabase('postgres://openapi@127.0.0.1:1/none');
  const app = await buildApp(loadConfig({}), { db: handle.db, logger: false });
  try {
    await mkdir('openapi', { recursive: true });
    for (const { file, url } of OPENAPI_DOCUMENTS) {
      const response = await app.inject({ method: 'GET', url });
      await writeFile(`openapi/${file}`, `${JSON.stringify(response.json(), null, 2)}\n`);
      console.log(`wrote openapi/${file}`);
    }
  } finally {
    await app.close();
    await handle.close();
  }
});
