import { sql, type Kysely } from 'kysely';

/**
 * How many trainees each provider's list holds per academic cycle, kept by a trigger on `trainees`, so the list's
 * unfiltered `total_count` is a sum of a few rows instead of a count of every trainee of the cycle (the largest part
 * of the list's database work once the page itself came from an index). A trainee is in a list when
 * trainees_list_idx holds it: not a draft, not discarded, with a start date. Each change adds +1 or -1 to one of 16
 * rows of its (provider, cycle), chosen at random: concurrent creates of one provider seldom wait on the same row,
 * and any row serves since only the sum is read. The trigger sees every write path (API, CLI, SQL); TRUNCATE resets
 * the counts.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE trainee_list_counts (
      provider_id integer NOT NULL REFERENCES providers (id),
      academic_cycle integer NOT NULL,
      shard smallint NOT NULL,
      trainees integer NOT NULL,
      PRIMARY KEY (provider_id, academic_cycle, shard)
    )`.execute(db);
  await sql`
    CREATE FUNCTION trainee_list_counts_add(p_provider integer, p_cycle integer, p_shard smallint, p_delta integer) RETURNS void
    LANGUAGE sql AS $$
      INSERT INTO trainee_list_counts (provider_id, academic_cycle, shard, trainees)
      VALUES (p_provider, p_cycle, p_shard, p_delta)
      ON CONFLICT (provider_id, academic_cycle, shard) DO UPDATE SET trainees = trainee_list_counts.trainees + p_delta
    $$`.execute(db);
  // A move between two lists (another cycle) writes both with one shard, the lower (provider, cycle) first: two moves
  // in opposite directions at once then lock their rows in the same order and cannot deadlock.
  await sql`
    CREATE FUNCTION trainee_list_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      shard smallint := floor(random() * 16)::smallint;
      was_listed boolean := TG_OP IN ('UPDATE', 'DELETE')
        AND OLD.state <> 'draft' AND OLD.discarded_at IS NULL AND OLD.start_academic_cycle IS NOT NULL;
      now_listed boolean := TG_OP IN ('INSERT', 'UPDATE')
        AND NEW.state <> 'draft' AND NEW.discarded_at IS NULL AND NEW.start_academic_cycle IS NOT NULL;
    BEGIN
      IF was_listed AND now_listed AND (NEW.provider_id, NEW.start_academic_cycle) < (OLD.provider_id, OLD.start_academic_cycle) THEN
        PERFORM trainee_list_counts_add(NEW.provider_id, NEW.start_academic_cycle, shard, 1);
        PERFORM trainee_list_counts_add(OLD.provider_id, OLD.start_academic_cycle, shard, -1);
      ELSE
        IF was_listed THEN
          PERFORM trainee_list_counts_add(OLD.provider_id, OLD.start_academic_cycle, shard, -1);
        END IF;
        IF now_listed THEN
          PERFORM trainee_list_counts_add(NEW.provider_id, NEW.start_academic_cycle, shard, 1);
        END IF;
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  await sql`
    CREATE FUNCTION trainee_list_counts_reset() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM trainee_list_counts;
      RETURN NULL;
    END
    $$`.execute(db);
  // No writes to trainees between the backfill and the triggers (the migration is one transaction).
  await sql`LOCK TABLE trainees IN SHARE ROW EXCLUSIVE MODE`.execute(db);
  await sql`CREATE TRIGGER trainee_list_counts_insert_delete AFTER INSERT OR DELETE ON trainees FOR EACH ROW EXECUTE FUNCTION trainee_list_counts_track()`.execute(db);
  // Updates that leave a trainee's list membership as it was (nearly all of them) do not run the function.
  await sql`
    CREATE TRIGGER trainee_list_counts_update AFTER UPDATE ON trainees FOR EACH ROW
    WHEN (
      OLD.provider_id IS DISTINCT FROM NEW.provider_id
      OR OLD.start_academic_cycle IS DISTINCT FROM NEW.start_academic_cycle
      OR (OLD.state = 'draft') IS DISTINCT FROM (NEW.state = 'draft')
      OR (OLD.discarded_at IS NULL) IS DISTINCT FROM (NEW.discarded_at IS NULL)
    )
    EXECUTE FUNCTION trainee_list_counts_track()`.execute(db);
  await sql`CREATE TRIGGER trainee_list_counts_truncate AFTER TRUNCATE ON trainees FOR EACH STATEMENT EXECUTE FUNCTION trainee_list_counts_reset()`.execute(db);
  await sql`
    INSERT INTO trainee_list_counts (provider_id, academic_cycle, shard, trainees)
    SELECT provider_id, start_academic_cycle, 0, count(*) FROM trainees
    WHERE state <> 'draft' AND discarded_at IS NULL AND start_academic_cycle IS NOT NULL
    GROUP BY provider_id, start_academic_cycle`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER trainee_list_counts_truncate ON trainees`.execute(db);
  await sql`DROP TRIGGER trainee_list_counts_update ON trainees`.execute(db);
  await sql`DROP TRIGGER trainee_list_counts_insert_delete ON trainees`.execute(db);
  await sql`DROP FUNCTION trainee_list_counts_reset()`.execute(db);
  await sql`DROP FUNCTION trainee_list_counts_track()`.execute(db);
  await sql`DROP FUNCTION trainee_list_counts_add(integer, integer, smallint, integer)`.execute(db);
  await sql`DROP TABLE trainee_list_counts`.execute(db);
}
