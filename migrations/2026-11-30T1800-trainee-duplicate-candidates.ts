import { sql, type Kysely } from 'kysely';

/**
 * The create's duplicate check as functions, so a create can be one statement outside any transaction
 * (`insertTraineeWithRecords`): `trainee_duplicate_candidates` is the one definition of the trainees a new one may
 * duplicate (the create's read of them selects from it too), and `trainee_lock_duplicate_candidates` takes the
 * create's duplicate locks and only then looks for candidates. Being VOLATILE, its query gets a snapshot of its own,
 * taken after the locks were granted, so it sees a trainee that an earlier holder of the same lock committed while
 * this create waited; a NOT EXISTS in the create's own statement would use the statement's earlier snapshot.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE FUNCTION trainee_duplicate_candidates(
      p_provider integer, p_date_of_birth date, p_last_name_lower text, p_training_route text, p_cycle integer
    ) RETURNS SETOF trainees LANGUAGE sql STABLE AS $$
      SELECT * FROM trainees
      WHERE provider_id = p_provider AND discarded_at IS NULL AND date_of_birth = p_date_of_birth
        AND lower(last_name) = p_last_name_lower AND training_route = p_training_route
        AND start_academic_cycle = p_cycle
    $$`.execute(db);
  await sql`
    CREATE FUNCTION trainee_lock_duplicate_candidates(
      p_locks bigint[], p_provider integer, p_date_of_birth date, p_last_name_lower text, p_training_route text,
      p_cycle integer
    ) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock(h) FROM unnest(p_locks) h ORDER BY h;
      RETURN EXISTS (
        SELECT 1 FROM trainee_duplicate_candidates(p_provider, p_date_of_birth, p_last_name_lower, p_training_route, p_cycle)
      );
    END
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION trainee_lock_duplicate_candidates(bigint[], integer, date, text, text, integer)`.execute(db);
  await sql`DROP FUNCTION trainee_duplicate_candidates(integer, date, text, text, integer)`.execute(db);
}
