/** What the register's version scopes give their route plugins and requests. */
import type { RegisterEnvironment } from './tokens.js';
import type { TraineeBodyCache } from './trainees/body-cache.js';
import type { RegisterVersion } from './versions/index.js';

/** What every authenticated register request knows after authentication. */
export interface RegisterContext {
  provider: { id: number; ukprn: string; name: string };
  tokenId: number;
  /** The canonical version (an alias such as `-rc` is already resolved). */
  version: RegisterVersion;
  environment: RegisterEnvironment;
}

/** Options every route plugin inside a version scope receives (the database and configuration are `app.db`, `app.config`). */
export interface RegisterRouteOptions {
  version: RegisterVersion;
  /** The version as written in the path (`v2025.0-rc` stays `v2025.0-rc`). */
  label: string;
  /** Serialized list bodies, one cache per app for all versions (bounded by bytes). */
  bodyCache: TraineeBodyCache;
}

/** A write on a trainee (a state change, a placement or degree): whose, the request's `If-Match`, and its `data` (read when needed). */
export interface TraineeWrite {
  traineeId: string;
  ifMatch: string | undefined;
  data: () => Record<string, unknown>;
}
