import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/database.js';
import { readRunningImports, type RunningImports } from '../statistics/import/repository.js';

/** What /metrics shows of the statistics query's row indexes (the app's row index store). */
export interface RowIndexStatusSource {
  status(): { ready: number; loading: number; backingOff: number; bytes: number; rowsRead: number; outcomes: Record<string, number> };
}

export interface MetricsOptions {
  pools?: Record<string, pg.Pool>;
  rowIndexes?: RowIndexStatusSource;
  /** Where statistics imports are observed (the readiness pool in the server: a scrape never queues behind API traffic). */
  importsDb?: Db;
}

/** A scrape waits at most this long for the import progress query; the gauges are left out when it does not answer. */
const IMPORT_PROGRESS_TIMEOUT_MS = 800;

/**
 * `GET /metrics` in Prometheus text format: request counts and latency by route and status, database pool usage,
 * import progress, the statistics row indexes and the process's default metrics. One registry per app, so tests can build many apps.
 */
export const metricsPlugin = fp<MetricsOptions>(
  async (app: FastifyInstance, { pools = {}, importsDb, rowIndexes }) => {
    const registry = new Registry();
    collectDefaultMetrics({ register: registry });
    const requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    });
    const latency = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency, by method, route template and status code',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    });
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database pool connections by pool and state (total, idle, waiting requests)',
      labelNames: ['pool', 'state'] as const,
      registers: [registry],
      collect() {
        for (const [name, pool] of Object.entries(pools)) {
          this.set({ pool: name, state: 'total' }, pool.totalCount);
          this.set({ pool: name, state: 'idle' }, pool.idleCount);
          this.set({ pool: name, state: 'waiting' }, pool.waitingCount);
        }
      },
    });
    // Both import gauges come from one query per scrape, shared by their collect() calls.
    let progress: Promise<RunningImports | undefined> | undefined;
    const importProgress = () => {
      if (!importsDb) return Promise.resolve(undefined);
      progress ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        try {
          return await Promise.race([
            readRunningImports(importsDb),
            new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), IMPORT_PROGRESS_TIMEOUT_MS))),
          ]);
        } catch {
          return undefined;
        } finally {
          clearTimeout(timer);
          setImmediate(() => (progress = undefined));
        }
      })();
      return progress;
    };
    new Gauge({
      name: 'statistics_import_rows_loaded',
      help: 'Rows read so far from their data files by the statistics imports running against this database (any process)',
      registers: [registry],
      async collect() {
        const current = await importProgress();
        if (current) this.set(current.rowsRead);
        else this.reset();
      },
    });
    new Gauge({
      name: 'statistics_import_running',
      help: 'Statistics imports running against this database right now (any process)',
      registers: [registry],
      async collect() {
        const current = await importProgress();
        if (current) this.set(current.running);
        else this.reset();
      },
    });

    if (rowIndexes) {
      new Gauge({
        name: 'statistics_row_index_versions',
        help: 'Data set versions by the state of their in-memory row index: ready, loading, backing_off (waiting after a failed load)',
        labelNames: ['state'] as const,
        registers: [registry],
        collect() {
          const status = rowIndexes.status();
          this.set({ state: 'ready' }, status.ready);
          this.set({ state: 'loading' }, status.loading);
          this.set({ state: 'backing_off' }, status.backingOff);
        },
      });
      new Gauge({
        name: 'statistics_row_index_bytes',
        help: 'Bytes held by the in-memory row indexes (bounded by QUERY_INDEX_MEMORY_MB)',
        registers: [registry],
        collect() {
          this.set(rowIndexes.status().bytes);
        },
      });
      new Gauge({
        name: 'statistics_row_index_rows_read',
        help: 'Rows read so far by the row index builds from rows in progress',
        registers: [registry],
        collect() {
          this.set(rowIndexes.status().rowsRead);
        },
      });
      new Counter({
        name: 'statistics_row_index_loads_total',
        help: 'Finished row index loads by outcome: snapshot (read from its stored form), rows (built from the rows), failed, too_large',
        labelNames: ['outcome'] as const,
        registers: [registry],
        collect() {
          this.reset();
          for (const [outcome, count] of Object.entries(rowIndexes.status().outcomes)) this.inc({ outcome }, count);
        },
      });
    }

    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      if (route === '/metrics') return;
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      requests.inc(labels);
      latency.observe(labels, reply.elapsedTime / 1000);
    });

    app.get('/metrics', { schema: { hide: true }, config: { probe: true } }, async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'metrics' },
);
