/**
 * Provider API tokens: `<environment>_<64 hex>`, stored only as HMAC-SHA256 under a key that
 * differs per environment, so a sandbox token never authenticates against production and the reverse.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Executor } from '../db/database.js';
import { AppError, NotFoundError } from '../errors.js';
import { todayUtc } from './values.js';
import {
  countActiveTokens,
  findActiveTokenByHash,
  findProviderForUpdate,
  findTokenOfOtherEnvironment,
  insertToken,
  listTokenRows,
  markTokenUsed,
  revokeActiveToken,
} from './tokens-repository.js';

export type RegisterEnvironment = 'production' | 'sandbox';

/** Used when REGISTER_TOKEN_SECRET is not set (development and the embedded default only). */
export const DEVELOPMENT_TOKEN_SECRET = 'register-development-secret-not-for-production';

/** Refused settings of the register's environment (the development key in production, a database of the other environment). */
export class RegisterEnvironmentError extends Error {}

/**
 * The secret the environment's token key is derived from. Production never uses the public development key,
 * whether by default or set explicitly.
 */
export function tokenSecret(config: {
  REGISTER_TOKEN_SECRET?: string;
  REGISTER_ENVIRONMENT?: RegisterEnvironment;
}): string {
  const secret = config.REGISTER_TOKEN_SECRET ?? DEVELOPMENT_TOKEN_SECRET;
  if (config.REGISTER_ENVIRONMENT === 'production' && secret.trim() === DEVELOPMENT_TOKEN_SECRET) {
    throw new RegisterEnvironmentError(
      'Invalid environment variable REGISTER_TOKEN_SECRET: the public development key cannot be used when REGISTER_ENVIRONMENT is production',
    );
  }
  return secret;
}

/**
 * A database serves one register environment: sandbox and production trainees must never meet. Refuses (throws)
 * when the database already holds tokens, and so trainees, of the other environment.
 */
export async function assertDatabaseEnvironment(db: Executor, environment: RegisterEnvironment): Promise<void> {
  const other = await findTokenOfOtherEnvironment(db, environment);
  if (other) {
    throw new RegisterEnvironmentError(
      `REGISTER_ENVIRONMENT is ${environment} but this database holds ${other.environment} tokens and trainees; ` +
        `each environment needs its own database (see docs/operations.md)`,
    );
  }
}

export const MAX_ACTIVE_TOKENS = 2;
export const MAX_TOKEN_MONTHS = 6;

const keyCache = new Map<string, Buffer>();

/** The environment's HMAC key, derived from the secret (the real service derives it from its own secret). */
function tokenKey(secret: string, environment: RegisterEnvironment): Buffer {
  const cacheKey = `${environment}\u0000${secret}`;
  let key = keyCache.get(cacheKey);
  if (!key) {
    key = createHmac('sha256', secret).update(`api-token:v1:${environment}`).digest();
    keyCache.set(cacheKey, key);
  }
  return key;
}

export function hashToken(token: string, environment: RegisterEnvironment, secret = DEVELOPMENT_TOKEN_SECRET): string {
  return createHmac('sha256', tokenKey(secret, environment)).update(token).digest('hex');
}

export function generateToken(environment: RegisterEnvironment): string {
  return `${environment}_${randomBytes(32).toString('hex')}`;
}

/** The token from an Authorization header: `Bearer <token>` or the bare token; `bearer` (lower case) is not stripped. */
export function tokenFromHeader(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const token = (header.startsWith('Bearer ') ? header.slice(7) : header).trim();
  return token === '' ? undefined : token;
}

export function addMonths(date: string, months: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d.toISOString().slice(0, 10);
}

export interface AuthenticatedToken {
  tokenId: number;
  lastUsedAt: Date | null;
  provider: { id: number; ukprn: string; name: string };
}

/**
 * The provider a token authenticates, or undefined: the hash must match an active token of this environment,
 * not on or past its expiry date, of a provider that is not soft-deleted.
 */
export async function authenticateToken(
  db: Executor,
  token: string,
  environment: RegisterEnvironment,
  secret?: string,
): Promise<AuthenticatedToken | undefined> {
  return authenticateHash(db, hashToken(token, environment, secret), environment);
}

async function authenticateHash(
  db: Executor,
  hash: string,
  environment: RegisterEnvironment,
): Promise<AuthenticatedToken | undefined> {
  const row = await findActiveTokenByHash(db, hash, environment);
  if (!row) return undefined;
  return {
    tokenId: row.tokenId,
    lastUsedAt: row.last_used_at,
    provider: { id: row.providerId, ukprn: row.ukprn, name: row.name },
  };
}

/**
 * Token lookups of one instance, reused for at most `ttlMs` (REGISTER_TOKEN_CACHE_MS): a request then needs no
 * statement to authenticate. Keyed by the token's hash (never the token); only tokens that authenticated are kept,
 * so unknown tokens neither fill it nor evict known ones. A change made elsewhere (a revocation by the operator's CLI
 * or another instance, an expiry, a discarded provider) takes effect here within `ttlMs`.
 */
