import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import underPressure from '@fastify/under-pressure';
import type pg from 'pg';
import type { Config } from '../config.js';
import { ServiceUnavailableError } from '../errors.js';
import { connectionsBeingOpened } from '../db/database.js';

/** Why an instance sheds load now, and the measures behind it (readiness reports them). */
export interface LoadPressure {
  overloaded: boolean;
  reason?: string;
  inFlight: number;
  eventLoopDelayMs: number;
  eventLoopUtilization: number;
  poolWaiting: number;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Whose bounds the route's requests count against (`register`, `statistics`; set for a whole API scope by
     * `admissionGroup`): a burst on one API is refused without refusing the other's requests.
     */
    admissionGroup?: string;
  }
  interface FastifyInstance {
    /** The instance's load now (src/plugins/load-shedding.ts). */
    loadPressure(): LoadPressure;
  }
}

export interface LoadSheddingOptions {
  config: Config;
  /** The database pools whose waiting requests count as pressure. */
  pools?: Record<string, pg.Pool>;
}

/** The refusal of a request the instance has no room for: 503, with Retry-After set on the reply. */
export class OverloadedError extends ServiceUnavailableError {
  readonly code = 'OVERLOADED';
  constructor(reason: string) {
    super(`The service is busy (${reason}). Retry after the time in the Retry-After header.`);
  }
}

/**
 * Queries waiting for a busy connection of `pool`: its waiting queries less those that connections being opened
 * will take. A burst after a quiet spell (idle connections are closed after 30 s) or at the start waits a few ms for
 * the pool to open its connections; that is no overload, and was refused as one (docs/performance.md, "Mixed load").
 */
export function queriesWaitingForBusyConnections(pool: pg.Pool): number {
  return Math.max(0, pool.waitingCount - connectionsBeingOpened(pool));
}

/** Queries waiting for a busy connection of the group's pools (named `<group>` or `<group>-…`), else of every pool. */
function poolWaiting(pools: Record<string, pg.Pool>, group?: string): number {
  const own = Object.entries(pools).filter(
    ([name]) => group !== undefined && (name === group || name.startsWith(`${group}-`)),
  );
  let waiting = 0;
  for (const [, pool] of own.length > 0 ? own : Object.entries(pools))
    waiting += queriesWaitingForBusyConnections(pool);
  return waiting;
}

/**
 * The event-loop delay to report, in ms to one decimal. `@fastify/under-pressure` gives Infinity for an interval in
 * which the loop could not take one sample (blocked for all of it), which JSON would turn into null: reported as the
 * sample interval, what the delay was at least.
 */
export function reportedEventLoopDelayMs(delayMs: number, sampleIntervalMs: number): number {
  return Math.round((Number.isFinite(delayMs) ? delayMs : sampleIntervalMs) * 10) / 10;
}

/** An `onRoute` hook for an API's scope: its routes count against the bounds of `group` (see FastifyContextConfig). */
export function admissionGroup(group: string): (route: RouteOptions) => void {
  return (route) => {
    route.config = { ...route.config, admissionGroup: group };
  };
}

/**
 * Admission control: a request that arrives while the instance is past one of its bounds (requests being answered,
 * event-loop delay or utilisation, queries waiting for a database connection; src/config.ts LOAD_SHED_*) is answered
 * 503 with `Retry-After` at once, in its API's error format (the error goes through the route scope's handler), so
 * that the requests admitted keep their latency instead of every request queueing and all of them being late. Each
 * API counts its own requests and pool waits (route config `admissionGroup`), so a burst on one does not refuse the
 * other's requests. Readiness reports 503 while an API is at its bound of requests in progress. Probes (`/health/*`, `/metrics`: route config `probe`) are never refused. Root scope: it runs before any API's
 * authentication.
 */
export const loadSheddingPlugin = fp<LoadSheddingOptions>(
  async (app: FastifyInstance, { config, pools = {} }) => {
    const retryAfter = String(config.LOAD_SHED_RETRY_AFTER_S);
    const refuse = (reply: FastifyReply, reason: string): never => {
      reply.header('retry-after', retryAfter);
      throw new OverloadedError(reason);
    };
    const exempt = (request: FastifyRequest) => request.routeOptions.config?.probe === true;

    // Requests in progress per admission group (the service's own routes: no group).
    const inFlight = new Map<string | undefined, number>();
    const inFlightOf = (request: FastifyRequest) => inFlight.get(request.routeOptions.config?.admissionGroup) ?? 0;
    app.addHook('onRequest', async (request, reply) => {
      if (exempt(request)) return;
      const group = request.routeOptions.config?.admissionGroup;
      const current = inFlight.get(group) ?? 0;
      if (current >= config.LOAD_SHED_MAX_IN_FLIGHT) refuse(reply, 'too many requests in progress');
      if (poolWaiting(pools, group) >= config.LOAD_SHED_MAX_POOL_WAITING)
        refuse(reply, 'too many requests waiting for the database');
      inFlight.set(group, current + 1);
      reply.raw.once('close', () => {
        inFlight.set(group, (inFlight.get(group) ?? 1) - 1);
      });
    });

    // Event-loop delay and utilisation, sampled by @fastify/under-pressure; its onRequest hook refuses through ours.
    await app.register(underPressure, {
      maxEventLoopDelay: config.LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS,
      maxEventLoopUtilization: config.LOAD_SHED_MAX_EVENT_LOOP_UTILIZATION,
      sampleInterval: config.LOAD_SHED_SAMPLE_INTERVAL_MS,
      eventLoopUtilizationMode: 'interval',
      // Only while other requests are being answered: a delayed loop with nothing queued (the start's compiling, a
      // lone heavy request) is no reason to refuse the one request that comes.
      pressureHandler: async (request, reply, type) => {
        if (exempt(request) || inFlightOf(request) <= 1) return;
        refuse(reply, type === 'eventLoopDelay' ? 'event loop delayed' : 'event loop saturated');
      },
    });

    app.decorate('loadPressure', (): LoadPressure => {
      const { eventLoopDelay, eventLoopUtilized } = app.memoryUsage();
      const waiting = poolWaiting(pools);
      const total = [...inFlight.values()].reduce((sum, n) => sum + n, 0);
      const groups = [...inFlight.keys()];
      // Requests waiting for one API's pool (stalled clients holding its connections) do not make the instance
      // unready: the other API, and the readiness probe on its own pool, still answer.
      const reason = groups.some((g) => (inFlight.get(g) ?? 0) >= config.LOAD_SHED_MAX_IN_FLIGHT)
        ? 'too many requests in progress'
        : total > 0 && app.isUnderPressure()
          ? 'event loop delayed or saturated'
          : undefined;
      return {
        overloaded: reason !== undefined,
        ...(reason ? { reason } : {}),
        inFlight: total,
        eventLoopDelayMs: reportedEventLoopDelayMs(eventLoopDelay, config.LOAD_SHED_SAMPLE_INTERVAL_MS),
        eventLoopUtilization: Math.round(eventLoopUtilized * 1000) / 1000,
        poolWaiting: waiting,
      };
    });
  },
  { name: 'load-shedding' },
);
