import { sql, type Kysely } from 'kysely';

/**
 * The event inbox: events appended by committed write transactions that no sequencer has given a position yet.
 * A write transaction only inserts here (no lock on `event_log_state`, no NOTIFY), so appending transactions no
 * longer commit one at a time; a short sequencer transaction (one at a time, under an advisory lock) moves the rows
 * in `seq` order into `events`, numbering them from `event_log_state`. `seq` orders the events of one transaction
 * and of transactions that waited for each other; positions stay commit order and gapless (docs/architecture.md,
 * "Change events"). The constraints are those of `events`, so a row that could not be moved fails in its writer's
 * transaction instead of stopping the sequencer.
 *
 * Rows live for milliseconds and the table is probed every few ms: autovacuum runs on a fixed number of dead rows
 * (not a fraction of a table that is nearly always empty), so the probe does not wade through dead index entries.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE event_inbox (
      seq bigserial PRIMARY KEY,
      id uuid NOT NULL DEFAULT gen_random_uuid(),
      api text NOT NULL CHECK (api IN ('statistics', 'register')),
      type text NOT NULL,
      occurred_at timestamptz NOT NULL DEFAULT now(),
      provider_id integer REFERENCES providers (id),
      environment text CHECK (environment IN ('production', 'sandbox')),
      resource_type text NOT NULL,
      resource_id text NOT NULL,
      parent_id text,
      payload jsonb NOT NULL,
      CHECK ((api = 'register') = (provider_id IS NOT NULL AND environment IS NOT NULL))
    ) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE event_inbox`.execute(db);
}
