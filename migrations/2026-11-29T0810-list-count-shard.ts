import { sql, type Kysely } from 'kysely';

/**
 * A transaction that writes many trainees (a batch create, clearing a provider's sandbox data) may choose the
 * trainee_list_counts shard all its rows count in (`set_config('register.list_count_shard', …, true)`): with a
 * random shard per row, two such transactions each held some shard rows and waited for the other's (a deadlock).
 * Single writes keep the random shard.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION trainee_list_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      shard smallint := coalesce(nullif(current_setting('register.list_count_shard', true), '')::smallint, floor(random() * 16)::smallint);
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
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE FUNCTION trainee_list_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
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
}
