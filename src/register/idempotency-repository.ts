/** Reads and writes of register Idempotency-Keys (src/register/idempotency.ts). Plain functions taking the executor first. */
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

export interface KeyId {
  providerId: number;
  environment: string;
  key: string;
}

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A key's row as a new request finds it: whose request it was, and its response once that request finished. */
export interface KeyRecord {
  fingerprint: string;
  response: StoredResponse | null;
}

const keyMatches = (id: KeyId) =>
  sql`provider_id = ${id.providerId} AND environment = ${id.environment} AND key = ${id.key}`;

/** The key's unexpired row, or undefined. */
export async function findKey(db: Executor, id: KeyId): Promise<KeyRecord | undefined> {
  const { rows } = await sql<{
    fingerprint: string;
    response_status: number | null;
    response_headers: Record<string, string> | null;
    response_body: string | null;
  }>`
    SELECT fingerprint, response_status, response_headers, response_body FROM idempotency_keys
    WHERE ${keyMatches(id)} AND expires_at > now()`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  return {
    fingerprint: row.fingerprint,
    response:
      row.response_status === null
        ? null
        : { status: row.response_status, headers: row.response_headers ?? {}, body: row.response_body ?? '' },
  };
}

/**
 * The provider's unexpired keys in the environment, counted up to `limit` (an index range, never more rows); at the
 * limit, its expired rows are deleted first.
 */
export async function countKeys(db: Executor, providerId: number, environment: string, limit: number): Promise<number> {
  const count = async () => {
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM (
        SELECT 1 FROM idempotency_keys WHERE provider_id = ${providerId} AND environment = ${environment} AND expires_at > now() LIMIT ${limit}
      ) AS held`.execute(db);
    return rows[0]!.n;
  };
  const n = await count();
  if (n < limit) return n;
  await sql`DELETE FROM idempotency_keys WHERE provider_id = ${providerId} AND environment = ${environment} AND expires_at <= now()`.execute(
    db,
  );
  return count();
}

/**
 * Takes the key for a request with `fingerprint`, owned by `owner` until `lockMs` from now: a new key, an expired
 * one, or one whose earlier request with the same fingerprint stopped without a response (its instance died and its
 * lock ran out). False when another request holds it or its response is stored.
 */
export async function claimKey(
  db: Executor,
  id: KeyId,
  claim: { fingerprint: string; owner: string; lockMs: number; ttlSeconds: number },
): Promise<boolean> {
  const { rows } = await sql<{ claimed: boolean }>`
    INSERT INTO idempotency_keys AS held (provider_id, environment, key, fingerprint, owner, locked_until, expires_at)
    VALUES (${id.providerId}, ${id.environment}, ${id.key}, ${claim.fingerprint}, ${claim.owner},
            now() + make_interval(secs => ${claim.lockMs / 1000}), now() + make_interval(secs => ${claim.ttlSeconds}))
    ON CONFLICT (provider_id, environment, key) DO UPDATE SET
      fingerprint = EXCLUDED.fingerprint, owner = EXCLUDED.owner, locked_until = EXCLUDED.locked_until,
      response_status = NULL, response_headers = NULL, response_body = NULL, created_at = now(), expires_at = EXCLUDED.expires_at
    WHERE held.expires_at <= now()
       OR (held.response_status IS NULL AND held.locked_until <= now() AND held.fingerprint = EXCLUDED.fingerprint)
    RETURNING true AS claimed`.execute(db);
  return rows.length > 0;
}

/** Stores the response of the owner's request (and ends its lock); false when the key is no longer the owner's. */
export async function storeResponse(
  db: Executor,
  id: KeyId,
  owner: string,
  response: StoredResponse,
): Promise<boolean> {
  const result = await sql`
    UPDATE idempotency_keys SET response_status = ${response.status}, response_headers = ${JSON.stringify(response.headers)}::jsonb,
      response_body = ${response.body}, owner = NULL, locked_until = NULL
    WHERE ${keyMatches(id)} AND owner = ${owner}`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}

/** Gives the key up (its request got an answer worth retrying: 5xx, 429), so that the next request with it runs. */
export async function releaseKey(db: Executor, id: KeyId, owner: string): Promise<void> {
  await sql`DELETE FROM idempotency_keys WHERE ${keyMatches(id)} AND owner = ${owner}`.execute(db);
}
