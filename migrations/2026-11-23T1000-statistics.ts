import { sql, type Kysely } from 'kysely';

/**
 * Statistics catalogue and per-version metadata.
 *
 * Data rows are not in this migration: each data set version gets its own table `stats_data.v<versionId>`
 * created by the importer (see docs/architecture.md), with one integer column per filter and location level,
 * one text column per indicator, and indexes built after the bulk load.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE SCHEMA IF NOT EXISTS stats_data`.execute(db);
  // Public ids (Sqids) are drawn from global sequences so they are unique across data sets.
  await sql`CREATE SEQUENCE IF NOT EXISTS stats_public_id_seq START 1`.execute(db);
  // One sequence per kind (stats_public_id_seq numbers filters), as the reference numbers filters, filter options,
  // indicators and locations separately: the AbsenceSchool fixture's ids (dP0Zw = 1 of each kind) depend on it.
  for (const kind of ['filter_option', 'indicator', 'location']) {
    await sql`CREATE SEQUENCE IF NOT EXISTS ${sql.raw(`stats_${kind}_public_id_seq`)} START 1`.execute(db);
  }

  await db.schema
    .createTable('publications')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('summary', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`ALTER TABLE publications ADD COLUMN search_vector tsvector
    GENERATED ALWAYS AS (setweight(to_tsvector('english', title), 'A') || setweight(to_tsvector('english', summary), 'B')) STORED`.execute(db);
  await sql`CREATE INDEX publications_search_idx ON publications USING gin (search_vector)`.execute(db);

  await db.schema
    .createTable('data_sets')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('publication_id', 'uuid', (c) => c.notNull().references('publications.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('summary', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('Draft').check(sql`status IN ('Draft', 'Published', 'Deprecated', 'Withdrawn')`),
    )
    .addColumn('superseding_data_set_id', 'uuid', (c) => c.references('data_sets.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('data_sets_publication_idx').on('data_sets').column('publication_id').execute();

  await db.schema
    .createTable('data_set_versions')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('data_set_id', 'uuid', (c) => c.notNull().references('data_sets.id'))
    .addColumn('major', 'integer', (c) => c.notNull().check(sql`major >= 1`))
    .addColumn('minor', 'integer', (c) => c.notNull().check(sql`minor >= 0`))
    .addColumn('patch', 'integer', (c) => c.notNull().defaultTo(0).check(sql`patch >= 0`))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status IN ('Draft', 'Published', 'Deprecated', 'Withdrawn')`),
    )
    .addColumn('published_at', 'timestamptz')
    .addColumn('withdrawn_at', 'timestamptz')
    .addColumn('notes', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('release_title', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('release_slug', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('total_results', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('file_id', 'uuid', (c) => c.notNull().defaultTo(sql`gen_random_uuid()`))
    // Name of the version's row table in schema stats_data; null until its rows are loaded.
    .addColumn('rows_table', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('data_set_versions_number_unique', ['data_set_id', 'major', 'minor', 'patch'])
    .execute();

  await db.schema
    .createTable('data_set_version_files')
    .addColumn('version_id', 'integer', (c) => c.primaryKey().references('data_set_versions.id').onDelete('cascade'))
    .addColumn('content_gzip', 'bytea', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('version_filters')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('version_id', 'integer', (c) => c.notNull().references('data_set_versions.id').onDelete('cascade'))
    .addColumn('public_id', 'text', (c) => c.notNull())
    .addColumn('column_name', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('hint', 'text', (c) => c.notNull().defaultTo(''))
    // Position in label order; also names the row-table column `f<ordinal>`.
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addUniqueConstraint('version_filters_public_id_unique', ['version_id', 'public_id'])
    .addUniqueConstraint('version_filters_column_unique', ['version_id', 'column_name'])
    .execute();

  await db.schema
    .createTable('version_filter_options')
    // Assigned in label order within each filter, so ordering by id orders by label.
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('filter_id', 'integer', (c) => c.notNull().references('version_filters.id').onDelete('cascade'))
    .addColumn('public_id', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('is_default', 'boolean', (c) => c.notNull().defaultTo(false))
    .addUniqueConstraint('version_filter_options_label_unique', ['filter_id', 'label'])
    .execute();
  await db.schema.createIndex('version_filter_options_public_idx').on('version_filter_options').columns(['public_id']).execute();

  await db.schema
    .createTable('version_indicators')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('version_id', 'integer', (c) => c.notNull().references('data_set_versions.id').onDelete('cascade'))
    .addColumn('public_id', 'text', (c) => c.notNull())
    .addColumn('column_name', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('unit', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('decimal_places', 'integer')
    // Position in label order; also names the row-table column `i<ordinal>`.
    .addColumn('ordinal', 'integer', (c) => c.notNull())
    .addUniqueConstraint('version_indicators_public_id_unique', ['version_id', 'public_id'])
    .addUniqueConstraint('version_indicators_column_unique', ['version_id', 'column_name'])
    .execute();

  await db.schema
    .createTable('version_geographic_levels')
    .addColumn('version_id', 'integer', (c) => c.notNull().references('data_set_versions.id').onDelete('cascade'))
    .addColumn('code', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('version_geographic_levels_pk', ['version_id', 'code'])
    .execute();

  // Locations are global and deduplicated: the same place has one id (and one public id) everywhere.
  await db.schema
    .createTable('locations')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('level', 'text', (c) => c.notNull())
    .addColumn('label', 'text', (c) => c.notNull())
    .addColumn('code', 'text')
    .addColumn('old_code', 'text')
    .addColumn('urn', 'text')
    .addColumn('la_estab', 'text')
    .addColumn('ukprn', 'text')
    .addColumn('public_id', 'text', (c) => c.notNull().unique())
    .execute();
  await sql`CREATE UNIQUE INDEX locations_identity_idx ON locations
    (level, label, coalesce(code, ''), coalesce(old_code, ''), coalesce(urn, ''), coalesce(la_estab, ''), coalesce(ukprn, ''))`.execute(db);

  await db.schema
    .createTable('version_locations')
    .addColumn('version_id', 'integer', (c) => c.notNull().references('data_set_versions.id').onDelete('cascade'))
    .addColumn('location_id', 'integer', (c) => c.notNull().references('locations.id'))
    .addPrimaryKeyConstraint('version_locations_pk', ['version_id', 'location_id'])
    .execute();

  await db.schema
    .createTable('version_time_periods')
    // Assigned in chronological order within a version, so ordering by id is chronological.
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('version_id', 'integer', (c) => c.notNull().references('data_set_versions.id').onDelete('cascade'))
    // `2020/2021` for ranges, `2020` for single years (the API's `period` form).
    .addColumn('period', 'text', (c) => c.notNull())
    // Time identifier code: AY, CY, FY, T1, M1, W20, ...
    .addColumn('code', 'text', (c) => c.notNull())
    .addUniqueConstraint('version_time_periods_unique', ['version_id', 'period', 'code'])
    .execute();

  await db.schema
    .createTable('version_changes')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('version_id', 'integer', (c) => c.notNull().references('data_set_versions.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind IN ('major', 'minor')`))
    // filters | filterOptions | geographicLevels | indicators | locationGroups | locationOptions | timePeriods
    .addColumn('list', 'text', (c) => c.notNull())
    .addColumn('change', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('version_changes_version_idx').on('version_changes').column('version_id').execute();

  await db.schema
    .createTable('preview_tokens')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('version_id', 'integer', (c) => c.notNull().references('data_set_versions.id').onDelete('cascade'))
    .addColumn('label', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'preview_tokens', 'version_changes', 'version_time_periods', 'version_locations', 'locations',
    'version_geographic_levels', 'version_indicators', 'version_filter_options', 'version_filters',
    'data_set_version_files', 'data_set_versions', 'data_sets', 'publications',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
  await sql`DROP SEQUENCE IF EXISTS stats_public_id_seq, stats_filter_option_public_id_seq, stats_indicator_public_id_seq, stats_location_public_id_seq`.execute(db);
  await sql`DROP SCHEMA IF EXISTS stats_data CASCADE`.execute(db);
}
