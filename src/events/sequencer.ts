/**
 * One per instance: gives appended events their positions. Every `intervalMs` it probes the inbox (one cheap query)
 * and, when it holds rows, runs `sequencePendingEvents`; every instance does, and the advisory lock in the repository
 * lets one sequencer transaction run at a time, so it does not matter which instance moves an event. Feed reads call
 * `catchUp` first, so a client that reads right after its own write finds its event. No pool connection is held
 * between ticks; a failing database is logged and retried with a doubling delay (up to MAX_BACKOFF_MS).
 */
import type { Db } from '../db/database.js';
import { hasPendingEvents, sequencePendingEvents } from './outbox-repository.js';

const MAX_BACKOFF_MS = 5000;

export interface EventSequencerOptions {
  intervalMs: number;
  log: { warn(obj: object, msg: string): void };
}

export class EventSequencer {
  /** The run in progress, and the one that will start after it for callers that arrived meanwhile. */
  private running: Promise<number> | undefined;
  private queued: Promise<number> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private delay: number;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly options: EventSequencerOptions,
  ) {
    this.delay = options.intervalMs;
  }

  start(): void {
    this.schedule();
  }

  /**
   * Sequences every event committed before the call: when the inbox has rows, waits for a run that starts after
   * this call (a run already in progress may have taken its snapshot too early). Errors reach the caller.
   */
  async catchUp(): Promise<void> {
    if (await hasPendingEvents(this.db)) await this.sequenceNow();
  }

  /** A run that starts after this call; callers arriving while one runs share the next. */
  sequenceNow(): Promise<number> {
    if (this.queued) return this.queued;
    if (!this.running) return this.startRun();
    const after = this.running.then(
      () => undefined,
      () => undefined,
    );
    this.queued = after.then(() => {
      this.queued = undefined;
      return this.startRun();
    });
    return this.queued;
  }

  private startRun(): Promise<number> {
    // Each batch notifies the events channel: every instance's hub (this one's too) wakes on that.
    const run = sequencePendingEvents(this.db);
    this.running = run;
    const clear = () => {
      if (this.running === run) this.running = undefined;
    };
    run.then(clear, clear);
    return run;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        this.schedule();
      });
    }, this.delay);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      await this.catchUp();
      this.delay = this.options.intervalMs;
    } catch (error) {
      // The database is away (or the statement failed): the events wait in the inbox; try again later.
      this.options.log.warn({ err: (error as Error).message }, 'event sequencer failed; retrying');
      this.delay = Math.min(MAX_BACKOFF_MS, Math.max(this.options.intervalMs, this.delay * 2));
    }
  }

  /** No more ticks; resolves when the current tick and run have ended. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
    await Promise.allSettled([this.running, this.queued]);
  }
}
