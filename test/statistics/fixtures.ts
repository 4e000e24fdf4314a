import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { Db } from '../../src/db/database.js';
import type { DataSetStatus, VersionStatus } from '../../src/statistics/tables.js';

/**
 * Small catalogue rows of our own, inserted with plain Kysely, for the read endpoints' access, paging and version
 * rules (the seeded AbsenceSchool fixture covers the real metadata and CSV).
 */

export async function insertPublication(
  db: Db,
  fields: { title: string; summary?: string; id?: string; slug?: string },
) {
  const id = fields.id ?? randomUUID();
  await db
    .insertInto('publications')
    .values({ id, title: fields.title, summary: fields.summary ?? '', slug: fields.slug ?? `pub-${id.slice(0, 8)}` })
    .execute();
  return id;
}

export async function insertDataSet(
  db: Db,
  fields: {
    publicationId: string;
    title: string;
    status: DataSetStatus;
    summary?: string;
    id?: string;
    supersedingDataSetId?: string;
  },
) {
  const id = fields.id ?? randomUUID();
  await db
    .insertInto('data_sets')
    .values({
      id,
      publication_id: fields.publicationId,
      title: fields.title,
      summary: fields.summary ?? `${fields.title} summary`,
      status: fields.status,
      superseding_data_set_id: fields.supersedingDataSetId ?? null,
    })
    .execute();
  return id;
}

export interface VersionFields {
  dataSetId: string;
  version: string;
  status: VersionStatus;
  published?: string | null;
  withdrawn?: string | null;
  notes?: string;
  totalResults?: number;
}

export async function insertVersion(db: Db, fields: VersionFields) {
  const [major, minor, patch] = fields.version.split('.').map(Number) as [number, number, number | undefined];
  const published =
    fields.published === undefined ? (fields.status === 'Draft' ? null : '2024-01-01T09:30:00Z') : fields.published;
  const row = await db
    .insertInto('data_set_versions')
    .values({
      data_set_id: fields.dataSetId,
      major,
      minor,
      patch: patch ?? 0,
      status: fields.status,
      published_at: published,
      withdrawn_at: fields.withdrawn ?? null,
      notes: fields.notes ?? `Notes of ${fields.version}`,
      release_title: `Release of ${fields.version}`,
      release_slug: `release-${fields.version.replace(/\./g, '-')}`,
      total_results: fields.totalResults ?? 0,
    })
    .returning(['id', 'file_id'])
    .executeTakeFirstOrThrow();
  return row;
}

export async function insertPreviewToken(
  db: Db,
  versionId: number,
  expiresAt: Date,
  createdAt = new Date(Date.now() - 60_000),
) {
  const row = await db
    .insertInto('preview_tokens')
    .values({ version_id: versionId, expires_at: expiresAt, created_at: createdAt })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

let publicIdCounter = 0;
function nextPublicId(prefix: string) {
  publicIdCounter += 1;
  return `${prefix}${publicIdCounter}`;
}

/** Minimal metadata for a version: two filters, two indicators, two levels, time periods. */
export async function insertSmallMeta(
  db: Db,
  versionId: number,
  options: { timePeriods?: Array<[string, string]> } = {},
) {
  const [filterA, filterB] = await db
    .insertInto('version_filters')
    .values([
      {
        version_id: versionId,
        public_id: nextPublicId('f'),
        column_name: 'school_type',
        label: 'School type',
        hint: '',
        ordinal: 2,
      },
      {
        version_id: versionId,
        public_id: nextPublicId('f'),
        column_name: 'academy_type',
        label: 'Academy type',
        hint: 'Only academies',
        ordinal: 1,
      },
    ])
    .returning(['id', 'public_id'])
    .execute();
  await db
    .insertInto('version_filter_options')
    .values([
      { filter_id: filterA!.id, public_id: nextPublicId('o'), label: 'Total' },
      { filter_id: filterA!.id, public_id: nextPublicId('o'), label: 'State-funded primary' },
      { filter_id: filterB!.id, public_id: nextPublicId('o'), label: 'Secondary free school' },
    ])
    .execute();
  await db
    .insertInto('version_indicators')
    .values([
      {
        version_id: versionId,
        public_id: nextPublicId('i'),
        column_name: 'sess_possible',
        label: 'Number of possible sessions',
        unit: '',
        decimal_places: 0,
        ordinal: 2,
      },
      {
        version_id: versionId,
        public_id: nextPublicId('i'),
        column_name: 'enrolments',
        label: 'Enrolments',
        unit: '',
        decimal_places: null,
        ordinal: 1,
      },
    ])
    .execute();
  await db
    .insertInto('version_geographic_levels')
    .values([
      { version_id: versionId, code: 'NAT' },
      { version_id: versionId, code: 'LA' },
    ])
    .execute();
  for (const [period, code] of options.timePeriods ?? [
    ['2020/2021', 'AY'],
    ['2021/2022', 'AY'],
  ]) {
    await db.insertInto('version_time_periods').values({ version_id: versionId, period, code }).execute();
  }
}

/** Stores `csv` as the version's data file (gzip), as the importer does. */
export async function insertCsvFile(db: Db, versionId: number, csv: string) {
  const gzip = gzipSync(Buffer.from(csv, 'utf8'));
  await db
    .insertInto('data_set_version_files')
    .values({ version_id: versionId, content_gzip: gzip, size_bytes: Buffer.byteLength(csv) })
    .execute();
}
