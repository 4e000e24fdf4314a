import { sql, type Kysely } from 'kysely';

/**
 * Webhook subscriptions and their deliveries. A subscription's `cursor` is the last event position it has been
 * fanned out to (deliveries are written in position order, so none is skipped). One delivery attempt of a
 * subscription runs at a time, claimed with a lease (`lease_owner`, `lease_until`) so that two instances never send
 * for the same subscription at once and a dead instance's claim runs out; deliveries go in event order.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE webhook_subscriptions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      api text NOT NULL CHECK (api IN ('statistics', 'register')),
      provider_id integer REFERENCES providers (id),
      environment text CHECK (environment IN ('production', 'sandbox')),
      api_version text,
      url text NOT NULL,
      event_types text[] NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      cursor bigint NOT NULL,
      lease_owner text,
      lease_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((api = 'register') = (provider_id IS NOT NULL AND environment IS NOT NULL AND api_version IS NOT NULL))
    )`.execute(db);
  await sql`CREATE INDEX webhook_subscriptions_provider_idx ON webhook_subscriptions (provider_id, environment)`.execute(db);
  await sql`
    CREATE TABLE webhook_deliveries (
      id bigserial PRIMARY KEY,
      subscription_id uuid NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
      event_position bigint NOT NULL,
      event_id uuid NOT NULL,
      event_type text NOT NULL,
      body text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      last_attempt_at timestamptz,
      last_status integer,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (subscription_id, event_position)
    )`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (subscription_id, event_position) WHERE status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE webhook_deliveries`.execute(db);
  await sql`DROP TABLE webhook_subscriptions`.execute(db);
}
