import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
  type WriteStream,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * Child processes of the cluster, each in its own process group (`detached`), so stopping one stops everything it
 * started (PostgreSQL's backends, HAProxy's workers) and a stray group can be found and killed. Every group ever
 * started is remembered until it is gone; `killAllSync` is the last resort on exit.
 */

const groups = new Set<number>();

export interface Managed {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Resolves when the process has exited (code or signal). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Last lines of its output, for error messages. */
  tail(): string;
}

export function startProcess(
  name: string,
  command: string,
  args: string[],
  options: {
    env?: NodeJS.ProcessEnv;
    uid?: number;
    gid?: number;
    logDir: string;
    cwd?: string;
    onLine?: (line: string) => void;
  },
): Managed {
  mkdirSync(options.logDir, { recursive: true });
  const log: WriteStream = createWriteStream(path.join(options.logDir, `${name}.log`), { flags: 'a' });
  const spawnOptions: SpawnOptions = {
    env: options.env ?? process.env,
    cwd: options.cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.gid } : {}),
  };
  const child = spawn(command, args, spawnOptions);
  if (!child.pid) throw new Error(`${name}: could not start ${command}`);
  const pid = child.pid;
  groups.add(pid);
  const lines: string[] = [];
  let partial = '';
  const onData = (chunk: Buffer) => {
    log.write(chunk);
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (lines.length > 30) lines.shift();
      options.onLine?.(line);
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      // The group may still hold children (e.g. PostgreSQL backends after a kill -9 of the postmaster).
      killGroup(pid, 'SIGKILL');
      if (!groupAlive(pid)) groups.delete(pid);
      log.end();
      resolve({ code, signal });
    });
  });
  child.once('error', () => undefined);
  return { name, child, pid, exited, tail: () => lines.join('\n') };
}

export function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/**
 * True while a process of the group is running. Killed processes whose parent died stay as zombies until init
 * reaps them (in a container, maybe never); they hold nothing, so they do not count. Without /proc: kill(0).
 */
export function groupAlive(pgid: number): boolean {
  if (!existsSync('/proc/self/stat')) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

/** Sends `signal` to the process (not its group: PostgreSQL and Node shut their children down themselves), waits. */
export async function stopProcess(
  managed: Managed,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 30000,
): Promise<void> {
  if (managed.child.exitCode === null && managed.child.signalCode === null) {
    managed.child.kill(signal);
    const timer = setTimeout(() => killGroup(managed.pid, 'SIGKILL'), graceMs);
    await managed.exited;
    clearTimeout(timer);
  }
  killGroup(managed.pid, 'SIGKILL');
  await waitFor(`${managed.name}'s processes to end`, async () => !groupAlive(managed.pid), 10000, 20);
  groups.delete(managed.pid);
}

/** Process groups started and not known to be gone. */
export function liveGroups(): number[] {
  return [...groups].filter((pgid) => groupAlive(pgid));
}

/** Running processes of a group with their command lines (Linux /proc). */
function groupMembers(pgid: number): Array<{ pid: number; cmdline: string }> {
  if (!existsSync('/proc/self/stat')) return [];
  const members: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid || fields[0] === 'Z') continue;
      members.push({ pid: Number(entry), cmdline: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

/**
 * Records the groups started so far in `file`, so that a later start can stop what a killed run (kill -9 of the
 * script itself, which no handler sees) left behind.
 */
export function recordGroups(file: string): void {
  writeFileSync(file, JSON.stringify([...groups]));
}

/**
 * Kills the groups a previous run recorded in `file` that are still running one of the cluster's programs
 * (a recorded id reused by an unrelated process is left alone). Returns how many it killed.
 */
export async function reapRecordedGroups(file: string, programs: string[]): Promise<number> {
  if (!existsSync(file)) return 0;
  let recorded: number[];
  try {
    recorded = JSON.parse(readFileSync(file, 'utf8')) as number[];
  } catch {
    return 0;
  }
  const killed = recorded.filter((pgid) => groupMembers(pgid).some((m) => programs.some((p) => m.cmdline.includes(p))));
  for (const pgid of killed) killGroup(pgid, 'SIGKILL');
  await waitFor(
    'the processes of the earlier run to end',
    async () => killed.every((pgid) => !groupAlive(pgid)),
    15000,
    50,
  );
  rmSync(file, { force: true });
  return killed.length;
}

/** Synchronous last resort (process 'exit'): SIGKILL every group still alive. */
export function killAllSync(): void {
  for (const pgid of groups) killGroup(pgid, 'SIGKILL');
}

// One free-port finder for every benchmark.
export { freePort } from '../server-process.js';

/** True when something accepts TCP connections on 127.0.0.1:port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${what}: not ready within ${Math.round(timeoutMs / 1000)} s${lastError instanceof Error ? ` (${lastError.message})` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
