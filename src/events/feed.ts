/**
 * `GET …/events`: one handler for both APIs. Without `Accept: text/event-stream` a page of events after the cursor
 * (`after`) in commit order with the next cursor; with it a Server-Sent Events stream: `id:` is the cursor, a
 * reconnecting client resumes with `Last-Event-ID`, comments keep idle connections open. Streams take a slot per
 * client (EVENTS_STREAM_MAX_PER_CLIENT, 429 beyond) and in total (EVENTS_STREAM_MAX_CONCURRENT, 503 beyond), the
 * opening request counts against the API's rate limit like any other, and a client that stops reading is dropped
 * (the streaming plugin's stall check, as for CSV downloads; also once a megabyte waits unsent).
 */
import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.js';
import { ValidationError } from '../errors.js';
import { whenAborted, type ExportSlots, type SlotClient } from '../plugins/streaming.js';
import type { EventBatch, EventHub } from './hub.js';
import type { EventSequencer } from './sequencer.js';
import {
  decodeCursor,
  encodeCursor,
  eventLogState,
  readEventPage,
  type FeedFilter,
  type FeedScope,
  type StoredEvent,
} from './outbox-repository.js';

export const FEED_PAGE_DEFAULT = 100;
export const FEED_PAGE_MAX = 500;
/** Unsent bytes a stream may hold before its client counts as too slow and is dropped (it resumes by its cursor). */
const STREAM_BUFFER_LIMIT = 1024 * 1024;

/** How one API's feed reads: whose events, how an event and a page look. */
export interface FeedView {
  scope: FeedScope;
  /** The event types of this API (a `type` filter naming another is a 400). */
  types: readonly string[];
  render(event: StoredEvent, cursor: string): Record<string, unknown>;
  page(events: Record<string, unknown>[], nextCursor: string, hasMore: boolean): Record<string, unknown>;
  /** The client a stream's slot is counted for (an address or its /64, a provider). */
  client: SlotClient;
}

export interface FeedQuery {
  after?: string;
  type?: string;
  resource?: string;
  limit?: number;
}

export interface FeedDeps {
  db: Db;
  hub: EventHub;
  /** Run before a page or a stream's first read, so a client that reads after its own write sees its event. */
  sequencer: EventSequencer;
  slots: ExportSlots;
  retentionDays: number;
  heartbeatMs: number;
  /** The open streams, ended when the app closes (so shutdown does not wait for clients that never hang up). */
  openStreams: Set<PassThrough>;
}

function filterOf(query: FeedQuery, view: FeedView): FeedFilter {
  const types = query.type
    ? query.type
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '')
    : [];
  const unknown = types.filter((t) => !view.types.includes(t));
  if (unknown.length > 0) {
    throw new ValidationError([
      {
        path: 'type',
        message: `Unknown event type ${unknown.map((t) => `"${t}"`).join(', ')}; the types are ${view.types.join(', ')}.`,
        code: 'AllowedValue',
      },
    ]);
  }
  return { types, resourceId: query.resource || undefined };
}

export function wantsEventStream(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '')
    .split(',')
    .some((part) => part.trim().toLowerCase().startsWith('text/event-stream'));
}

/** Answers the request: a page, or a stream when the client accepts `text/event-stream`. */
export async function serveFeed(
  request: FastifyRequest,
  reply: FastifyReply,
  query: FeedQuery,
  view: FeedView,
  deps: FeedDeps,
) {
  const filter = filterOf(query, view);
  if (!wantsEventStream(request)) {
    const after = query.after !== undefined ? decodeCursor(query.after, 'after') : undefined;
    await deps.sequencer.catchUp();
    const page = await readEventPage(
      deps.db,
      view.scope,
      after,
      filter,
      query.limit ?? FEED_PAGE_DEFAULT,
      deps.retentionDays,
    );
    reply.header('cache-control', 'no-store');
    return view.page(
      page.events.map((e) => view.render(e, encodeCursor(e.position))),
      encodeCursor(page.next),
      page.hasMore,
    );
  }
  const lastEventId = request.headers['last-event-id'];
  const resumeFrom =
    typeof lastEventId === 'string' && lastEventId !== ''
      ? decodeCursor(lastEventId, 'Last-Event-ID')
      : query.after !== undefined
        ? decodeCursor(query.after, 'after')
        : undefined;
  // The slot first, before any await: it is given back when the response closes, whenever the client goes.
  const gone = deps.slots.hold(reply, view.client);
  await deps.sequencer.catchUp();
  const head = (await eventLogState(deps.db)).lastPosition;
  if (resumeFrom !== undefined && resumeFrom > head) {
    throw new ValidationError([
      {
        path: lastEventId ? 'Last-Event-ID' : 'after',
        message:
          'The cursor is beyond the newest event, so it is not one this feed gave out; reconnect without it to start at the newest event.',
        code: 'InvalidCursor',
      },
    ]);
  }
  // Checked before the stream starts, so a bad or expired cursor is an ordinary error response (400, 410).
  const first =
    resumeFrom === undefined
      ? undefined
      : await readEventPage(deps.db, view.scope, resumeFrom, filter, FEED_PAGE_MAX, deps.retentionDays);
  const start = resumeFrom ?? head;
  const stream = new PassThrough();
  const session = new StreamSession(stream, view, filter, deps, start);
  deps.openStreams.add(stream);
  whenAborted(gone, () => {
    deps.openStreams.delete(stream);
    session.close();
    stream.end();
  });
  reply
    .header('content-type', 'text/event-stream; charset=utf-8')
    .header('cache-control', 'no-store')
    // Compression would hold events back in its buffer; proxies must not buffer either.
    .header('content-encoding', 'identity')
    .header('x-accel-buffering', 'no');
  session.begin(first);
  return reply.send(stream);
}

