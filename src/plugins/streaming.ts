import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Socket } from 'node:net';
import type { Config } from '../config.js';
import { CapacityError } from '../errors.js';

/**
 * Responses against slow and hostile clients:
 * - the write timeout: a client that takes no bytes of any response (JSON, CSV stream, file) for
 *   STREAM_STALL_TIMEOUT_MS while the response has bytes waiting is disconnected, which frees the bytes held for it
 *   and, for a stream, ends it and gives its database cursor and connection back;
 * - query CSV exports hold a database connection while they run, so at most QUERY_CSV_MAX_PER_CLIENT run at once
 *   per client (429 beyond) and QUERY_CSV_MAX_CONCURRENT in total (503 beyond): exports can never take the
 *   whole statistics pool.
 */

/** Who a slot counts for: a client key (see clientKeyOf) and whether it authenticated (a provider's token). */
export interface SlotClient {
  key: string;
  authenticated: boolean;
}

/**
 * The key per-client limits count an address under: an IPv4 address as it is (an IPv4-mapped IPv6 address as its
 * IPv4 address), an IPv6 address by its /64 (one customer's network, which can hold any number of addresses).
 */
export function clientKeyOf(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!ip.includes(':')) return ip;
  const [head = '', tail] = ip.toLowerCase().split('%')[0]!.split('::');
  const groups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const all =
    tail === undefined
      ? groups
      : [...groups, ...Array<string>(Math.max(0, 8 - groups.length - tailGroups.length)).fill('0'), ...tailGroups];
  return `${all
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** An anonymous client, counted by its address (an IPv6 one by its /64). */
export function anonymousClient(ip: string): SlotClient {
  return { key: `ip:${clientKeyOf(ip)}`, authenticated: false };
}

/**
 * A limited resource's slots: at most `maxPerClient` per client (429 beyond) and `maxTotal` in all (503 beyond), of
 * which `reservedForAuthenticated` only authenticated clients may take, so anonymous clients cannot crowd them out.
 * Slots are taken and given back in one place, `hold`, tied to the response's connection: no handler releases one.
 */
export class ExportSlots {
  private readonly perClient = new Map<string, number>();
  private total = 0;
  private anonymous = 0;

  constructor(
    readonly maxPerClient: number,
    readonly maxTotal: number,
    /** What the slots are for, as the 429/503 messages name it. */
    readonly what = 'CSV exports',
    readonly reservedForAuthenticated = 0,
  ) {}

  get running(): number {
    return this.total;
  }

  /**
   * Takes a slot for the client of `reply` for as long as its response is open: given back when the response closes
   * (sent, failed, or its client gone), whenever that happens relative to the handler's awaits. Call it before the
   * handler's first await. Throws the 429/503 to answer when no slot is free. Returns a signal that aborts when the
   * response closes; when the client is already gone it is aborted at once and no slot is taken.
   */
  hold(reply: FastifyReply, client: SlotClient): AbortSignal {
    const gone = new AbortController();
    const response = reply.raw;
    const socket = reply.request.raw.socket as Socket | null;
    if (response.destroyed || response.writableFinished || !socket || socket.destroyed) {
      gone.abort();
      return gone.signal;
    }
    const release = this.acquire(client);
    // Checked and listened to in the same turn: either the close has happened (destroyed) or a listener sees it.
    // The socket's own close too, in case it closed before the response was attached to it.
    const closed = () => {
      response.off('close', closed);
      socket.off('close', closed);
      release();
      gone.abort();
    };
    response.once('close', closed);
    socket.once('close', closed);
    return gone.signal;
  }

  private acquire(client: SlotClient): () => void {
    const mine = this.perClient.get(client.key) ?? 0;
    if (mine >= this.maxPerClient) {
      throw new CapacityError(
        429,
        `At most ${this.maxPerClient} ${this.what} may run at once per client; retry when one has finished.`,
      );
    }
    const anonymousLimit = this.maxTotal - Math.min(this.reservedForAuthenticated, this.maxTotal - 1);
    if (this.total >= this.maxTotal || (!client.authenticated && this.anonymous >= anonymousLimit)) {
      throw new CapacityError(503, `Too many ${this.what} are running; retry shortly.`);
    }
    this.perClient.set(client.key, mine + 1);
    this.total += 1;
    if (!client.authenticated) this.anonymous += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      if (!client.authenticated) this.anonymous -= 1;
      const left = (this.perClient.get(client.key) ?? 1) - 1;
      if (left <= 0) this.perClient.delete(client.key);
      else this.perClient.set(client.key, left);
    };
  }
}

const exportHolds = new WeakMap<object, AbortSignal>();

/**
 * The query CSV export slot of `reply`'s request (QUERY_CSV_MAX_PER_CLIENT per client address or IPv6 /64,
 * QUERY_CSV_MAX_CONCURRENT in all): taken by the first call, which the route makes before its first await; later
 * calls return the same signal (aborted once the response has closed).
 */
export function holdExportSlot(reply: FastifyReply): AbortSignal {
  let signal = exportHolds.get(reply.raw);
  if (!signal) {
    const limits = reply.server.streaming as StreamingLimits | undefined;
    const slots = limits?.exports ?? new ExportSlots(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
    signal = slots.hold(reply, anonymousClient(reply.request.ip));
    exportHolds.set(reply.raw, signal);
  }
  return signal;
}

/** Runs `listener` once the signal aborts, or now when it has already. */
export function whenAborted(signal: AbortSignal, listener: () => void): void {
  if (signal.aborted) listener();
  else signal.addEventListener('abort', listener, { once: true });
}

export interface StreamingLimits {
  exports: ExportSlots;
  /** Own statement bound of a streamed query CSV (QUERY_CSV_TIMEOUT_MS). */
  queryCsvTimeoutMs: number;
  stallTimeoutMs: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    streaming: StreamingLimits;
  }
}

/** Disconnects the client of `reply` once it has taken no bytes for `timeoutMs` while bytes wait to be sent. */
export function dropStalledReader(reply: FastifyReply, timeoutMs: number): void {
  const response = reply.raw;
  let lastWritten = -1;
  let since = Date.now();
  const timer = setInterval(
    () => {
      const socket = response.socket;
      if (!socket || socket.destroyed) return clearInterval(timer);
      const written = socket.bytesWritten;
      const waiting = response.writableNeedDrain || socket.writableLength > 0;
      if (written !== lastWritten || !waiting) {
        lastWritten = written;
        since = Date.now();
        return;
      }
      if (Date.now() - since >= timeoutMs) {
        clearInterval(timer);
        reply.log.warn(
          { stalledMs: Date.now() - since, bytesWritten: written },
          'client stopped reading a response; disconnecting it',
        );
        socket.destroy();
      }
    },
    Math.max(50, Math.min(1000, Math.floor(timeoutMs / 4))),
  );
  timer.unref();
  // Finished: every byte is with the operating system, nothing is left held here.
  response.once('finish', () => clearInterval(timer));
  response.once('close', () => clearInterval(timer));
}

export const streamingPlugin = fp<{ config: Config }>(
  async (app: FastifyInstance, { config }) => {
    const limits: StreamingLimits = {
      exports: new ExportSlots(config.QUERY_CSV_MAX_PER_CLIENT, config.QUERY_CSV_MAX_CONCURRENT),
      queryCsvTimeoutMs: config.QUERY_CSV_TIMEOUT_MS,
      stallTimeoutMs: config.STREAM_STALL_TIMEOUT_MS,
    };
    app.decorate('streaming', limits);
    // Every response, whatever its payload: a large JSON body waits in memory for its reader as a stream does.
    app.addHook('onSend', async (_request, reply, payload) => {
      dropStalledReader(reply, limits.stallTimeoutMs);
      return payload;
    });
  },
  { name: 'streaming' },
);
