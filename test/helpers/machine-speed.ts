/**
 * How much slower this machine is now than the one the timing bounds of the tests were set on (a quiet 2-core
 * AMD EPYC): the tests that bound how long something takes (a frozen database answered within so long, a stalled
 * reader dropped within so long, a fuzzed request within so long) multiply their bounds, and the service timeouts
 * those bounds follow from, by this factor instead of failing on a busy machine or a shared CI runner.
 *
 * Measured once per test file when first asked, from two signs of other processes taking the cores: the load
 * average per core, and a small piece of CPU work taking longer on the clock than on the CPU (five times, the
 * median). A slower CPU alone is not measured (there is no quiet reference to compare with). Between 1 and
 * MAX_FACTOR; TEST_SLOWNESS sets it instead (e.g. 1 to check the tight bounds).
 */
import { createHash } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';

/** Past this, a bound means nothing any more: a test still fails on a machine this much slower. */
const MAX_FACTOR = 8;

function sample(): { wallMs: number; cpuMs: number } {
  const wallStart = performance.now();
  const cpuStart = process.cpuUsage();
  let data = Buffer.alloc(1024, 7);
  for (let i = 0; i < 5_000; i++) data = createHash('sha256').update(data).digest() as Buffer<ArrayBuffer>;
  const cpu = process.cpuUsage(cpuStart);
  return { wallMs: performance.now() - wallStart, cpuMs: (cpu.user + cpu.system) / 1000 };
}

let measured: number | undefined;

/** The factor (≥ 1) by which timing bounds are multiplied on this machine now. */
export function machineSlowness(): number {
  if (measured !== undefined) return measured;
  const fixed = Number(process.env.TEST_SLOWNESS);
  if (Number.isFinite(fixed) && fixed > 0) return (measured = fixed);
  const ratios = Array.from({ length: 5 }, () => sample())
    .map((s) => s.wallMs / Math.max(1, s.cpuMs))
    .sort((a, b) => a - b);
  const contention = ratios[2]!;
  const loadPerCore = loadavg()[0]! / availableParallelism();
  measured = Math.min(MAX_FACTOR, Math.max(1, contention, loadPerCore));
  return measured;
}

/** A timing bound (ms) set on the reference machine, for this machine now. */
export function scaledMs(ms: number): number {
  return Math.round(ms * machineSlowness());
}
