import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface MetricsOptions {
  pools?: Record<string, pg.Pool>;
}

/** Import progress, set by the importer when it runs inside the server process (seed on start). */
export const importProgress = {
  rowsLoaded: 0,
  running: false,
};

/**
 * `GET /metrics` in Prometheus text format: request counts and latency by route and status, database pool usage,
 * import progress and the process's default metrics. One registry per app, so tests can build many apps.
 */
export const metricsPlugin = fp<MetricsOptions>(
  async (app: FastifyInstance, { pools = {} }) => {
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
    new Gauge({
      name: 'statistics_import_rows_loaded',
      help: 'Rows loaded by the statistics import running in this process',
      registers: [registry],
      collect() {
        this.set(importProgress.rowsLoaded);
      },
    });
    new Gauge({
      name: 'statistics_import_running',
      help: '1 while a statistics import runs in this process',
      registers: [registry],
      collect() {
        this.set(importProgress.running ? 1 : 0);
      },
    });

    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      if (route === '/metrics') return;
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      requests.inc(labels);
      latency.observe(labels, reply.elapsedTime / 1000);
    });

    app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
      reply.type(registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'metrics' },
);