function matches(event: StoredEvent, scope: FeedScope, filter: FeedFilter): boolean {
  if (event.api !== scope.api) return false;
  if (scope.api === 'register' && (event.provider_id !== scope.providerId || event.environment !== scope.environment))
    return false;
  if (filter.types && filter.types.length > 0 && !filter.types.includes(event.type)) return false;
  if (
    filter.resourceId !== undefined &&
    event.resource_id !== filter.resourceId &&
    event.parent_id !== filter.resourceId
  )
    return false;
  return true;
}

/** One open stream: catches up from its cursor with its own reads, then takes the hub's batches. */
class StreamSession {
  private cursor: number;
  private catchingUp = false;
  private behind = false;
  private closed = false;
  private unsubscribe: () => void = () => {};
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly stream: PassThrough,
    private readonly view: FeedView,
    private readonly filter: FeedFilter,
    private readonly deps: FeedDeps,
    start: number,
  ) {
    this.cursor = start;
  }

  begin(first: Awaited<ReturnType<typeof readEventPage>> | undefined): void {
    this.stream.write('retry: 3000\n\n');
    this.unsubscribe = this.deps.hub.subscribe((batch) => this.offer(batch));
    this.heartbeat = setInterval(() => this.write(': heartbeat\n\n'), this.deps.heartbeatMs);
    this.heartbeat.unref();
    if (first) this.takePage(first);
    if (first?.hasMore || this.cursor < this.deps.hub.current) void this.catchUp();
  }

  private write(text: string): void {
    if (this.closed) return;
    if (this.stream.writableLength > STREAM_BUFFER_LIMIT) {
      // Too slow to keep up: dropped; it resumes from its last id.
      this.stream.destroy();
      return;
    }
    this.stream.write(text);
  }

  private send(event: StoredEvent): void {
    const cursor = encodeCursor(event.position);
    this.write(`id: ${cursor}\nevent: ${event.type}\ndata: ${JSON.stringify(this.view.render(event, cursor))}\n\n`);
  }

  private takePage(page: Awaited<ReturnType<typeof readEventPage>>): void {
    for (const event of page.events) this.send(event);
    this.cursor = page.hasMore ? page.next : Math.max(page.next, page.horizon);
  }

  /** Reads pages from the database until nothing is left, then follows the hub. */
  private async catchUp(): Promise<void> {
    if (this.catchingUp) {
      this.behind = true;
      return;
    }
    this.catchingUp = true;
    try {
      do {
        this.behind = false;
        const page = await readEventPage(
          this.deps.db,
          this.view.scope,
          this.cursor,
          this.filter,
          FEED_PAGE_MAX,
          this.deps.retentionDays,
        );
        if (this.closed) return;
        this.takePage(page);
        if (page.hasMore) this.behind = true;
      } while (this.behind && !this.closed);
    } catch {
      // A database error (or retention passing the cursor) ends the stream; the client reconnects with its last id.
      this.stream.destroy();
    } finally {
      this.catchingUp = false;
    }
  }

  private offer(batch: EventBatch): void {
    if (this.closed) return;
    if (this.catchingUp || this.cursor < batch.from) {
      void this.catchUp();
      return;
    }
    for (const event of batch.events)
      if (event.position > this.cursor && matches(event, this.view.scope, this.filter)) this.send(event);
    this.cursor = Math.max(this.cursor, batch.to);
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    if (this.heartbeat) clearInterval(this.heartbeat);
  }
}
