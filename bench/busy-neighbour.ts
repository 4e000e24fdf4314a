import { spawn } from 'node:child_process';

/**
 * A busy neighbour, as a shared host has one: a process hashing in a loop, a whole core when it gets one. The same
 * loop in every benchmark that measures beside it (`npm run bench:cluster -- --busy`, `npm run bench:scale`).
 */
export const BUSY_LOOP =
  "const { createHash } = require('node:crypto'); let h = 'x'; for (;;) h = createHash('sha256').update(h).digest('hex');";

/** Starts the neighbour; `stop()` ends it. */
export function startBusyNeighbour(): { stop: () => void } {
  const child = spawn(process.execPath, ['-e', BUSY_LOOP], { stdio: 'ignore' });
  return { stop: () => child.kill('SIGKILL') };
}
