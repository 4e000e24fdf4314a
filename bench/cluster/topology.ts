import path from 'node:path';

/**
 * The cluster topology, in one place: `npm run cluster` / `npm run bench:cluster` start it on loopback ports, and
 * docker-compose.yml declares the same services with the same settings (test/cluster/compose.test.ts compares them).
 */
export const TOPOLOGY = {
  /** Service instances behind the balancer (the servers app1..appN of haproxy.cfg). */
  instances: 2,
  /** The one load-balancer configuration both use; addresses come from the environment (HAPROXY_BIND, APPn_ADDR). */
  haproxyConfig: path.resolve(import.meta.dirname, 'haproxy.cfg'),
  /** The physical replication slot of the streaming replica (keeps the WAL it still needs while it is down). */
  replicationSlot: 'replica',
  /** Database the service uses on the primary (and so on the replica). */
  database: 'app',
  /** Settings of the PostgreSQL primary beyond the defaults. */
  primarySettings: { wal_level: 'replica', max_wal_senders: '10', max_connections: '200' },
  /** Settings of the replica: readable while replaying, and long statistics reads are not cancelled by replay. */
  replicaSettings: { hot_standby: 'on', hot_standby_feedback: 'on', max_connections: '200' },
  /** Redis holds only rate-limit counters: no persistence. */
  redisArgs: ['--save', '', '--appendonly', 'no'],
  /**
   * Environment of every instance besides the addresses (DATABASE_URL = primary, DATABASE_READ_URL = replica,
   * REDIS_URL, PORT, HOST). The catalogue is seeded once through the primary, never by an instance. The register
   * environment differs on purpose: the script runs the sandbox (development token key), docker-compose.yml the
   * live register with your REGISTER_TOKEN_SECRET.
   */
  instanceEnv: {
    TRUST_PROXY: 'true',
    SEED_ON_START: 'false',
    DATABASE_READ_MAX_LAG_MS: '5000',
    DATABASE_POOL_MAX: '10',
    LOG_LEVEL: 'warn',
  },
} as const;

/** HAProxy's environment: where it listens and the instances' addresses (`host:port`). */
export function haproxyEnv(bind: string, statsBind: string, instances: string[]): Record<string, string> {
  const env: Record<string, string> = { HAPROXY_BIND: bind, HAPROXY_STATS_BIND: statsBind };
  instances.forEach((address, i) => {
    env[`APP${i + 1}_ADDR`] = address;
  });
  return env;
}
