import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';

/**
 * Every setting the service reads from the environment, validated once at start-up.
 * Later features add their variables here so `docs/operations.md` and the README table have one source.
 */
export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  DATABASE_READ_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  // A read replica further behind the primary than this (as clients see it) is taken out of statistics reads.
  DATABASE_READ_MAX_LAG_MS: Type.Integer({ minimum: 0, default: 5000 }),
  DATA_DIR: Type.String({ minLength: 1, default: '.data' }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  DATABASE_POOL_MAX: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  // Each API has its own pool, so load on one never starves the other; both default to DATABASE_POOL_MAX.
  DATABASE_REGISTER_POOL_MAX: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  DATABASE_STATISTICS_POOL_MAX: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  // Client-side deadline of each database call; default DATABASE_STATEMENT_TIMEOUT_MS + 5000.
  DATABASE_QUERY_TIMEOUT_MS: Type.Optional(Type.Integer({ minimum: 1 })),
  // Client-side deadline of the register's calls (token lookups, trainee reads and writes: short statements), so a
  // frozen database answers them 503 within seconds; the smaller of this and DATABASE_QUERY_TIMEOUT_MS applies.
  DATABASE_SHORT_QUERY_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 3000 }),
  // Client-side deadline of a statistics request's database work before its response starts (getting connections
  // and each call's answer, counted from the request's arrival): a call past it answers 503 if the database does not
  // answer a probe either (frozen: every statistics request 503 within 10 s), else waits on under its usual bounds;
  // a stream, once started, runs as long as its own bounds allow.
  DATABASE_STATISTICS_DEADLINE_MS: Type.Integer({ minimum: 1, default: 7000 }),
  DATABASE_CONNECTION_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 5000 }),
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 30000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 30000 }),
  // A connection that has not sent its complete request headers within this time gets 408 and is closed.
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 15000 }),
  SEED_ON_START: Type.Boolean({ default: true }),
  // Load shedding (src/plugins/load-shedding.ts): a request that arrives while the instance is past one of these
  // bounds is answered 503 with Retry-After at once instead of queueing (health probes and /metrics never are):
  // requests being answered at once per API; the event loop's mean delay over the last sample (0 = not checked: on
  // a host shared with other CPU-bound work it measures the host, and the bound on requests in progress already
  // refuses once requests slow down); its utilisation over the last sample, 0-1 (0 = not checked); queries waiting
  // for a busy connection of the API's pools (queries, not requests: a statistics catalogue list queues two at once;
  // not those that connections being opened will take); how often delay and utilisation are sampled; the
  // Retry-After, in seconds.
  LOAD_SHED_MAX_IN_FLIGHT: Type.Integer({ minimum: 1, default: 48 }),
  LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 0 }),
  LOAD_SHED_MAX_EVENT_LOOP_UTILIZATION: Type.Number({ minimum: 0, maximum: 1, default: 0 }),
  LOAD_SHED_MAX_POOL_WAITING: Type.Integer({ minimum: 1, default: 32 }),
  LOAD_SHED_SAMPLE_INTERVAL_MS: Type.Integer({ minimum: 10, maximum: 10000, default: 250 }),
  LOAD_SHED_RETRY_AFTER_S: Type.Integer({ minimum: 1, maximum: 3600, default: 1 }),
  // Graceful stop on SIGTERM: /health/ready answers 503 for this long while requests are still served (longer than
  // the balancer takes to notice: bench/cluster/haproxy.cfg checks every 1 s, 0.5 s after a failure, out after 2), then
  // the listener closes and in-flight requests finish; the process exits at the latest SHUTDOWN_TIMEOUT_MS after.
  SHUTDOWN_DRAIN_MS: Type.Integer({ minimum: 0, default: 3000 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 1000, default: 20000 }),
  // Idempotency-Key on register writes (src/register/idempotency.ts): how long a key's stored response is replayed;
  // how long a first request holds its key (a retry meanwhile gets 409; an instance that died releases it after
  // this); the keys one provider may hold at once in one environment (429 beyond).
  IDEMPOTENCY_KEY_TTL_S: Type.Integer({ minimum: 1, default: 86400 }),
  IDEMPOTENCY_LOCK_MS: Type.Integer({ minimum: 100, default: 10000 }),
  IDEMPOTENCY_MAX_KEYS_PER_PROVIDER: Type.Integer({ minimum: 1, default: 10000 }),
  REGISTER_ENVIRONMENT: Type.Union([Type.Literal('production'), Type.Literal('sandbox')], { default: 'sandbox' }),
  REGISTER_TOKEN_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  // The sandbox's simulated teacher record service (never in production): a created trainee gets its TRN this long
  // after the create, a recommended one its award this long after the recommendation (0: at the simulator's next
  // look); the test scenarios' late TRN or award (provider_trainee_id `test-late-…`, docs/guides.md) come after
  // REGISTER_SANDBOX_LATE_DELAY_MS instead; how often each instance looks for due trainees.
  REGISTER_SANDBOX_TRN_DELAY_MS: Type.Integer({ minimum: 0, maximum: 86400000, default: 5000 }),
  REGISTER_SANDBOX_AWARD_DELAY_MS: Type.Integer({ minimum: 0, maximum: 86400000, default: 5000 }),
  REGISTER_SANDBOX_LATE_DELAY_MS: Type.Integer({ minimum: 0, maximum: 604800000, default: 600000 }),
  REGISTER_SANDBOX_POLL_MS: Type.Integer({ minimum: 50, maximum: 60000, default: 1000 }),
  // Sandbox data tools (generate trainees, clear the sandbox data): calls per provider per window, besides the
  // register's own rate limit (each call writes up to hundreds of trainees).
  RATE_LIMIT_REGISTER_SANDBOX_TOOLS_MAX: Type.Integer({ minimum: 1, default: 10 }),
  RATE_LIMIT_REGISTER_SANDBOX_TOOLS_WINDOW_MS: Type.Integer({ minimum: 1, default: 60000 }),
  // How long an instance may reuse a token's lookup: a revoked or expired token, or a discarded provider's, is refused
  // by every instance at most this long after the change (`token:revoke` runs in its own process). 0: every request.
  REGISTER_TOKEN_CACHE_MS: Type.Integer({ minimum: 0, maximum: 1000, default: 500 }),
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  RATE_LIMIT_REGISTER_MAX: Type.Integer({ minimum: 1, default: 100 }),
  RATE_LIMIT_REGISTER_WINDOW_MS: Type.Integer({ minimum: 1, default: 60000 }),
  RATE_LIMIT_STATISTICS_MAX: Type.Integer({ minimum: 1, default: 1000 }),
  RATE_LIMIT_STATISTICS_WINDOW_MS: Type.Integer({ minimum: 1, default: 60000 }),
  TRUST_PROXY: Type.Boolean({ default: false }),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, default: 1048576 }),
  // The write timeout: a response (JSON or a CSV stream) whose client has not taken any bytes for this long is dropped.
  STREAM_STALL_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10000 }),
  // Streamed query CSVs: their own statement bound (instead of DATABASE_STATEMENT_TIMEOUT_MS), and how many may run
  // at once per client IP (429 beyond) and in total (503 beyond).
  QUERY_CSV_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 600000 }),
  QUERY_CSV_MAX_PER_CLIENT: Type.Integer({ minimum: 1, default: 2 }),
  QUERY_CSV_MAX_CONCURRENT: Type.Integer({ minimum: 1, default: 4 }),
  // How long statistics queries and meta may reuse a resolved data set version (status, rows table); 0 = every request.
  QUERY_VERSION_CACHE_MS: Type.Integer({ minimum: 0, default: 1000 }),
  // Memory the in-process row indexes of the statistics query may hold (least recently used evicted beyond it).
  QUERY_INDEX_MEMORY_MB: Type.Integer({ minimum: 0, default: 1024 }),
  // Time bound of loading or building one version's row index in the background (its own, not the requests'
  // statement timeout), and the wait after a failed attempt before the next (doubling per failure, up to 32×).
  QUERY_INDEX_BUILD_TIMEOUT_MS: Type.Integer({ minimum: 1, default: 600000 }),
  QUERY_INDEX_RETRY_MS: Type.Integer({ minimum: 0, default: 30000 }),
  // A starting instance loads the row indexes of this many versions queried (by any instance) or published most
  // recently before /health/ready says ready, for at most QUERY_INDEX_WARM_TIMEOUT_MS; 0 = ready at once.
  QUERY_INDEX_WARM_VERSIONS: Type.Integer({ minimum: 0, default: 4 }),
  QUERY_INDEX_WARM_TIMEOUT_MS: Type.Integer({ minimum: 0, default: 60000 }),
  // The CLIs that load data in bulk (`npm run import`, `stats-admin rebuild-storage` and `backfill-parquet`) lower
  // their CPU priority to this nice value (0-19; never raised), so that on a host that also serves requests the
  // service's answers come first and the batch takes what is left; 0 = as started.
  BATCH_NICE: Type.Integer({ minimum: 0, maximum: 19, default: 10 }),
  // Change events (src/events): how long they are kept (a cursor older than this answers 410).
  EVENTS_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 90 }),
  // Live event streams (Server-Sent Events) at once per client (IPv4 address, IPv6 /64, or provider) and in total; the comment line
  // sent to keep an idle stream open; how often an instance looks for new events besides LISTEN/NOTIFY.
  EVENTS_STREAM_MAX_PER_CLIENT: Type.Integer({ minimum: 1, default: 5 }),
  EVENTS_STREAM_MAX_CONCURRENT: Type.Integer({ minimum: 1, default: 1000 }),
  // Of EVENTS_STREAM_MAX_CONCURRENT, the streams only providers' authenticated (register) streams may take, so
  // anonymous statistics streams cannot crowd them out (anonymous clients get 503 beyond the rest).
  EVENTS_STREAM_RESERVED_FOR_PROVIDERS: Type.Integer({ minimum: 0, default: 200 }),
  EVENTS_HEARTBEAT_MS: Type.Integer({ minimum: 100, default: 15000 }),
  EVENTS_POLL_MS: Type.Integer({ minimum: 50, default: 2000 }),
  // How often an instance looks for appended events that have no position yet (one index probe; when some wait, a
  // short sequencer transaction gives them positions). The delay an event waits before feeds and webhooks see it.
  EVENTS_SEQUENCE_INTERVAL_MS: Type.Integer({ minimum: 1, maximum: 60000, default: 25 }),
  // Webhooks: receivers on loopback/private addresses (development and tests only; refused in production), outgoing
  // requests at once per instance and for one owner (a provider in an environment, or the statistics subscriptions),
  // connect and total timeouts (the total bounds each attempt whatever the receiver does), retry backoff (exponential with jitter, from BASE up
  // to MAX) for RETRY_WINDOW after an event's first attempt (then the subscription is disabled), the old secret's
  // validity after a rotation, and how often an instance looks for due deliveries besides the event hub's wake-ups.
  WEBHOOK_ALLOW_PRIVATE_ADDRESSES: Type.Boolean({ default: false }),
  WEBHOOK_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 100, default: 16 }),
  WEBHOOK_CONCURRENCY_PER_OWNER: Type.Integer({ minimum: 1, maximum: 100, default: 4 }),
  WEBHOOK_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 3000 }),
  WEBHOOK_TIMEOUT_MS: Type.Integer({ minimum: 100, default: 10000 }),
  WEBHOOK_RETRY_BASE_MS: Type.Integer({ minimum: 10, default: 5000 }),
  WEBHOOK_RETRY_MAX_MS: Type.Integer({ minimum: 10, default: 3600000 }),
  WEBHOOK_RETRY_WINDOW_MS: Type.Integer({ minimum: 100, default: 86400000 }),
  WEBHOOK_SECRET_OVERLAP_HOURS: Type.Integer({ minimum: 0, maximum: 720, default: 24 }),
  WEBHOOK_POLL_MS: Type.Integer({ minimum: 50, default: 1000 }),
  // Finished deliveries (succeeded or failed), their bodies included, are deleted this many days after their last
  // attempt (pending ones are kept).
  WEBHOOK_DELIVERY_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
});

