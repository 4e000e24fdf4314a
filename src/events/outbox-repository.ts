/**
 * The change-event log (transactional outbox): every SQL statement on `event_inbox`, `events` and `event_log_state`,
 * and the LISTEN on the channel the sequencer notifies.
 *
 * `appendEvent` runs inside the transaction that makes the change and only inserts the event into `event_inbox`: it
 * takes no shared lock and sends no notification, so appending transactions commit independently (PostgreSQL can
 * group their commits). Positions are handed out afterwards by `sequencePendingEvents`: a short transaction that
 * takes a blocking advisory lock (sequencers run one at a time, across instances), then in its next statement (a
 * fresh READ COMMITTED snapshot, taken after the lock) moves the oldest inbox rows in `seq` order into `events` with
 * the next positions from `event_log_state` (only sequencers write `last_position`), and notifies once per batch.
 *
 * Why the feed's guarantees hold:
 * - No skipping: positions are handed out only by sequencer transactions, which commit one after another, so a
 *   reader never sees position n+1 while n is still to come (a sequence in the writers would not do: n+1 could commit
 *   before n, a reader pass it, and n appear behind its cursor). Positions are gapless (a batch rolls back whole).
 * - An event whose transaction commits late is not visible to the sequencer until then, and simply gets a later
 *   position: positions are the order in which events became visible, which is commit order.
 * - Two changes of one resource keep their order: the append comes after the write that locks the resource's row,
 *   and the second transaction waits for the first one's row lock, so its inbox row is inserted after the first
 *   committed (a bigger `seq`, and never visible before the first one's). Events of one transaction become visible
 *   together and keep their `seq` order.
 * - A rolled-back change leaves no inbox row; a committed one stays in the inbox until some instance's sequencer
 *   moves it (also after a kill -9 of the writer's instance).
 * docs/architecture.md ("Change events") and `bench/events.ts` give the figures.
 */
import { sql } from 'kysely';
import type pg from 'pg';
import type { Db, Executor } from '../db/database.js';
import { PREPARED } from '../db/prepared-statements.js';
import { AppError, ValidationError } from '../errors.js';
import type { EventApi } from './tables.js';

/** The channel the sequencer notifies once per batch it commits, which the instances' listeners wake on. */
const EVENTS_CHANNEL = 'events';

/** Rows one sequencer transaction moves at most (a full batch: the sequencer goes on at once). */
export const SEQUENCE_BATCH_LIMIT = 1000;

/**
 * The sequencers' advisory lock: the two-integer form, whose key space is apart from the one-bigint
 * `pg_advisory_xact_lock(hashtext(…))` locks of the other modules, so no hash can collide with it.
 */
const SEQUENCER_LOCK = sql`2026, 1127`;

export interface NewEvent {
  api: EventApi;
  type: string;
  resourceType: string;
  resourceId: string;
  /** The resource's parent (a placement's trainee, a version's data set), so a resource filter finds both. */
  parentId?: string | null;
  /** Register events: whose, and in which environment (sandbox and production are separate feeds). */
  providerId?: number | null;
  environment?: 'production' | 'sandbox' | null;
  /** Canonical payload (register field names are the latest version's; each reader gets its version's). */
  payload: Record<string, unknown>;
}

export interface StoredEvent {
  position: number;
  id: string;
  api: EventApi;
  type: string;
  occurred_at: Date;
  provider_id: number | null;
  environment: 'production' | 'sandbox' | null;
  resource_type: string;
  resource_id: string;
  parent_id: string | null;
  payload: Record<string, unknown>;
}

/**
 * Appends one event in the caller's transaction: one INSERT into the inbox, after the statements that change (and
 * lock) the resource, so that two changes of one resource keep their order. Returns the event's id (its position is
 * given when a sequencer moves it, after the commit).
 */
