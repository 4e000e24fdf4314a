import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createDatabase } from '../../src/db/database.js';
import { migrateToLatestOrThrow } from '../../src/db/migrate.js';
import { seedCatalogue } from '../../src/statistics/seed/service.js';
import {
  createReplica,
  ensureDatabase,
  initPrimary,
  pgUrl,
  postgresBinary,
  standbySettings,
  startServer,
  stopServer,
  waitForReplay,
  type PgServer,
} from './postgres.js';
import {
  freePort,
  liveGroups,
  portOpen,
  reapRecordedGroups,
  recordGroups,
  startProcess,
  stopProcess,
  waitFor,
  type Managed,
} from './processes.js';
import { setProcessPriority } from '../../src/process-priority.js';
import { haproxyEnv, TOPOLOGY } from './topology.js';
import { SERVICE_PROCESS_ENV } from '../../src/process-env.js';

/**
 * The cluster on loopback ports: PostgreSQL primary + streaming replica, Redis, TOPOLOGY.instances service
 * instances (DATABASE_URL = primary, DATABASE_READ_URL = replica, REDIS_URL) and HAProxy in front. Started in
 * dependency order, stopped in reverse; every process runs in its own process group.
 */

/** HAProxy's nice value (lower: sooner on a core) when this process may set it. */
const BALANCER_PRIORITY = -10;

export const HAPROXY_INSTALL_HINT =
  'HAProxy is not installed. On Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y haproxy';

export interface ClusterOptions {
  /** Where the databases, logs and state live (reused by the next start: the seed is done once). */
  dir: string;
  /** The balancer's port (0: a free one). */
  port?: number;
  /** Extra environment for every instance (e.g. raised limits for a load test). */
  instanceEnv?: Record<string, string>;
  /** Seed only these data sets (default: the whole catalogue). */
  seedDataSets?: string[];
  log?: (message: string) => void;
}

export interface Instance {
  name: string;
  port: number;
  url: string;
  process?: Managed;
}

export interface Cluster {
  url: string;
  /** Whether HAProxy runs at BALANCER_PRIORITY (else at the cluster's: this process may not raise priorities). */
  balancerPrioritized: boolean;
  statsUrl: string;
  primary: PgServer;
  replica: PgServer;
  primaryUrl: string;
  replicaUrl: string;
  redisUrl: string;
  instances: Instance[];
  logDir: string;
  startInstance(index: number): Promise<void>;
  /** kill -9 (SIGKILL) or a graceful SIGTERM; resolves when the process has exited. */
  stopInstance(index: number, signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  stopReplica(): Promise<void>;
  startReplica(): Promise<void>;
  /** Stops everything it started; resolves when no process group of it is left. */
  stop(): Promise<void>;
}

export function haproxyAvailable(): boolean {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const log = options.log ?? (() => {});
  if (!haproxyAvailable()) throw new Error(HAPROXY_INSTALL_HINT);
  const dir = path.resolve(options.dir);
  const logDir = path.join(dir, 'logs');
  await mkdir(logDir, { recursive: true });
  // A previous run killed with SIGKILL had no chance to stop its processes: stop them now.
  const groupsFile = path.join(dir, 'process-groups.json');
  const reaped = await reapRecordedGroups(groupsFile, [
    await postgresBinary(),
    'redis-server',
    'haproxy',
    'dist/server.mjs',
  ]);
  if (reaped > 0) log(`Stopped ${reaped} processes left by an earlier run that was killed`);
  log('Building the service (npm run build) ...');
  execFileSync('npm', ['run', 'build'], { cwd: path.resolve(import.meta.dirname, '../..'), stdio: 'ignore' });
  const remember = setInterval(() => recordGroups(groupsFile), 1000);
  remember.unref();

  const started: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    clearInterval(remember);
    while (started.length > 0) await started.pop()!().catch(() => undefined);
    recordGroups(groupsFile);
  };

