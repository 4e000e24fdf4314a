import { Migrator, type Kysely, type MigrationResult } from 'kysely';
import { migrations } from '../../migrations/index.js';

export class MigrationError extends Error {
  constructor(
    message: string,
    readonly results: MigrationResult[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

/** Runs every pending migration; throws (Kysely's Migrator only returns its error) so start-up fails loudly. */
export async function migrateToLatestOrThrow<Schema>(db: Kysely<Schema>): Promise<MigrationResult[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error) {
    const failed = results.find((r) => r.status === 'Error');
    const reason = error instanceof Error ? error.message : JSON.stringify(error);
    throw new MigrationError(`Migration ${failed ? `"${failed.migrationName}" ` : ''}failed: ${reason}`, results, {
      cause: error,
    });
  }
  return results;
}
