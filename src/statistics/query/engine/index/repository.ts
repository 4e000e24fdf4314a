/** The row index's bookkeeping in the database: which versions were used when (for a starting instance's warm-up). */
import { sql } from 'kysely';
import type { Executor } from '../../../../db/database.js';

/**
 * Gives the rest of the transaction `timeoutMs` for its statements instead of the requests' statement timeout (a
 * literal, so the client-side deadline of src/db/database.ts follows it too).
 */
export async function setLocalStatementTimeout(trx: Executor, timeoutMs: number): Promise<void> {
  await sql`SET LOCAL statement_timeout = ${sql.raw(String(Math.max(1, Math.floor(timeoutMs))))}`.execute(trx);
}

/** Notes that a version's row index was used now. */
export async function recordRowIndexUse(db: Executor, rowsTable: string, versionId: number): Promise<void> {
  await db
    .insertInto('version_row_index_uses')
    .values({ rows_table: rowsTable, version_id: versionId, used_at: sql<Date>`now()` })
    .onConflict((oc) => oc.column('rows_table').doUpdateSet({ used_at: sql<Date>`now()` }))
    .execute();
}

/**
 * The versions a starting instance loads first: those queried most recently (by any instance) or published most
 * recently, whichever was later, most recent first — a version just published is the one about to be queried.
 * Only tables that are still the version's; a withdrawn version only by its queries.
 */
export async function findVersionsToWarm(
  db: Executor,
  limit: number,
): Promise<Array<{ id: number; rowsTable: string }>> {
  const rows = await db
    .selectFrom('data_set_versions as v')
    .leftJoin('version_row_index_uses as u', (join) =>
      join.onRef('u.version_id', '=', 'v.id').onRef('u.rows_table', '=', 'v.rows_table'),
    )
    .select(['v.id', 'v.rows_table'])
    .where('v.rows_table', 'is not', null)
    .where((eb) => eb.or([eb('u.used_at', 'is not', null), eb('v.status', '=', 'Published')]))
    .orderBy(sql`greatest(u.used_at, CASE WHEN v.status = 'Published' THEN v.published_at END)`, (ob) =>
      ob.desc().nullsLast(),
    )
    .orderBy('v.id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, rowsTable: r.rows_table! }));
}
