/** The SQL of authentication tokens (the rules are in tokens.ts). */
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import type { RegisterEnvironment } from './tokens.js';

/** Any token of an environment other than `environment` (its environment), or undefined. */
export async function findTokenOfOtherEnvironment(
  db: Executor,
  environment: RegisterEnvironment,
): Promise<{ environment: string } | undefined> {
  return db
    .selectFrom('authentication_tokens')
    .select('environment')
    .where('environment', '<>', environment)
    .limit(1)
    .executeTakeFirst();
}

/** The active, unexpired token with this hash in this environment, with its provider (not soft-deleted). */
export async function findActiveTokenByHash(db: Executor, tokenHash: string, environment: RegisterEnvironment) {
  return db
    .selectFrom('authentication_tokens as t')
    .innerJoin('providers as p', 'p.id', 't.provider_id')
    .select(['t.id as tokenId', 't.last_used_at', 'p.id as providerId', 'p.ukprn', 'p.name'])
    .where('t.token_hash', '=', tokenHash)
    .where('t.environment', '=', environment)
    .where('t.status', '=', 'active')
    .where('t.expires_at', '>', sql<string>`current_date`)
    .where('p.discarded_at', 'is', null)
    .executeTakeFirst();
}

/** Sets `last_used_at` unless it is already today (by the database's clock). */
export async function markTokenUsed(db: Executor, tokenId: number, now: Date): Promise<void> {
  await db
    .updateTable('authentication_tokens')
    .set({ last_used_at: now })
    .where('id', '=', tokenId)
    .where((eb) =>
      eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`date_trunc('day', now())`)]),
    )
    .execute();
}

/** The provider (not soft-deleted) with this UKPRN, locked until the transaction ends. */
export async function findProviderForUpdate(
  db: Executor,
  ukprn: string,
): Promise<{ id: number; ukprn: string; name: string } | undefined> {
  return db
    .selectFrom('providers')
    .select(['id', 'ukprn', 'name'])
    .where('ukprn', '=', ukprn)
    .where('discarded_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

/** Active tokens of a provider that expire after `today`. */
export async function countActiveTokens(db: Executor, providerId: number, today: string): Promise<number> {
  const { active } = await db
    .selectFrom('authentication_tokens')
    .select((eb) => eb.fn.countAll<number>().as('active'))
    .where('provider_id', '=', providerId)
    .where('status', '=', 'active')
    .where('expires_at', '>', today)
    .executeTakeFirstOrThrow();
  return Number(active);
}

/** Inserts a token; undefined when its hash is taken already (the caller draws another). */
export async function insertToken(
  db: Executor,
  token: {
    provider_id: number;
    name: string;
    token_hash: string;
    environment: RegisterEnvironment;
    expires_at: string;
  },
): Promise<{ id: number } | undefined> {
  return db
    .insertInto('authentication_tokens')
    .values(token)
    .onConflict((oc) => oc.column('token_hash').doNothing())
    .returning('id')
    .executeTakeFirst();
}

/** Revokes an active token; false when no active token has this id. */
export async function revokeActiveToken(db: Executor, id: number): Promise<boolean> {
  const result = await db
    .updateTable('authentication_tokens')
    .set({ status: 'revoked', revoked_at: new Date(), updated_at: new Date() })
    .where('id', '=', id)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Every token (or one provider's) with its provider's UKPRN, oldest first. */
export async function listTokenRows(db: Executor, providerUkprn?: string) {
  return db
    .selectFrom('authentication_tokens as t')
    .innerJoin('providers as p', 'p.id', 't.provider_id')
    .select(['t.id', 't.name', 't.environment', 't.status', 't.expires_at', 't.last_used_at', 'p.ukprn'])
    .$if(providerUkprn !== undefined, (qb) => qb.where('p.ukprn', '=', providerUkprn!))
    .orderBy('t.id')
    .execute();
}
