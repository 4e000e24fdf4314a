import { sql, type Kysely } from 'kysely';

/**
 * The trainee's placements and degrees (register issue 6). Both belong to one trainee and go with it
 * (ON DELETE CASCADE). Reference values are stored as their HESA codes, with the reference-data id beside them
 * as the real service's `*_uuid` response fields; names are looked up when serializing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('trainee_placements')
    // The public `placement_id`: a 24-character base58 slug, like trainee ids.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('trainee_id', 'text', (c) => c.notNull().references('trainees.id').onDelete('cascade'))
    // As sent: a 6-digit URN, which may or may not be a known school.
    .addColumn('urn', 'text')
    .addColumn('name', 'text')
    .addColumn('postcode', 'text')
    // Set when `urn` matched a known school: name, postcode and town are then the school's, copied at link time.
    .addColumn('school_linked', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('town', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('trainee_placements_trainee_idx')
    .on('trainee_placements')
    .columns(['trainee_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('trainee_degrees')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('trainee_id', 'text', (c) => c.notNull().references('trainees.id').onDelete('cascade'))
    .addColumn('locale_code', 'text', (c) => c.notNull().check(sql`locale_code IN ('uk', 'non_uk')`))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('subject_uuid', 'text')
    .addColumn('uk_degree', 'text')
    .addColumn('uk_degree_uuid', 'text')
    .addColumn('non_uk_degree', 'text')
    .addColumn('institution', 'text')
    .addColumn('institution_uuid', 'text')
    .addColumn('grade', 'text')
    .addColumn('grade_uuid', 'text')
    .addColumn('other_grade', 'text')
    .addColumn('country', 'text')
    .addColumn('graduation_year', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('trainee_degrees_trainee_idx')
    .on('trainee_degrees')
    .columns(['trainee_id', 'graduation_year'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('trainee_degrees').ifExists().execute();
  await db.schema.dropTable('trainee_placements').ifExists().execute();
}
