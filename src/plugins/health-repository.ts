/** The readiness probe's one statement. */
import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/** `SELECT 1`: the database answers. */
export async function selectOne(db: Db): Promise<void> {
  await sql`SELECT 1`.execute(db);
}
