import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { Binaries, RunAs } from './embedded-install.js';

/**
 * The embedded cluster's postmaster as processes see it: which one runs a cluster (its lock file), whether the process
 * that started it is gone, and the one this process runs — started, taken over, stopped.
 */

/** Reads a /proc file, or undefined where there is none (macOS) or the process is gone. */
function procFile(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch {
    return undefined;
  }
}

const hasProc = () => existsSync('/proc/self');

/** A process's state letter and parent (/proc/<pid>/stat: the fields after the parenthesised command name). */
function procStat(pid: number): { state: string; parent: number } | undefined {
  const stat = procFile(pid, 'stat');
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', parent: Number(fields[1]) };
}

/**
 * Whether process `pid` is a live PostgreSQL server. A postmaster.pid left behind by a power cut or a killed container
 * names a process id that may since belong to another process (in a container, quite likely one of the service's
 * own); without this check that process was taken for the server, its port joined, and the start failed with
 * ECONNREFUSED until the file was deleted by hand. A zombie (exited, not yet reaped by its new parent) is not live.
 * Where there is no /proc (macOS), a live process id is trusted.
 */
function isLivePostgres(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!hasProc()) return true;
  return (procFile(pid, 'comm') ?? '').startsWith('postgres') && procStat(pid)?.state !== 'Z';
}

/** The postmaster running the cluster in `clusterDir` (postmaster.pid: line 1 its process id, line 4 its port). */
export function runningPostmaster(clusterDir: string): { pid: number; port: number } | undefined {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!pid || !port) return undefined;
  return isLivePostgres(pid) ? { pid, port } : undefined;
}

/**
 * Whether the process that started postmaster `pid` is gone: its parent is no longer a Node.js process (the service,
 * a CLI or a test run started it as a direct child; a SIGKILLed owner's postmaster is re-parented to init or a
 * subreaper). Such a cluster would otherwise run on with no process to stop it. Unknown (false) without /proc.
 */
export function isOrphaned(pid: number): boolean {
  const parent = procStat(pid)?.parent;
  if (parent === undefined) return false;
  return !(procFile(parent, 'comm') ?? '').startsWith('node');
}

/**
 * Deletes the postmaster.pid of a cluster that no PostgreSQL runs, before starting it: PostgreSQL itself refuses to
 * start while the process the file names is alive, whatever that process is (see isLivePostgres).
 */
export async function removeStaleLockFile(clusterDir: string): Promise<void> {
  const pidFile = path.join(clusterDir, 'postmaster.pid');
  if (existsSync(pidFile) && runningPostmaster(clusterDir) === undefined) await rm(pidFile, { force: true });
}

/** The port a listener on 127.0.0.1 gets when it asks for `port` (0: any free one), or undefined when it is taken. */
function bindablePort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(bound));
    });
  });
}

/**
 * The port to start the cluster on: the one it last ran on (postmaster.opts, which PostgreSQL writes at each start and
 * keeps after a stop) when it is free, else any free port. A process that joined the cluster before it stopped holds
 * connection URLs with the old port; when another process starts the cluster before that one takes it over, the same
 * port keeps those URLs good.
 */
export async function portToStartOn(clusterDir: string): Promise<number> {
  const options = lastStartOptions(clusterDir);
  const last = Number(/"-p" "(\d+)"/.exec(options)?.[1]);
  if (last > 0 && (await bindablePort(last)) !== undefined) return last;
  const free = await bindablePort(0);
  if (free === undefined) throw new Error('No free port on 127.0.0.1 for the embedded PostgreSQL');
  return free;
}

function lastStartOptions(clusterDir: string): string {
  try {
    return readFileSync(path.join(clusterDir, 'postmaster.opts'), 'utf8');
  } catch {
    return '';
  }
}

/**
 * The postmaster this process runs: started (again after a stop), or taken over from a process that is gone
 * (`adopt`); stopped, and stopped if this process exits first.
 */
export class Postmaster {
  child: ChildProcess | undefined;
  /** A postmaster another process started and left running when it died, which this process now stops. */
  private adopted: number | undefined;
  // Stops the cluster if this process exits without stopping it (a crashed CLI), so no postmaster is left behind.
  private readonly killOnExit = () => {
    const pid = this.pid;
    if (pid !== undefined) signal(pid, 'SIGINT');
  };

