import { sql } from 'kysely';
import type { Db } from './database.js';

/** The cheapest statement a database answers: the liveness probe's. */
export async function selectOne(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
