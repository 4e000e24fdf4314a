import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** Runs lowerOwnPriority(nice) in a fresh process (started with `nice -n startedAt`), then a worker thread; prints every thread's nice value. */
function niceValuesAfter(startedAt: number, nice: number): number[] {
  const script = `
    import { Worker } from 'node:worker_threads';
    import { lowerOwnPriority } from './src/process-priority.ts';
    import { threadNiceValues } from './test/helpers/processes.ts';
    const lowered = lowerOwnPriority(${nice});
    const worker = new Worker('setTimeout(() => {}, 10000)', { eval: true });
    worker.once('online', () => {
      const values = threadNiceValues(process.pid);
      console.log(JSON.stringify({ lowered, values }));
      process.exit(0);
    });`;
  const output = execFileSync(
    'nice',
    ['-n', String(startedAt), process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: root, encoding: 'utf8' },
  );
  const { lowered, values } = JSON.parse(output) as { lowered: boolean; values: number[] };
  expect(lowered).toBe(true);
  return values;
}

describe('lowerOwnPriority (BATCH_NICE of the data-loading CLIs)', () => {
  it('sets every thread, those Node started before and a worker started after', () => {
    expect(new Set(niceValuesAfter(0, 10))).toEqual(new Set([10]));
  });

  it('never raises a priority: a process started at nice 15 keeps 15', () => {
    expect(new Set(niceValuesAfter(15, 10))).toEqual(new Set([15]));
  });
});
