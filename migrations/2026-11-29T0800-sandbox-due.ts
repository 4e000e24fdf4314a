import { sql, type Kysely } from 'kysely';

/**
 * The sandbox's simulated teacher record service: `sandbox_due_at` is when a sandbox trainee's next automatic step
 * (its TRN, or its award once recommended) is due; null when none is. Set in the write that makes the step due (the
 * create, the recommendation), so scheduling costs no statement of its own; any instance's simulator takes due
 * trainees by this partial index (`FOR UPDATE SKIP LOCKED`) and clears it in the transaction of the step. A live
 * database never sets it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE trainees ADD COLUMN sandbox_due_at timestamptz`.execute(db);
  await sql`CREATE INDEX trainees_sandbox_due_idx ON trainees (sandbox_due_at) WHERE sandbox_due_at IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE trainees DROP COLUMN sandbox_due_at`.execute(db);
}
