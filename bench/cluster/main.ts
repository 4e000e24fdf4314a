import { parseArgs } from 'node:util';
import { HAPROXY_INSTALL_HINT, haproxyAvailable, startCluster, type Cluster } from './cluster.js';
import { killAllSync } from './processes.js';
import { TOPOLOGY } from './topology.js';

/**
 * `npm run cluster [-- --port 8080] [--dir .data/cluster]`: the scaled-out topology on this machine — PostgreSQL
 * primary and streaming replica, Redis, two service instances, HAProxy in front — until Ctrl-C, which stops all of it.
 */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8080' },
    dir: { type: 'string', default: '.data/cluster' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65535) {
  process.stderr.write(`--port must be a port number (got ${JSON.stringify(values.port)})\n`);
  process.exit(2);
}
if (!haproxyAvailable()) {
  process.stderr.write(`${HAPROXY_INSTALL_HINT}\n`);
  process.exit(1);
}

const say = (message: string) => process.stdout.write(`${message}\n`);
let cluster: Cluster | undefined;
let stopping = false;
// Last resort: whatever exits this process takes every started process group with it.
process.on('exit', killAllSync);
const shutdown = async (why: string, code: number) => {
  if (stopping) return;
  stopping = true;
  say(`\n${why}: stopping the cluster ...`);
  try {
    await cluster?.stop();
    say('Stopped; nothing is left running.');
  } finally {
    process.exit(code);
  }
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void shutdown(signal, 0));
process.on('uncaughtException', (error) => {
  process.stderr.write(`${error.stack ?? error.message}\n`);
  void shutdown('error', 1);
});

try {
  cluster = await startCluster({ dir: values.dir, port, log: say });
} catch (error) {
  process.stderr.write(`The cluster did not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
if (stopping) await new Promise(() => {});
say('');
say(`Cluster ready: ${cluster.url}  (API reference ${cluster.url}/docs, balancer status ${cluster.statsUrl})`);
say(
  `  instances:  ${cluster.instances.map((i) => `${i.name} ${i.url}`).join(', ')}  (${TOPOLOGY.instances} behind HAProxy)`,
);
say(`  primary:    ${cluster.primaryUrl}`);
say(`  replica:    ${cluster.replicaUrl}  (streaming, slot "${TOPOLOGY.replicationSlot}")`);
say(`  redis:      ${cluster.redisUrl}`);
say(`  logs:       ${cluster.logDir}`);
say('Ctrl-C stops everything.');
