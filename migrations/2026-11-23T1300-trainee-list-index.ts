import { sql, type Kysely } from 'kysely';

/**
 * The trainee list reads one provider's non-draft trainees of one academic cycle, newest change first, and counts
 * them. Filtering on a range of `coalesce(trainee_start_date, itt_start_date)` made both queries read every trainee of
 * the provider. The cycle (August to July) as a stored column puts it in the index: the page becomes an index-only
 * walk of `offset + per_page` entries in order, and the count an index-only scan of the cycle's entries.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE trainees ADD COLUMN start_academic_cycle integer GENERATED ALWAYS AS (
      extract(year FROM coalesce(trainee_start_date, itt_start_date))::integer
      - CASE WHEN extract(month FROM coalesce(trainee_start_date, itt_start_date)) < 8 THEN 1 ELSE 0 END
    ) STORED`.execute(db);
  await sql`
    CREATE INDEX trainees_list_idx ON trainees (provider_id, start_academic_cycle, updated_at DESC, id DESC)
    INCLUDE (lock_version) WHERE state <> 'draft' AND discarded_at IS NULL`.execute(db);
  // Superseded by trainees_list_idx: the list was its only reader.
  await sql`DROP INDEX trainees_provider_updated_idx`.execute(db);
  // Index-only scans skip the heap only for pages the visibility map marks all-visible: vacuum after 2 % of the
  // table is inserted or 5 % changed (defaults: 20 % each), so fresh trainees do not stay heap fetches for long.
  await sql`ALTER TABLE trainees SET (autovacuum_vacuum_insert_scale_factor = 0.02, autovacuum_vacuum_scale_factor = 0.05)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE trainees RESET (autovacuum_vacuum_insert_scale_factor, autovacuum_vacuum_scale_factor)`.execute(db);
  await sql`CREATE INDEX trainees_provider_updated_idx ON trainees (provider_id, updated_at DESC, id DESC)`.execute(db);
  await sql`DROP INDEX trainees_list_idx`.execute(db);
  await sql`ALTER TABLE trainees DROP COLUMN start_academic_cycle`.execute(db);
}
