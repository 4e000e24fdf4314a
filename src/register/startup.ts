import type { StartupContext } from '../startup.js';
import type { Db } from '../db/database.js';
import type { RegisterEnvironment } from './tokens.js';
import { assertDatabaseEnvironment, createToken, tokenSecret } from './tokens.js';
import { insertProvider, lockAndCheckAnyProvider } from './organisations/repository.js';

export const DEMO_PROVIDER = { ukprn: '10000001', name: 'Demo Training Provider' };

/**
 * Creates the demo provider and one token when the register has no provider yet, so a new user can call the API
 * at once. Returns the token (shown once), or undefined when providers already exist.
 */
export async function createDemoProviderIfEmpty(
  db: Db,
  environment: RegisterEnvironment,
  secret: string,
): Promise<string | undefined> {
  return db.transaction().execute(async (trx) => {
    // One starter at a time (a CLI may open the same database concurrently).
    if (await lockAndCheckAnyProvider(trx)) return undefined;
    await insertProvider(trx, DEMO_PROVIDER);
    const created = await createToken(trx, {
      providerUkprn: DEMO_PROVIDER.ukprn,
      environment,
      secret,
      name: 'Demo token',
    });
    return created.token;
  });
}

/**
 * The register's start-up task. First the environment checks (every database): production refuses the public
 * development key, and a database holding the other environment's tokens and trainees is refused. Then, only on
 * the embedded default database (no DATABASE_URL), never on an operator's database, the demo provider.
 */
export async function registerDemoStartupTask({ config, runtime, log }: StartupContext): Promise<void> {
  tokenSecret(config);
  await assertDatabaseEnvironment(runtime.primary.db, config.REGISTER_ENVIRONMENT);
  if (config.DATABASE_URL) return;
  const token = await createDemoProviderIfEmpty(runtime.primary.db, config.REGISTER_ENVIRONMENT, tokenSecret(config));
  if (!token) return;
  log(
    `Register API: created the demo provider "${DEMO_PROVIDER.name}" (UKPRN ${DEMO_PROVIDER.ukprn}) and a ${config.REGISTER_ENVIRONMENT} token, shown only this once:`,
  );
  log(`  ${token}`);
  log(`  try: curl -H "Authorization: Bearer ${token}" http://${config.HOST}:${config.PORT}/api/v2026.1/info`);
}