export class TokenCache {
  private readonly entries: LRUCache<string, AuthenticatedToken> | undefined;

  constructor(ttlMs: number, max = 10_000) {
    this.entries = ttlMs > 0 ? new LRUCache({ max, ttl: ttlMs, ttlAutopurge: false }) : undefined;
  }

  /** The provider behind `token` (from the cache while fresh, else looked up and kept), or undefined. */
  async authenticate(
    db: Executor,
    token: string,
    environment: RegisterEnvironment,
    secret?: string,
  ): Promise<AuthenticatedToken | undefined> {
    const hash = hashToken(token, environment, secret);
    const cached = this.entries?.get(hash);
    if (cached) return cached;
    const found = await authenticateHash(db, hash, environment);
    if (found) this.entries?.set(hash, found);
    return found;
  }
}

/** Records use at most once per calendar day (as the real service does), so reads stay reads. */
export async function touchToken(db: Executor, token: AuthenticatedToken, now = new Date()): Promise<void> {
  if (token.lastUsedAt && todayUtc(token.lastUsedAt) === todayUtc(now)) return;
  await markTokenUsed(db, token.tokenId, now);
  // A cached lookup shares this object: the next requests within the day write nothing.
  token.lastUsedAt = now;
}

export class TokenRuleError extends AppError {
  constructor(message: string) {
    super(422, 'Unprocessable Entity', message);
  }
}

export interface CreateTokenInput {
  providerUkprn: string;
  environment: RegisterEnvironment;
  secret?: string;
  name?: string;
  /** 'YYYY-MM-DD'; default today + 6 months. */
  expiresAt?: string;
  today?: string;
}

export interface CreatedToken {
  id: number;
  token: string;
  name: string;
  expiresAt: string;
  provider: { id: number; ukprn: string; name: string };
}

/** Creates a token under the real rules: name ≤ 200, expiry in the future and ≤ 6 months ahead, ≤ 2 active per provider. */
export async function createToken(db: Executor, input: CreateTokenInput): Promise<CreatedToken> {
  const today = input.today ?? todayUtc();
  const latest = addMonths(today, MAX_TOKEN_MONTHS);
  const expiresAt = input.expiresAt ?? latest;
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(expiresAt) ||
    Number.isNaN(Date.parse(`${expiresAt}T00:00:00Z`)) ||
    new Date(`${expiresAt}T00:00:00Z`).toISOString().slice(0, 10) !== expiresAt
  ) {
    throw new TokenRuleError(`--expires must be a date YYYY-MM-DD (got "${expiresAt}")`);
  }
  if (expiresAt <= today) throw new TokenRuleError(`--expires must be in the future (after ${today})`);
  if (expiresAt > latest)
    throw new TokenRuleError(`--expires must be at most ${MAX_TOKEN_MONTHS} months ahead (${latest} at the latest)`);
  const name = input.name ?? `Token created ${today}`;
  if (name.trim() === '') throw new TokenRuleError('--name must not be empty');
  if (name.length > 200) throw new TokenRuleError('--name is too long (maximum is 200 characters)');

  await assertDatabaseEnvironment(db, input.environment);
  const provider = await findProviderForUpdate(db, input.providerUkprn);
  if (!provider) throw new TokenRuleError(`No provider with UKPRN ${input.providerUkprn}`);
  if ((await countActiveTokens(db, provider.id, today)) >= MAX_ACTIVE_TOKENS) {
    throw new TokenRuleError(
      `Provider ${provider.ukprn} already has ${MAX_ACTIVE_TOKENS} active tokens; revoke one first`,
    );
  }
  for (;;) {
    const token = generateToken(input.environment);
    const inserted = await insertToken(db, {
      provider_id: provider.id,
      name,
      token_hash: hashToken(token, input.environment, input.secret),
      environment: input.environment,
      expires_at: expiresAt,
    });
    if (inserted) return { id: inserted.id, token, name, expiresAt, provider };
  }
}

/** Revokes an active token (it stops authenticating at once). */
export async function revokeToken(db: Executor, id: number): Promise<void> {
  if (!(await revokeActiveToken(db, id))) throw new NotFoundError(`No active token with id ${id}`);
}

export interface TokenSummary {
  id: number;
  ukprn: string;
  name: string;
  environment: string;
  /** `expired` for an active token on or past its expiry date. */
  status: string;
  expiresAt: string;
  lastUsedAt: Date | null;
}

/** Every token (or one provider's), oldest first; never the secret, which is stored only as a hash. */
export async function listTokens(db: Executor, providerUkprn?: string, today = todayUtc()): Promise<TokenSummary[]> {
  const rows = await listTokenRows(db, providerUkprn);
  return rows.map((t) => ({
    id: t.id,
    ukprn: t.ukprn,
    name: t.name,
    environment: t.environment,
    status: t.status === 'active' && t.expires_at <= today ? 'expired' : t.status,
    expiresAt: t.expires_at,
    lastUsedAt: t.last_used_at,
  }));
}