export async function appendEvent(trx: Executor, event: NewEvent): Promise<{ id: string }> {
  return trx.insertInto('event_inbox').values(eventInboxValues(event)).returning('id').executeTakeFirstOrThrow();
}

/** An event's `event_inbox` row, its payload as a JSON value (for a statement that takes rows as JSON). */
export function eventInboxRecord(event: NewEvent) {
  return {
    api: event.api,
    type: event.type,
    provider_id: event.providerId ?? null,
    environment: event.environment ?? null,
    resource_type: event.resourceType,
    resource_id: event.resourceId,
    parent_id: event.parentId ?? null,
    payload: event.payload,
  };
}

/** An event's `event_inbox` row, its payload as JSON text (for a write that appends it within a statement of its own). */
export function eventInboxValues(event: NewEvent) {
  return { ...eventInboxRecord(event), payload: JSON.stringify(event.payload) };
}

/** Whether the inbox holds any row (the primary key's first entry: an index-only probe, cheap when empty). */
export async function hasPendingEvents(db: Executor): Promise<boolean> {
  const row = await db.selectFrom('event_inbox').select('seq').orderBy('seq').limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * One sequencer transaction: waits for the sequencers' lock, then moves the oldest `limit` inbox rows visible now, in
 * `seq` order, into `events` at the next positions and notifies the last position. Returns how many it moved.
 */
export async function sequenceEventBatch(db: Db, limit = SEQUENCE_BATCH_LIMIT): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${SEQUENCER_LOCK})`.execute(trx);
    // A new statement, so a new snapshot: it sees every earlier sequencer's commit and every inbox row committed
    // before the lock was granted. The notification is sent at commit, with the rows visible.
    // The rows to move are found through the primary key whatever the inbox's size: as a join, the planner hashed the
    // whole inbox heap, dead rows included, on every run once the heap had grown (a backlog, dead rows between vacuums).
    const { rows } = await sql<{ moved: number }>`${sql.raw(PREPARED)}
      WITH moved AS (
        DELETE FROM event_inbox WHERE seq = ANY (ARRAY(SELECT seq FROM event_inbox ORDER BY seq LIMIT ${limit}))
        RETURNING event_inbox.*
      ), numbered AS (
        SELECT moved.*, row_number() OVER (ORDER BY seq) AS n, count(*) OVER () AS total FROM moved
      ), state AS (
        UPDATE event_log_state SET last_position = last_position + (SELECT count(*) FROM moved)
        WHERE EXISTS (SELECT FROM moved)
        RETURNING last_position
      ), appended AS (
        INSERT INTO events (position, id, api, type, occurred_at, provider_id, environment, resource_type, resource_id, parent_id, payload)
        SELECT state.last_position - numbered.total + numbered.n, id, api, type, occurred_at, provider_id, environment,
               resource_type, resource_id, parent_id, payload
        FROM numbered CROSS JOIN state
        RETURNING position
      )
      SELECT (SELECT count(*) FROM appended)::int AS moved,
             (SELECT pg_notify(${EVENTS_CHANNEL}, last_position::text) FROM state) AS notified`.execute(trx);
    return rows[0]!.moved;
  });
}

/** Sequences the inbox until a batch is not full (what was committed before the call is then in `events`). */
export async function sequencePendingEvents(db: Db, limit = SEQUENCE_BATCH_LIMIT): Promise<number> {
  let total = 0;
  for (;;) {
    const moved = await sequenceEventBatch(db, limit);
    total += moved;
    if (moved < limit) return total;
  }
}

/** Whose events a reader may see: the public statistics feed, or one provider's register feed in one environment. */
export type FeedScope =
  | { api: 'statistics' }
  | { api: 'register'; providerId: number; environment: 'production' | 'sandbox' };

export interface FeedFilter {
  /** Only these event types (none: all). */
  types?: readonly string[];
  /** Only events of this resource or of its children (a trainee's placements, a data set's versions). */
  resourceId?: string;
}

export interface EventPage {
  events: StoredEvent[];
  /** The position to continue after: the last event returned, or the last one looked at when a filter skipped some. */
  next: number;
  /** Whether more (possibly filtered-out) events follow `next` now. */
  hasMore: boolean;
  /** The last position of the whole log when the page was read: without `hasMore`, the scope has nothing up to it. */
  horizon: number;
}

/** At most this many events of the scope are looked at per page, whatever the filters, so a page's cost is bounded. */
export const FEED_SCAN_LIMIT = 1000;

/** Cursors are opaque to clients: `ev1.<position>` in base64url, so they are not mistaken for a number to compute with. */
export function encodeCursor(position: number): string {
  return Buffer.from(`ev1.${position}`).toString('base64url');
}

/** The position a cursor names; a malformed one is a 400. */
export function decodeCursor(cursor: string, parameter: string): number {
  const match = /^ev1\.(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match || encodeCursor(Number(match[1])) !== cursor) {
    throw new ValidationError([
      {
        path: parameter,
        message: `"${cursor}" is not a cursor of this feed; use the "cursor" of an event or the next cursor of a page.`,
        code: 'InvalidCursor',
      },
    ]);
  }
  return Number(match[1]);
}

/** The cursor predates retention: the events after it are gone, so resuming from it would silently skip some. */
export class CursorExpiredError extends AppError {
  constructor(retentionDays: number) {
    super(
      410,
      'Gone',
      `Events after this cursor were deleted (events are kept ${retentionDays} days). Re-read the current state ` +
        '(list the resources again), then follow the feed from its start (no cursor) or from the live stream.',
    );
  }
}

export async function eventLogState(db: Executor): Promise<{ lastPosition: number; purgedThrough: number }> {
  const row = await db
    .selectFrom('event_log_state')
    .select(['last_position', 'purged_through'])
    .executeTakeFirstOrThrow();
  return { lastPosition: row.last_position, purgedThrough: row.purged_through };
}

/**
 * Makes `client` (a connection of its own, kept open) listen on the channel the sequencer notifies: its
 * `notification` events then arrive once per committed batch (the hub's wake-up).
 */
export async function listenForEventBatches(client: pg.ClientBase): Promise<void> {
  await client.query(`LISTEN ${EVENTS_CHANNEL}`);
}

/** Every scope's events after `after`, in position order, at most `limit` (the hub's read of what is new). */
export async function readEventsAfter(db: Executor, after: number, limit: number): Promise<StoredEvent[]> {
  const { rows } =
    await sql<StoredEvent>`SELECT * FROM events WHERE position > ${after} ORDER BY position LIMIT ${limit}`.execute(db);
  return rows;
}

function scoped(scope: FeedScope) {
  return scope.api === 'statistics'
    ? sql`api = 'statistics'`
    : sql`api = 'register' AND provider_id = ${scope.providerId} AND environment = ${scope.environment}`;
}

/**
 * The scope's events after `after` in position (commit) order, at most `limit`, with the filters applied to at most
 * FEED_SCAN_LIMIT events of the scope. A cursor older than retention is a 410 (`retentionDays` names the setting).
 */
export async function readEventPage(
  db: Executor,
  scope: FeedScope,
  after: number | undefined,
  filter: FeedFilter,
  limit: number,
  retentionDays: number,
): Promise<EventPage> {
  const state = await eventLogState(db);
  if (after !== undefined && after < state.purgedThrough) throw new CursorExpiredError(retentionDays);
  const from = after ?? state.purgedThrough;
  const types = filter.types && filter.types.length > 0 ? filter.types : undefined;
  const filters = [
    sql`true`,
    ...(types ? [sql`e.type IN (${sql.join(types.map((t) => sql`${t}`))})`] : []),
    ...(filter.resourceId !== undefined
      ? [sql`(e.resource_id = ${filter.resourceId} OR e.parent_id = ${filter.resourceId})`]
      : []),
  ];
  const { rows } = await sql<StoredEvent & { scanned_through: number; scanned: number }>`
    WITH scanned AS (
      SELECT position FROM events WHERE ${scoped(scope)} AND position > ${from} ORDER BY position LIMIT ${FEED_SCAN_LIMIT}
    ), bounds AS (
      SELECT coalesce(max(position), ${from})::bigint AS scanned_through, count(*)::int AS scanned FROM scanned
    )
    SELECT e.*, bounds.scanned_through, bounds.scanned
    FROM bounds LEFT JOIN LATERAL (
      SELECT e.* FROM scanned JOIN events e USING (position)
      WHERE ${sql.join(filters, sql` AND `)}
      ORDER BY position LIMIT ${limit}
    ) e ON true`.execute(db);
  const bounds = rows[0]!;
  const events = rows
    .filter((row) => row.position !== null)
    .map(({ scanned_through: _t, scanned: _s, ...event }) => event);
  const full = events.length === limit;
  const next = full ? events[events.length - 1]!.position : bounds.scanned_through;
  const hasMore = full
    ? next < bounds.scanned_through || bounds.scanned === FEED_SCAN_LIMIT
    : bounds.scanned === FEED_SCAN_LIMIT;
  return { events, next, hasMore, horizon: state.lastPosition };
}

/**
 * Events a purge deletes per statement at most: each statement then ends well within the statement timeout and
 * writes a bounded transaction whatever the backlog. As one statement, a purge of some twelve million events would
 * pass the default 30 s timeout (8 million took 20 s here, `bench/events-purge.ts`), be rolled back and fail the same
 * way every hour.
 */
export const PURGE_BATCH = 10_000;

/**
 * Deletes the events older than `retentionDays` and records the highest position deleted, `batch` positions per
 * statement, oldest first. Positions and times rise together only roughly (the time is the transaction's start), so
 * each statement looks at the next `batch` events after the last purge and deletes every one up to the highest that is
 * old enough: what is left is always one unbroken run of positions. Each deletes only above the last purged position,
 * so it never walks the index entries of rows that earlier statements deleted. It ends at a batch with a newer event
 * after its last old one (an old event behind a whole batch of newer ones waits until they are old too).
 */
export async function purgeEvents(
  db: Executor,
  retentionDays: number,
  now = new Date(),
  batch = PURGE_BATCH,
): Promise<{ deleted: number; purgedThrough: number }> {
  const cutoff = new Date(now.getTime() - retentionDays * 86_400_000);
  let deleted = 0;
  for (;;) {
    const { rows } = await sql<{ deleted: number; purged_through: number }>`
      WITH state AS (
        SELECT purged_through FROM event_log_state
      ), horizon AS (
        SELECT max(position) AS position FROM (
          SELECT position, occurred_at FROM events WHERE position > (SELECT purged_through FROM state)
          ORDER BY position LIMIT ${batch}
        ) next WHERE occurred_at < ${cutoff}
      ), removed AS (
        DELETE FROM events
        WHERE position > (SELECT purged_through FROM state) AND position <= (SELECT position FROM horizon)
        RETURNING position
      ), moved AS (
        UPDATE event_log_state SET purged_through = greatest(purged_through, (SELECT position FROM horizon))
        WHERE (SELECT position FROM horizon) IS NOT NULL
        RETURNING purged_through
      )
      SELECT (SELECT count(*) FROM removed)::int AS deleted,
             coalesce((SELECT purged_through FROM moved), (SELECT purged_through FROM state))::bigint AS purged_through`.execute(
      db,
    );
    const step = rows[0]!; // one row: the SELECT has no FROM
    deleted += step.deleted;
    // Fewer than a whole batch deleted: the batch ended with newer events, or the log did.
    if (step.deleted < batch) return { deleted, purgedThrough: step.purged_through };
  }
}
