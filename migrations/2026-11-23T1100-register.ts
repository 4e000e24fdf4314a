import { sql, type Kysely } from 'kysely';

/**
 * The register core (issue 5): providers, their API tokens (hash only), the schools and training partners that
 * URNs/UKPRNs are checked against, trainees, and the audit trail of every trainee change.
 *
 * Trainee fields are stored under their canonical (v2026.1) names as the HESA codes the API takes; derived values
 * (ethnic group, disability disclosure, education phase, ...) are computed when serializing, never stored.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('providers')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('ukprn', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('accredited', 'boolean', (c) => c.notNull().defaultTo(true))
    // Soft delete: a discarded provider's tokens stop working (401), its data stays.
    .addColumn('discarded_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('authentication_tokens')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('provider_id', 'integer', (c) => c.notNull().references('providers.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    // HMAC-SHA256 (hex) of the token under the environment's key; the token itself is never stored.
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('environment', 'text', (c) => c.notNull().check(sql`environment IN ('production', 'sandbox')`))
    // A token is invalid ON its expiry date (the real service's rule).
    .addColumn('expires_at', 'date', (c) => c.notNull())
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('active').check(sql`status IN ('active', 'expired', 'revoked')`))
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('authentication_tokens_provider_idx').on('authentication_tokens').column('provider_id').execute();

  // Known schools (placement and employing-school URNs) and training partners (URN or UKPRN).
  await db.schema
    .createTable('schools')
    .addColumn('urn', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('postcode', 'text')
    .addColumn('town', 'text')
    .execute();
  await db.schema
    .createTable('training_partners')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('urn', 'text', (c) => c.unique())
    .addColumn('ukprn', 'text', (c) => c.unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('discarded_at', 'timestamptz')
    .execute();

  await db.schema
    .createTable('trainees')
    // The public `trainee_id`: a 24-character base58 slug.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider_id', 'integer', (c) => c.notNull().references('providers.id'))
    .addColumn('state', 'text', (c) =>
      c.notNull().check(sql`state IN ('draft', 'submitted_for_trn', 'trn_received', 'recommended_for_award', 'withdrawn', 'deferred', 'awarded')`),
    )
    .addColumn('trn', 'text')
    // Bumped by every write: the ETag, and If-Match's optimistic lock.
    .addColumn('lock_version', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('record_source', 'text', (c) => c.notNull().defaultTo('api'))
    .addColumn('provider_trainee_id', 'text')
    .addColumn('application_id', 'integer')
    .addColumn('hesa_id', 'text')
    .addColumn('first_names', 'text', (c) => c.notNull())
    .addColumn('middle_names', 'text')
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('previous_last_name', 'text')
    .addColumn('date_of_birth', 'date', (c) => c.notNull())
    .addColumn('sex', 'text', (c) => c.notNull())
    .addColumn('email', 'text')
    .addColumn('nationality', 'text')
    .addColumn('ni_number', 'text')
    // HESA ethnicity code; null = not provided (serialized as 997).
    .addColumn('ethnicity', 'text')
    // The HESA disability map as sent, e.g. {"disability1":"58"}.
    .addColumn('disabilities', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('training_route', 'text', (c) => c.notNull())
    .addColumn('itt_aim', 'text')
    .addColumn('itt_qualification_aim', 'text')
    .addColumn('course_subject_1', 'text')
    .addColumn('course_subject_2', 'text')
    .addColumn('course_subject_3', 'text')
    .addColumn('course_age_range', 'text')
    .addColumn('course_min_age', 'integer')
    .addColumn('course_max_age', 'integer')
    .addColumn('study_mode', 'text')
    .addColumn('itt_start_date', 'date')
    .addColumn('itt_end_date', 'date')
    .addColumn('trainee_start_date', 'date')
    .addColumn('course_year', 'integer')
    .addColumn('fund_code', 'text')
    .addColumn('funding_method', 'text')
    .addColumn('training_initiative', 'text')
    .addColumn('additional_training_initiative', 'text')
    .addColumn('pg_apprenticeship_start_date', 'text')
    .addColumn('training_partner_urn', 'text')
    .addColumn('training_partner_ukprn', 'text')
    .addColumn('employing_school_urn', 'text')
    .addColumn('iqts_country', 'text')
    // Lifecycle (written by the action endpoints of issue 6).
    .addColumn('submitted_for_trn_at', 'timestamptz')
    .addColumn('recommended_for_award_at', 'timestamptz')
    .addColumn('awarded_at', 'timestamptz')
    .addColumn('outcome_date', 'date')
    .addColumn('defer_date', 'date')
    .addColumn('defer_reason', 'text')
    .addColumn('reinstate_date', 'date')
    .addColumn('withdrawal_date', 'date')
    .addColumn('withdrawal_reasons', 'jsonb')
    .addColumn('withdrawal_trigger', 'text')
    .addColumn('withdrawal_future_interest', 'text')
    .addColumn('withdrawal_another_reason', 'text')
    .addColumn('withdrawal_safeguarding_concern_reasons', 'text')
    .addColumn('discarded_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // Ids are looked up case-insensitively (the real slug column is citext).
  await sql`CREATE UNIQUE INDEX trainees_id_lower_idx ON trainees (lower(id))`.execute(db);
  // The list: one provider's trainees by updated_at; the duplicate check: same provider, date of birth.
  await sql`CREATE INDEX trainees_provider_updated_idx ON trainees (provider_id, updated_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX trainees_duplicate_idx ON trainees (provider_id, date_of_birth, lower(last_name))`.execute(db);

  await db.schema
    .createTable('trainee_audits')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('trainee_id', 'text', (c) => c.notNull())
    .addColumn('provider_id', 'integer', (c) => c.notNull())
    // Null for operator changes made with the CLI.
    .addColumn('token_id', 'integer')
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('before', 'jsonb')
    .addColumn('after', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('trainee_audits_trainee_idx').on('trainee_audits').columns(['trainee_id', 'id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['trainee_audits', 'trainees', 'training_partners', 'schools', 'authentication_tokens', 'providers']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
