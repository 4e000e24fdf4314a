import { readdirSync, readFileSync } from 'node:fs';

/** One process as /proc/<pid>/stat describes it. */
export interface ProcessStat {
  pid: number;
  /** R, S, D, T (stopped), Z (zombie), … */
  state: string;
  ppid: number;
  pgid: number;
}

/** Every process of this machine, from /proc (those that end while it is read are left out). */
export function processStats(): ProcessStat[] {
  const stats: ProcessStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // After the command name in parentheses: state, ppid, pgrp, …
      const [state, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.push({ pid: Number(entry), state: state!, ppid: Number(ppid), pgid: Number(pgid) });
    } catch {
      // gone meanwhile
    }
  }
  return stats;
}

/** The children of `pid` (a postmaster's backends and helpers). */
export function childrenOf(pid: number): number[] {
  return processStats()
    .filter((p) => p.ppid === pid)
    .map((p) => p.pid);
}

/** The nice value of every thread of `pid` (/proc/<pid>/task/<tid>/stat, field 19). */
export function threadNiceValues(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    // After the command name in parentheses the fields run from 3 (state): the nice value is the 17th of them.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}