  try {
    const [primaryPort, replicaPort, redisPort, balancerPort, statsPort, ...instancePorts] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      options.port ? Promise.resolve(options.port) : freePort(),
      freePort(),
      ...Array.from({ length: TOPOLOGY.instances }, () => freePort()),
    ]);
    if (await portOpen(balancerPort)) throw new Error(`Port ${balancerPort} is in use; pass another with --port.`);
    const primary: PgServer = { name: 'postgres-primary', dir: path.join(dir, 'primary'), port: primaryPort };
    const replica: PgServer = { name: 'postgres-replica', dir: path.join(dir, 'replica'), port: replicaPort };
    const primaryUrl = pgUrl(primaryPort);
    const replicaUrl = pgUrl(replicaPort);
    const redisUrl = `redis://127.0.0.1:${redisPort}`;

    log(`PostgreSQL primary on 127.0.0.1:${primaryPort} (${primary.dir})`);
    await initPrimary(primary.dir);
    await startServer(primary, TOPOLOGY.primarySettings, logDir);
    started.push(() => stopServer(primary));
    await ensureDatabase(primaryPort);

    log(`PostgreSQL streaming replica on 127.0.0.1:${replicaPort} (${replica.dir})`);
    await createReplica(primary, replica.dir);
    const replicaSettings = { ...TOPOLOGY.replicaSettings, ...standbySettings(primaryPort) };
    await startServer(replica, replicaSettings, logDir);
    started.push(() => stopServer(replica));

    log('Migrating and seeding through the primary (once: later starts skip what is there) ...');
    const handle = createDatabase(primaryUrl, { max: 4, statementTimeoutMillis: 0 });
    try {
      await migrateToLatestOrThrow(handle.db);
      const result = await seedCatalogue(handle, { dataSetIds: options.seedDataSets });
      if (result.versions.length > 0)
        log(`  seeded ${result.versions.length} versions in ${result.seconds.toFixed(1)} s`);
    } finally {
      await handle.close();
    }
    await waitForReplay(primaryPort, replicaPort);
    log('  the replica has replayed it');

    log(`Redis on 127.0.0.1:${redisPort}`);
    const redis = startProcess(
      'redis',
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', ...TOPOLOGY.redisArgs],
      { logDir },
    );
    started.push(() => stopProcess(redis, 'SIGTERM'));
    await waitFor(
      'Redis',
      async () => {
        const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        client.on('error', () => undefined);
        try {
          await client.connect();
          return (await client.ping()) === 'PONG';
        } finally {
          client.disconnect();
        }
      },
      20000,
      100,
    );

    const instances: Instance[] = instancePorts.map((port, i) => ({
      name: `app${i + 1}`,
      port,
      url: `http://127.0.0.1:${port}`,
    }));
    const startInstance = async (index: number) => {
      const instance = instances[index]!;
      const env = {
        ...process.env,
        ...SERVICE_PROCESS_ENV,
        ...TOPOLOGY.instanceEnv,
        ...options.instanceEnv,
        HOST: '127.0.0.1',
        PORT: String(instance.port),
        DATABASE_URL: primaryUrl,
        DATABASE_READ_URL: replicaUrl,
        REDIS_URL: redisUrl,
      };
      // What `npm start` runs: the bundled service (built once below, before the first instance starts).
      // CLUSTER_INSTANCE_NODE_ARGS: extra Node flags for the instances (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, which
      // NODE_OPTIONS does not take), as BENCH_SERVER_NODE_ARGS for the single-server benches.
      const nodeArgs = (process.env.CLUSTER_INSTANCE_NODE_ARGS ?? '').split(' ').filter(Boolean);
      const child = startProcess(
        instance.name,
        process.execPath,
        [...nodeArgs, '--enable-source-maps', 'dist/server.mjs'],
        {
          env,
          logDir,
          cwd: path.resolve(import.meta.dirname, '../..'),
        },
      );
      instance.process = child;
      await Promise.race([
        waitFor(
          `instance ${instance.name}`,
          async () => (await fetch(`${instance.url}/health/ready`)).status === 200,
          120000,
          200,
        ),
        child.exited.then(({ code, signal }) => {
          throw new Error(`instance ${instance.name} exited (${code ?? signal}):\n${child.tail()}`);
        }),
      ]);
    };
    const stopInstance = async (index: number, signal: 'SIGKILL' | 'SIGTERM') => {
      const instance = instances[index]!;
      if (instance.process) await stopProcess(instance.process, signal);
      instance.process = undefined;
    };
    log(`${instances.length} service instances on ${instances.map((i) => i.port).join(', ')}`);
    await Promise.all(instances.map((_, i) => startInstance(i)));
    started.push(async () => {
      await Promise.all(instances.map((_, i) => stopInstance(i, 'SIGTERM')));
    });

    const url = `http://127.0.0.1:${balancerPort}`;
    log(`HAProxy on ${url} (status page http://127.0.0.1:${statsPort}/)`);
    const haproxy = startProcess('haproxy', 'haproxy', ['-f', TOPOLOGY.haproxyConfig, '-db'], {
      logDir,
      env: {
        ...process.env,
        ...haproxyEnv(
          `127.0.0.1:${balancerPort}`,
          `127.0.0.1:${statsPort}`,
          instances.map((i) => `127.0.0.1:${i.port}`),
        ),
      },
    });
    started.push(() => stopProcess(haproxy, 'SIGTERM', 5000));
    // The balancer is on the path of every request and does little per request: on a host it shares (here, two cores
    // with the instances, both databases and any neighbour) it runs ahead of them where this process may raise its
    // priority (root, or CAP_SYS_NICE), as it would on cores of its own; its bounds then answer at once.
    const balancerPrioritized = setProcessPriority(BALANCER_PRIORITY, haproxy.pid);
    await Promise.race([
      waitFor('HAProxy', async () => (await fetch(`${url}/health/ready`)).status === 200, 30000, 100),
      haproxy.exited.then(({ code }) => {
        throw new Error(`HAProxy exited (${code}):\n${haproxy.tail()}`);
      }),
    ]);

    let stopping: Promise<void> | undefined;
    return {
      url,
      balancerPrioritized,
      statsUrl: `http://127.0.0.1:${statsPort}/`,
      primary,
      replica,
      primaryUrl,
      replicaUrl,
      redisUrl,
      instances,
      logDir,
      startInstance,
      stopInstance,
      stopReplica: () => stopServer(replica),
      startReplica: () => startServer(replica, replicaSettings, logDir),
      stop() {
        stopping ??= (async () => {
          await stopAll();
          await waitFor('every cluster process to exit', async () => liveGroups().length === 0, 30000, 100);
        })();
        return stopping;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
