import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * Sets the nice value of every thread of `pid` (default: this process). Linux keeps one per thread, `setpriority` on
 * a pid sets only its main thread's, and Node starts its platform threads before any code runs; threads started
 * later take the value of the thread that starts them. True when it could; false, changing nothing that matters,
 * when it could not (raising a priority needs root or CAP_SYS_NICE; a platform without /proc sets the pid's alone).
 */
export function setProcessPriority(nice: number, pid: number = process.pid): boolean {
  let threads: number[];
  try {
    threads = readdirSync(`/proc/${pid}/task`).map(Number);
  } catch {
    threads = [pid];
  }
  try {
    for (const thread of threads) setPriority(thread, nice);
    return true;
  } catch {
    return false;
  }
}

/**
 * Lowers this process's CPU priority to `nice` for batch work (a higher value than it has; never raises it, which
 * root could). False when it could not.
 */
export function lowerOwnPriority(nice: number): boolean {
  if (nice <= getPriority()) return true;
  return setProcessPriority(nice);
}
