import { sql, type Kysely } from 'kysely';

/**
 * The retention purge (`purgeEvents`) now walks the log by position, a batch of the oldest events per statement, and
 * no longer asks for the newest old event by time: nothing reads `events_occurred_at_idx` any more, and every event
 * the sequencer appends paid for its entry in it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS events_occurred_at_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX IF NOT EXISTS events_occurred_at_idx ON events (occurred_at)`.execute(db);
}
