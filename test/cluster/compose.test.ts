import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { haproxyEnv, TOPOLOGY } from '../../bench/cluster/topology.js';

/**
 * docker-compose.yml cannot run here, so it is kept in step with the cluster script's topology
 * (bench/cluster/topology.ts, which `npm run cluster` and `npm run bench:cluster` start) by comparing them.
 */
const root = path.resolve(import.meta.dirname, '../..');
const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
  services: Record<
    string,
    {
      image?: string;
      command?: string[];
      environment?: Record<string, string>;
      volumes?: string[];
      depends_on?: Record<string, unknown>;
      profiles?: string[];
    }
  >;
};
const services = compose.services;
const apps = Object.keys(services)
  .filter((name) => /^app\d+$/.test(name))
  .sort();
const haproxyCfg = readFileSync(TOPOLOGY.haproxyConfig, 'utf8');

function settingsOf(command: string[] | string | undefined): Record<string, string> {
  const text = Array.isArray(command) ? command.join(' ') : (command ?? '');
  return Object.fromEntries([...text.matchAll(/-c (\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

describe('docker-compose.yml offers the cluster topology of npm run cluster', () => {
  it('has as many service instances as the script, each with the script settings and the same databases and Redis', () => {
    expect(apps).toEqual(Array.from({ length: TOPOLOGY.instances }, (_, i) => `app${i + 1}`));
    for (const name of apps) {
      const env = services[name]!.environment!;
      expect(env, name).toMatchObject(TOPOLOGY.instanceEnv);
      expect(new URL(env.DATABASE_URL!).hostname).toBe('db-primary');
      expect(new URL(env.DATABASE_READ_URL!).hostname).toBe('db-replica');
      expect(new URL(env.DATABASE_URL!).pathname).toBe(`/${TOPOLOGY.database}`);
      expect(new URL(env.DATABASE_READ_URL!).pathname).toBe(`/${TOPOLOGY.database}`);
      expect(new URL(env.REDIS_URL!).hostname).toBe('redis');
      expect(services[name]!.depends_on).toHaveProperty('seed');
    }
  });

  it('puts HAProxy in front with the one haproxy.cfg the script uses, addressing every instance', () => {
    const haproxy = services.haproxy!;
    const mounted = haproxy.volumes!.map((v) => v.split(':')[0]!).map((p) => path.resolve(root, p));
    expect(mounted).toContain(TOPOLOGY.haproxyConfig);
    const env = haproxy.environment!;
    expect(Object.keys(env).sort()).toEqual(
      Object.keys(
        haproxyEnv(
          'b',
          's',
          apps.map(() => 'x'),
        ),
      ).sort(),
    );
    apps.forEach((name, i) => expect(env[`APP${i + 1}_ADDR`]).toBe(`${name}:${services[name]!.environment!.PORT}`));
    // Every variable the configuration reads is set, and every instance is a checked server.
    const used = new Set([...haproxyCfg.matchAll(/\$\{(\w+)\}/g)].map((m) => m[1]));
    expect([...used].sort()).toEqual(Object.keys(env).sort());
    apps.forEach((name, i) =>
      expect(haproxyCfg).toMatch(new RegExp(`server ${name} "\\$\\{APP${i + 1}_ADDR\\}" check`)),
    );
    expect(haproxyCfg).toMatch(/http-check send meth GET uri \/health\/ready/);
    expect(haproxyCfg).toMatch(/option redispatch/);
    expect(haproxyCfg).toMatch(/retry-on .*conn-failure/);
  });

  it('runs a primary and a streaming replica (slot, hot standby) with the script settings, Redis without persistence', () => {
    expect(settingsOf(services['db-primary']!.command)).toMatchObject(TOPOLOGY.primarySettings);
    const replica = services['db-replica']!;
    expect(settingsOf(replica.command)).toMatchObject(TOPOLOGY.replicaSettings);
    const script = replica.command!.join(' ');
    expect(script).toMatch(/pg_basebackup -h db-primary .*-R/);
    expect(script).toContain(`-S ${TOPOLOGY.replicationSlot}`);
    expect(services['db-primary']!.image).toBe(replica.image);
    expect(services.redis!.command).toEqual(['redis-server', ...TOPOLOGY.redisArgs]);
  });

  it('seeds once through the primary, not from the instances', () => {
    expect(services.seed!.command).toEqual(['npm', 'run', 'seed']);
    expect(new URL(services.seed!.environment!.DATABASE_URL!).hostname).toBe('db-primary');
    for (const name of apps) expect(services[name]!.environment!.SEED_ON_START).toBe('false');
  });
});