export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

const booleanWords: Record<string, boolean> = { true: true, '1': true, yes: true, false: false, '0': false, no: false };

/** Reads the known variables from `env`, converts numbers and booleans, fills defaults, and rejects bad values. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(ConfigSchema.properties)) {
    const value = env[key];
    if (value === undefined || value === '') continue;
    const kind = (schema as { type?: string }).type;
    if (kind === 'integer') {
      raw[key] = /^-?\d+$/.test(value.trim()) ? Number(value) : value;
    } else if (kind === 'number') {
      raw[key] = /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
    } else if (kind === 'boolean') {
      raw[key] = value.toLowerCase() in booleanWords ? booleanWords[value.toLowerCase()] : value;
    } else {
      raw[key] = value;
    }
  }
  const withDefaults = Value.Default(ConfigSchema, raw) as Record<string, unknown>;
  const firstError = Value.Errors(ConfigSchema, withDefaults).First();
  if (firstError) {
    const name = firstError.path.replace(/^\//, '').split('/')[0] || 'configuration';
    const shown = env[name] === undefined ? '' : ` (got ${JSON.stringify(env[name])})`;
    throw new ConfigError(`Invalid environment variable ${name}${shown}: ${firstError.message}`);
  }
  const config = withDefaults as Config;
  // Production tokens must never be hashed with the built-in development key.
  if (config.REGISTER_ENVIRONMENT === 'production' && !config.REGISTER_TOKEN_SECRET) {
    throw new ConfigError(
      'Invalid environment variable REGISTER_TOKEN_SECRET: required (at least 16 characters) when REGISTER_ENVIRONMENT is production',
    );
  }
  if (config.REGISTER_ENVIRONMENT === 'production' && config.WEBHOOK_ALLOW_PRIVATE_ADDRESSES) {
    throw new ConfigError(
      'Invalid environment variable WEBHOOK_ALLOW_PRIVATE_ADDRESSES: only for development and tests, never when REGISTER_ENVIRONMENT is production',
    );
  }
  return config;
}
