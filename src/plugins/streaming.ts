import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Config } from '../config.js';
import { AppError, ServiceUnavailableError } from '../errors.js';

/**
 * Responses against slow and hostile clients:
 * - the write timeout: a client that takes no bytes of any response (JSON, CSV stream, file) for
 *   STREAM_STALL_TIMEOUT_MS while the response has bytes waiting is disconnected, which frees the bytes held for it
 *   and, for a stream, ends it and gives its database cursor and connection back;
 * - query CSV exports hold a database connection while they run, so at most QUERY_CSV_MAX_PER_CLIENT run at once
 *   per client IP (429 beyond) and QUERY_CSV_MAX_CONCURRENT in total (503 beyond): exports can never take the
 *   whole statistics pool.
 */
export class ExportSlots {
  private readonly perClient = new Map<string, number>();
  private total = 0;

  constructor(
    readonly maxPerClient: number,
    readonly maxTotal: number,
    /** What the slots are for, as the 429/503 messages name it. */
    readonly what = 'CSV exports',
  ) {}

  get running(): number {
    return this.total;
  }

  /** Takes a slot for `client`, or throws the 429/503 to answer; call the returned function once when done. */
  acquire(client: string): () => void {
    const mine = this.perClient.get(client) ?? 0;
    if (mine >= this.maxPerClient) {
      throw new AppError(429, 'Too Many Requests', `At most ${this.maxPerClient} ${this.what} may run at once per client; retry when one has finished.`);
    }
    if (this.total >= this.maxTotal) {
      throw new ServiceUnavailableError(`Too many ${this.what} are running; retry shortly.`);
    }
    this.perClient.set(client, mine + 1);
    this.total += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left <= 0) this.perClient.delete(client);
      else this.perClient.set(client, left);
    };
  }
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

/**
 * Takes one of the app's export slots for the client of `reply` (429 or 503 when none is free) until its response
 * closes; the signal fires then, so that the export stops reading.
 */
export function holdExportSlot(reply: FastifyReply): AbortSignal {
  const limits = reply.server.streaming;
  const release = limits ? limits.exports.acquire(reply.request.ip) : () => {};
  const gone = new AbortController();
  reply.raw.once('close', () => {
    release();
    gone.abort();
  });
  return gone.signal;
}

/** Disconnects the client of `reply` once it has taken no bytes for `timeoutMs` while bytes wait to be sent. */
export function dropStalledReader(reply: FastifyReply, timeoutMs: number): void {
  const response = reply.raw;
  let lastWritten = -1;
  let since = Date.now();
  const timer = setInterval(() => {
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
      reply.log.warn({ stalledMs: Date.now() - since, bytesWritten: written }, 'client stopped reading a response; disconnecting it');
      socket.destroy();
    }
  }, Math.max(50, Math.min(1000, Math.floor(timeoutMs / 4))));
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
