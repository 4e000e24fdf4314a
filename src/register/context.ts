/** What the register's version scopes give their route plugins and requests. */
import type { Executor } from '../db/database.js';
import type { SandboxSchedule } from './sandbox/scenarios.js';
import type { RegisterEnvironment, TokenCache } from './tokens.js';
import type { TraineeBodyCache } from './trainees/body-cache.js';
import type { RegisterVersion } from './versions/index.js';

/** What every authenticated register request knows after authentication. */
export interface RegisterContext {
  provider: { id: number; ukprn: string; name: string };
  tokenId: number;
  /** The canonical version (an alias such as `-rc` is already resolved). */
  version: RegisterVersion;
  environment: RegisterEnvironment;
  /** The sandbox's simulated TRN and award delays; undefined on a live instance (nothing is ever automatic there). */
  sandbox: SandboxSchedule | undefined;
}

/** Options every route plugin inside a version scope receives (the database and configuration are `app.db`, `app.config`). */
export interface RegisterRouteOptions {
  version: RegisterVersion;
  /** The version as written in the path (`v2025.0-rc` stays `v2025.0-rc`). */
  label: string;
  /** Serialized list bodies, one cache per app for all versions (bounded by bytes). */
  bodyCache: TraineeBodyCache;
  /** Token lookups of this instance (one cache per app for all versions). */
  tokens: TokenCache;
}

/**
 * A write as the routes read it: its `data` (read only when the service asks, so that a missing trainee, a stale
 * `If-Match` or a locked trainee is refused before the body is looked at) and whether validation messages are keyed
 * by attribute (`Enhanced-Errors: true`).
 */
export interface WriteRequest {
  data: () => Record<string, unknown>;
  enhancedErrors: boolean;
  beforeCommit?: BeforeCommit;
}

/**
 * What a write's transaction runs last, before it commits, with the service's result: the request's answer stored
 * under its Idempotency-Key in the same transaction (src/register/idempotency.ts), so that a write that committed is
 * never run again, even when its instance dies before answering.
 */
export type BeforeCommit = (trx: Executor, result: unknown) => Promise<void>;

/** Which trainee a write locks, and the `If-Match` it must satisfy (none for the operator's commands). */
export interface TraineeTarget {
  traineeId: string;
  ifMatch: string | undefined;
  beforeCommit?: BeforeCommit;
}

/** Every write on an existing trainee: its update, a state change, a placement or degree. */
export interface TraineeWrite extends WriteRequest, TraineeTarget {}
