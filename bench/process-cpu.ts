import { readdir, readFile } from 'node:fs/promises';

// Linux reports a process's CPU time in clock ticks of 1/100 s (USER_HZ) on every architecture Node runs on.
const TICKS_PER_SECOND = 100;

/** A process's /proc/<pid>/stat fields after its name (which may hold spaces and parentheses); undefined once gone. */
async function statFields(pid: number): Promise<string[] | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds (user + system) a process has used so far; 0 once it is gone. */
export async function cpuSecondsOf(pid: number): Promise<number> {
  const fields = await statFields(pid);
  // After the name: state, ppid, … ; utime and stime are the 14th and 15th fields of the whole line.
  return fields ? (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND : 0;
}

/** CPU seconds by PID of `root`'s descendants named `name`, now: two of these apart give what each used between. */
export async function descendantsCpu(root: number, name: string): Promise<Map<number, number>> {
  const pids = await descendantsNamed(root, name);
  return new Map(await Promise.all(pids.map(async (pid) => [pid, await cpuSecondsOf(pid)] as const)));
}

/** CPU seconds used between two `descendantsCpu` readings (a process started between counts from 0). */
export function cpuSecondsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let seconds = 0;
  for (const [pid, used] of after) seconds += used - (before.get(pid) ?? 0);
  return seconds;
}

/**
 * The PIDs of `root`'s descendants whose command name is `name` (e.g. the embedded PostgreSQL's postmaster and
 * backends, which are children of the process that started it).
 */
export async function descendantsNamed(root: number, name: string): Promise<number[]> {
  const parents = new Map<number, number>();
  const names = new Map<number, string>();
  for (const entry of await readdir('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      names.set(pid, stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
      parents.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone between the listing and the read.
    }
  }
  const isDescendant = (pid: number): boolean => {
    for (let parent = parents.get(pid); parent !== undefined && parent > 1; parent = parents.get(parent)) {
      if (parent === root) return true;
    }
    return false;
  };
  return [...names].filter(([pid, comm]) => comm === name && isDescendant(pid)).map(([pid]) => pid);
}

/** CPU milliseconds per request of the server, PostgreSQL (null when it is not a child of this process) and this client. */
export interface CpuPerRequest {
  server: number;
  postgres: number | null;
  client: number;
}

/** A CPU meter over one run of requests: wrap the run's request set-up in `counted`, then read `perRequest`. */
export interface CpuMeter {
  /** `setup` counting each request it sets up. */
  counted<R>(setup: (request: R) => R): (request: R) => R;
  /** The CPU since the meter started, per request counted. */
  perRequest(): Promise<CpuPerRequest>;
}

/**
 * Starts counting the CPU a run of requests costs the server (`serverPid`), the embedded PostgreSQL (a child of this
 * process) and this client: what a request costs whatever else the machine runs, where latency and throughput
 * depend on the neighbours.
 */
export async function startCpuMeter(serverPid: number): Promise<CpuMeter> {
  const before = {
    server: await cpuSecondsOf(serverPid),
    postgres: await descendantsCpu(process.pid, 'postgres'),
    client: process.cpuUsage(),
  };
  let requests = 0;
  return {
    counted: (setup) => (request) => {
      requests++;
      return setup(request);
    },
    perRequest: async () => {
      const clientUsage = process.cpuUsage(before.client);
      const postgresSeconds = cpuSecondsBetween(before.postgres, await descendantsCpu(process.pid, 'postgres'));
      const perRequestMs = (seconds: number) => Math.round((seconds * 1e5) / Math.max(requests, 1)) / 100;
      return {
        server: perRequestMs((await cpuSecondsOf(serverPid)) - before.server),
        postgres: before.postgres.size > 0 ? perRequestMs(postgresSeconds) : null,
        client: perRequestMs((clientUsage.user + clientUsage.system) / 1e6),
      };
    },
  };
}
