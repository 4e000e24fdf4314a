import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { groupAlive, liveGroups, startProcess, stopProcess } from '../../bench/cluster/processes.js';

/** The cluster script's process handling: stopping a process takes everything it started with it. */
const logDir = await mkdtemp(path.join(tmpdir(), 'cluster-processes-'));
afterAll(() => rm(logDir, { recursive: true, force: true }));

/** Running (not zombie) processes of a group. */
function pidsInGroup(pgid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,pgid=,stat=']).toString();
  return out
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group, state]) => Number(group) === pgid && !state!.startsWith('Z'))
    .map(([pid]) => Number(pid));
}

describe('cluster processes', () => {
  it('runs each process in its own group and leaves nothing behind when it stops, children included', async () => {
    // A shell that starts a background child, as PostgreSQL starts backends and HAProxy workers.
    const managed = startProcess('tree', 'sh', ['-c', 'sleep 300 & sleep 300 & wait'], { logDir });
    await new Promise((r) => setTimeout(r, 300));
    expect(pidsInGroup(managed.pid).length).toBeGreaterThanOrEqual(3);
    expect(liveGroups()).toContain(managed.pid);
    await stopProcess(managed, 'SIGTERM', 2000);
    expect(groupAlive(managed.pid)).toBe(false);
    expect(pidsInGroup(managed.pid)).toEqual([]);
    expect(liveGroups()).not.toContain(managed.pid);
  });

  it('cleans up the group of a process that was killed with SIGKILL (its children would otherwise stay)', async () => {
    const managed = startProcess('killed', 'sh', ['-c', 'sleep 300 & sleep 300 & wait'], { logDir });
    await new Promise((r) => setTimeout(r, 300));
    process.kill(managed.pid, 'SIGKILL');
    await managed.exited;
    await new Promise((r) => setTimeout(r, 200));
    expect(pidsInGroup(managed.pid)).toEqual([]);
    expect(groupAlive(managed.pid)).toBe(false);
  });
});
