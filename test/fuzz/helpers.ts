import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { sequencePendingEvents } from '../../src/events/outbox-repository.js';
import { scaledMs } from '../helpers/machine-speed.js';

/**
 * A fingerprint of every table the service owns (both APIs, including the statistics row tables): one md5 per
 * table over its rows in a stable order (one query). A token's `last_used_at`, which every authenticated request
 * stamps, is left out, so "nothing changed" means no data changed.
 */
export async function databaseFingerprint(
  db: Db,
  schemas: string[] = ['public', 'stats_data'],
  only?: string[],
): Promise<Record<string, string>> {
  // Appended events move from the inbox into the log whenever a sequencer runs (any app's, every 25 ms): that move
  // is the log's bookkeeping, so both fingerprints see it done. A request that appended an event still shows.
  await sequencePendingEvents(db);
  const { rows: found } = await sql<{ schema: string; name: string }>`
    SELECT table_schema AS schema, table_name AS name
    FROM information_schema.tables
    WHERE table_type = 'BASE TABLE' AND table_schema = ANY(${schemas})
      -- Which versions were queried lately (read by readiness to warm them) is bookkeeping of reads, not data.
      AND table_name <> 'version_row_index_uses'
    ORDER BY 1, 2`.execute(db);
  const tables = only ? found.filter((t) => only.includes(t.name)) : found;
  if (tables.length === 0) return {};
  // One round trip for every table, so a property can afford a fingerprint per request.
  // Using a token stamps its `last_used_at` (and `updated_at`): those two are not data.
  const parts = tables.map(({ schema, name }) => {
    const row = name === 'authentication_tokens' ? sql`to_jsonb(t) - 'last_used_at' - 'updated_at'` : sql`to_jsonb(t)`;
    return sql`
      SELECT ${`${schema}.${name}`}::text AS name, count(*)::int AS rows,
             md5(string_agg(r.j, E'\n' ORDER BY r.j)) AS digest
      FROM (SELECT (${row})::text AS j FROM ${sql.table(`${schema}.${name}`)} t) r`;
  });
  const { rows } = await sql<{
    name: string;
    rows: number;
    digest: string | null;
  }>`${sql.join(parts, sql` UNION ALL `)}`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.name, `${r.rows}:${r.digest ?? ''}`]));
}

/** The register's tables (a cheaper fingerprint for per-request checks of register writes). */
export const REGISTER_TABLES = [
  'providers',
  'authentication_tokens',
  'schools',
  'training_partners',
  'trainees',
  'trainee_audits',
  'trainee_placements',
  'trainee_degrees',
];

/**
 * Hostile strings tried in every string parameter: SQL injection, NUL and control characters, path traversal,
 * header/CSV/formula tricks, very long values, unicode (astral, combining, RTL, lone surrogate escapes).
 */
export const HOSTILE_STRINGS: readonly string[] = [
  "'; drop table trainees; --",
  "' OR '1'='1",
  '"; DROP TABLE stats_data.v1; --',
  '1; SELECT pg_sleep(5); --',
  "x' UNION SELECT token_hash FROM authentication_tokens --",
  '%00',
  'a\u0000b',
  '\u0000',
  '../../../../etc/passwd',
  '..%2F..%2Fetc%2Fpasswd',
  "=cmd|'/C calc'!A0",
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '{{7*7}}',
  '\r\nX-Injected: 1',
  'x'.repeat(5000),
  '\u{1F600}\u{1F4A9}',
  'e\u0301\u0301\u0301',
  '\u202Eevil',
  'Ω≈ç√∫',
  '\uFEFFbom',
  '|||',
  ',,,',
  '   ',
];

/** For a query string: the value URL-encoded (the raw `%00` is sent as the three characters, encoded). */
export function queryString(params: Array<[string, string]>): string {
  return params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/**
 * How many cases a fuzz property runs: its default times FUZZ_SCALE (default 1). The defaults are sized so that all
 * of test/fuzz/ finishes in about a minute on a quiet 2-core machine; CI's deeper run sets FUZZ_SCALE=10 (10,000
 * adversarial requests per API), a contributor chasing a bug may set 100. The seeds are fixed either way.
 */
export function fuzzRuns(defaultRuns: number): number {
  return Math.max(1, Math.round(defaultRuns * fuzzScale()));
}

function fuzzScale(): number {
  const scale = Number(process.env.FUZZ_SCALE ?? 1);
  return Number.isFinite(scale) && scale > 0 ? scale : 1;
}

/**
 * The time limit of a property whose cases are `fuzzRuns(…)`, given as sized for FUZZ_SCALE 1: times FUZZ_SCALE (the
 * cases grow with it) and the machine's measured slowness.
 */
export function fuzzPropertyTimeoutMs(msAtScaleOne: number): number {
  return scaledMs(msAtScaleOne * fuzzScale());
}

/** A fuzz test's time limit: 10 s per 100 cases, at least 2 minutes, times the machine's measured slowness. */
export function fuzzTimeoutMs(runs: number): number {
  return scaledMs(Math.max(120_000, runs * 100));
}
