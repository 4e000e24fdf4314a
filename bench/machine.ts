import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import os from 'node:os';

/**
 * What a benchmark's results file records of the machine it ran on. Hosts of the same nominal size differ by a factor
 * of two in what the same code does (docs/performance.md, "Register API"), so each result carries two measured speeds
 * besides the nominal figures: a fixed piece of CPU work (hashing) and the cost of one system call, each timed five
 * times (the fastest and the median), which tell a slow host from a slow change.
 */
export interface MachineDescription {
  cpus: number;
  cpuModel: string | undefined;
  memoryGb: number;
  node: string;
  loadAverage: number[];
  /** 20,000 chained SHA-256 hashes of 1 KB each, ms: fastest and median of five. */
  hashingMs: { fastest: number; median: number };
  /** One 1-byte write(2) to /dev/null, µs: fastest and median of five batches of 100,000. */
  systemCallUs: { fastest: number; median: number };
}

const HASHES = 20_000;
const SYSTEM_CALLS = 100_000;
const SAMPLES = 5;

function fastestAndMedian(samples: number[], digits: number): { fastest: number; median: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10 ** digits) / 10 ** digits;
  return { fastest: round(sorted[0]!), median: round(sorted[Math.floor(sorted.length / 2)]!) };
}

// Native code (OpenSSL) with little JavaScript around it: a loop of plain additions would time V8's tiering as much
// as the host (its first runs in a process are many times slower than the later ones).
function hashingMs(): number {
  const block = Buffer.alloc(1024, 7);
  let digest = Buffer.alloc(32);
  const start = performance.now();
  for (let i = 0; i < HASHES; i++) digest = createHash('sha256').update(digest).update(block).digest();
  return performance.now() - start;
}

function systemCallUs(): number {
  const fd = openSync('/dev/null', 'w');
  const byte = Buffer.alloc(1);
  try {
    const start = performance.now();
    for (let i = 0; i < SYSTEM_CALLS; i++) writeSync(fd, byte);
    return ((performance.now() - start) * 1000) / SYSTEM_CALLS;
  } finally {
    closeSync(fd);
  }
}

/** The machine now: nominal figures, the load average and the two measured speeds (about a second to measure). */
export function describeMachine(): MachineDescription {
  const hashes = Array.from({ length: SAMPLES }, hashingMs);
  const calls = Array.from({ length: SAMPLES }, systemCallUs);
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
    hashingMs: fastestAndMedian(hashes, 0),
    systemCallUs: fastestAndMedian(calls, 2),
  };
}

/** One line for a benchmark's output. */
export function machineLine(machine: MachineDescription): string {
  return (
    `machine: ${machine.cpus} × ${machine.cpuModel ?? 'CPU'}, load ${machine.loadAverage.join(' ')}; ` +
    `20,000 SHA-256 hashes ${machine.hashingMs.fastest}–${machine.hashingMs.median} ms (fastest–median), ` +
    `a system call ${machine.systemCallUs.fastest}–${machine.systemCallUs.median} µs`
  );
}