  /** The running postmaster's process id, started or adopted. */
  get pid(): number | undefined {
    return this.child?.pid ?? this.adopted;
  }

  /** Whether the postmaster this process started or adopted is running. */
  get running(): boolean {
    const child = this.child;
    if (child) return child.exitCode === null && child.signalCode === null;
    return this.adopted !== undefined && isLivePostgres(this.adopted);
  }

  constructor(
    private readonly binaries: Binaries,
    private readonly clusterDir: string,
    private readonly port: number,
    private readonly user: RunAs | undefined,
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: (message: string) => void,
  ) {}

  /** Takes over postmaster `pid`, whose process is gone (isOrphaned): this process now stops it. */
  adopt(pid: number): void {
    this.adopted = pid;
    this.stopOnExit();
  }

  /** One exit listener whichever postmaster this process runs (an adopted one may die and be started again here). */
  private stopOnExit(): void {
    process.removeListener('exit', this.killOnExit);
    process.on('exit', this.killOnExit);
  }

  start(): Promise<void> {
    this.adopted = undefined;
    return new Promise<void>((resolve, reject) => {
      let output = '';
      let ready = false;
      const postgres = spawn(
        this.binaries.postgres,
        [
          '-D',
          this.clusterDir,
          '-p',
          String(this.port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'max_connections=200',
          '-c',
          'unix_socket_directories=',
        ],
        // Its own process group: a Ctrl-C in the terminal reaches the server only, which stops the database last.
        { ...this.user, env: this.env, stdio: ['ignore', 'ignore', 'pipe'], detached: true },
      );
      this.child = postgres;
      this.stopOnExit();
      postgres.stderr.on('data', (chunk: Buffer) => {
        const message = chunk.toString();
        this.log(message.trim());
        if (!ready) {
          output = (output + message).slice(-4000);
          if (message.includes('database system is ready to accept connections')) {
            ready = true;
            resolve();
          }
        }
      });
      postgres.on('error', (error) => {
        if (!ready) reject(new Error(`The embedded PostgreSQL could not be started: ${error.message}`));
        else this.log(`postgres process error: ${error.message}`);
      });
      postgres.on('exit', (code, signal) => {
        if (this.child === postgres) {
          this.child = undefined;
          process.removeListener('exit', this.killOnExit);
        }
        if (!ready) {
          reject(
            new Error(
              `The embedded PostgreSQL in ${this.clusterDir} did not start (${signal ?? `exit code ${code}`}): ${output.trim().split('\n').slice(-3).join(' ')}`,
            ),
          );
        } else {
          this.log(`postgres exited (${signal ?? `exit code ${code}`})`);
        }
      });
    });
  }

  /**
   * SIGTERM: PostgreSQL's smart shutdown, which lets the sessions our pools are closing end by themselves (a fast
   * shutdown races their goodbyes and each then reports "terminating connection due to administrator command").
   * SIGINT (fast: sessions are ended, the data is consistent) after 5 s for sessions still open, such as a CLI joined
   * to this cluster; SIGQUIT after 30 s.
   */
  async stop(): Promise<void> {
    const running = this.child;
    const adopted = this.adopted;
    if (running && running.exitCode === null && running.signalCode === null) {
      await stopInSteps(running.pid, new Promise<void>((resolve) => running.once('exit', () => resolve())));
    } else if (adopted !== undefined) {
      // Not this process's child: no exit event, so its process is watched until it is gone.
      await stopInSteps(adopted, gone(adopted));
      this.adopted = undefined;
      process.removeListener('exit', this.killOnExit);
    }
  }
}

function signal(pid: number | undefined, name: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

async function gone(pid: number): Promise<void> {
  while (isLivePostgres(pid)) await new Promise((resolve) => setTimeout(resolve, 100));
}

async function stopInSteps(pid: number | undefined, exited: Promise<void>): Promise<void> {
  signal(pid, 'SIGTERM');
  const fast = setTimeout(() => signal(pid, 'SIGINT'), 5000);
  const force = setTimeout(() => signal(pid, 'SIGQUIT'), 30000);
  fast.unref();
  force.unref();
  try {
    await exited;
  } finally {
    clearTimeout(fast);
    clearTimeout(force);
  }
}
