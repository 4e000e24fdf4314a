/**
 * `npx tsx bench/events-purge.ts [--rows 2000000] [--rounds 2]`: the change events' retention purge over a backlog of
 * `--rows` old events, in its statements of `PURGE_BATCH` events and, for comparison, as one statement (a batch larger
 * than the backlog), alternated for `--rounds` rounds. Each run appends the backlog after the log's last position
 * (occurred 200 days ago), vacuums, then purges with 90 days' retention while a sequencer-like update of the log's
 * state row runs every 25 ms beside it. Figures (the purge's time, its statements, the longest wait of that update)
 * go to bench/results/events-purge.json. Uses DATABASE_URL, or the embedded PostgreSQL under DATA_DIR (default
 * .data/bench-events-purge); the database's statement timeout applies, as in the service.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { runCli } from '../src/cli/run.js';
import { loadConfig } from '../src/config.js';
import { PURGE_BATCH, purgeEvents } from '../src/events/outbox-repository.js';
import { openRuntime } from '../src/runtime.js';
import { describeMachine, machineLine } from './machine.js';

const { values } = parseArgs({
  options: { rows: { type: 'string', default: '2000000' }, rounds: { type: 'string', default: '2' } },
});
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);

await runCli(async () => {
  const config = loadConfig({ ...process.env, DATA_DIR: process.env.DATA_DIR ?? '.data/bench-events-purge' });
  const runtime = await openRuntime(config, { migrate: true, applicationName: 'bench-events-purge' });
  const db = runtime.primary.db;
  try {
    const machine = describeMachine();
    console.log(machineLine(machine));
    const runs = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of ['batches', 'one statement'] as const) {
        const { last_position: start } = await db
          .selectFrom('event_log_state')
          .select('last_position')
          .executeTakeFirstOrThrow();
        // A million per statement: the service's statement timeout applies to this connection too.
        for (let from = 1; from <= ROWS; from += 1_000_000) {
          const to = Math.min(ROWS, from + 999_999);
          await sql`INSERT INTO events (position, id, api, type, occurred_at, resource_type, resource_id, payload)
            SELECT ${start} + g, gen_random_uuid(), 'statistics', 'data_set.created', now() - interval '200 days',
                   'data_set', 'bench' || g, '{"bench":true}'::jsonb
            FROM generate_series(${from}::int, ${to}::int) g`.execute(db);
        }
        await sql`UPDATE event_log_state SET last_position = ${start + ROWS}`.execute(db);
        await sql`VACUUM ANALYZE events`.execute(db);

        let stopped = false;
        const waits: number[] = [];
        const sequencerLike = (async () => {
          while (!stopped) {
            const started = performance.now();
            await sql`UPDATE event_log_state SET last_position = last_position`.execute(db);
            waits.push(performance.now() - started);
            await new Promise((resolve) => setTimeout(resolve, 25));
          }
        })();
        const started = performance.now();
        let outcome: string;
        try {
          const purged = await purgeEvents(db, 90, new Date(), mode === 'batches' ? PURGE_BATCH : ROWS + 1);
          outcome = `deleted ${purged.deleted}`;
        } catch (error) {
          outcome = `failed: ${(error as Error).message}`;
        }
        const purgeMs = Math.round(performance.now() - started);
        stopped = true;
        await sequencerLike;
        const run = {
          round: round + 1,
          mode,
          rows: ROWS,
          // In batches, the statement after the last full one finds nothing more.
          statements: mode === 'batches' ? Math.floor(ROWS / PURGE_BATCH) + 1 : 1,
          outcome,
          purgeMs,
          stateRowUpdates: waits.length,
          longestStateRowWaitMs: Math.round(Math.max(...waits)),
        };
        console.log(JSON.stringify(run));
        runs.push(run);
      }
    }
    await mkdir('bench/results', { recursive: true });
    const file = path.join('bench/results', 'events-purge.json');
    await writeFile(
      file,
      `${JSON.stringify({ measuredAt: new Date().toISOString(), machine, rows: ROWS, purgeBatch: PURGE_BATCH, runs }, null, 2)}\n`,
    );
    console.log(`wrote ${file}`);
  } finally {
    await runtime.close();
  }
});
