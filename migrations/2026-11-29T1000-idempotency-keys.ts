import { sql, type Kysely } from 'kysely';

/**
 * Idempotency-Key on register writes (src/register/idempotency.ts): one row per provider, environment and key while
 * its first request runs (`owner`, `locked_until`) and then with the response that request got, replayed to retries
 * until `expires_at`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE idempotency_keys (
      provider_id integer NOT NULL REFERENCES providers (id) ON DELETE CASCADE,
      environment text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      owner uuid,
      locked_until timestamptz,
      response_status smallint,
      response_headers jsonb,
      response_body text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (provider_id, environment, key)
    )`.execute(db);
  await sql`CREATE INDEX idempotency_keys_expiry ON idempotency_keys (provider_id, environment, expires_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TABLE idempotency_keys`.execute(db);
}
