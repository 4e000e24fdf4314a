import { sql, type Kysely } from 'kysely';

/**
 * The change-event log (transactional outbox) of both APIs. An event is written by the transaction that makes the
 * change, so it exists exactly when the change committed. Its `position` (the feed's cursor) comes from the one row
 * of `event_log_state`, which the appending transaction keeps locked until it ends: positions are therefore handed
 * out in commit order, without gaps, and a reader can never see position n+1 before n (see docs/architecture.md,
 * "Change events"). `purged_through` is the highest position retention has deleted: a cursor below it is gone (410).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE event_log_state (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      last_position bigint NOT NULL DEFAULT 0,
      purged_through bigint NOT NULL DEFAULT 0
    )`.execute(db);
  await sql`INSERT INTO event_log_state DEFAULT VALUES`.execute(db);
  await sql`
    CREATE TABLE events (
      position bigint PRIMARY KEY,
      id uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
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
    )`.execute(db);
  // One provider's feed in one environment, and the public statistics feed: each read walks its own index in order.
  await sql`CREATE INDEX events_register_feed_idx ON events (provider_id, environment, position) WHERE api = 'register'`.execute(db);
  await sql`CREATE INDEX events_statistics_feed_idx ON events (position) WHERE api = 'statistics'`.execute(db);
  await sql`CREATE INDEX events_occurred_at_idx ON events (occurred_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE events`.execute(db);
  await sql`DROP TABLE event_log_state`.execute(db);
}
