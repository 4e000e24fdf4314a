import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What /metrics shows of the statistics query's row indexes (the app's row index store). */
export interface RowIndexStatusSource {
  status(): {
    ready: number;
    loading: number;
    /** Engine forms being rebuilt (missing, of another format or corrupt). */
    rebuilding: number;
    backingOff: number;
    bytes: number;
    rowsRead: number;
    outcomes: Record<string, number>;
  };
}

/** The statistics imports running now (any process) and the rows they have read. */
export interface ImportProgress {
  running: number;
  rowsRead: number;
}

export interface MetricsOptions {
  pools?: Record<string, pg.Pool>;
  rowIndexes?: RowIndexStatusSource;
  /**
   * Reads the import progress, once per scrape (src/app.ts gives the statistics importer's, read on the readiness pool
   * in the server, so a scrape never queues behind API traffic). None: the import gauges are left out.
   */
  importProgress?: () => Promise<ImportProgress>;
}

/** A scrape waits at most this long for the import progress query; the gauges are left out when it does not answer. */
const IMPORT_PROGRESS_TIMEOUT_MS = 800;

function poolGauge(registry: Registry, pools: Record<string, pg.Pool>): void {
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
}

/** `read` once per scrape, shared by the gauges' collect() calls, bounded by IMPORT_PROGRESS_TIMEOUT_MS. */
function oncePerScrape(read?: () => Promise<ImportProgress>): () => Promise<ImportProgress | undefined> {
  let progress: Promise<ImportProgress | undefined> | undefined;
  return () => {
    if (!read) return Promise.resolve(undefined);
    progress ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          read(),
          new Promise<undefined>(
            (resolve) => (timer = setTimeout(() => resolve(undefined), IMPORT_PROGRESS_TIMEOUT_MS)),
          ),
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
}

function importGauges(registry: Registry, read?: () => Promise<ImportProgress>): void {
  // Both import gauges come from one read per scrape.
  const importProgress = oncePerScrape(read);
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
}

function rowIndexGauges(registry: Registry, rowIndexes: RowIndexStatusSource): void {
  new Gauge({
    name: 'statistics_row_index_versions',
    help: 'Data set versions by the state of their in-memory row index: ready, loading, rebuilding (its engine form, from the Parquet copy), backing_off (waiting after a failed load)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const status = rowIndexes.status();
      this.set({ state: 'ready' }, status.ready);
      this.set({ state: 'loading' }, status.loading);
      this.set({ state: 'rebuilding' }, status.rebuilding);
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
    help: 'Finished row index loads by outcome: engine_form (read from its engine form), rows (built from the rows), failed, too_large',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, count] of Object.entries(rowIndexes.status().outcomes)) this.inc({ outcome }, count);
    },
  });
}

/**
 * `GET /metrics` in Prometheus text format: request counts and latency by route and status, database pool usage,
 * import progress, the statistics row indexes and the process's default metrics. One registry per app, so tests can build many apps.
 */
export const metricsPlugin = fp<MetricsOptions>(
  async (app: FastifyInstance, { pools = {}, importProgress, rowIndexes }) => {
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
    poolGauge(registry, pools);
    importGauges(registry, importProgress);
    if (rowIndexes) rowIndexGauges(registry, rowIndexes);

    // The events plugin is registered after this one: its worker is looked up at scrape time.
    new Gauge({
      name: 'webhook_attempts',
      help: 'Outgoing webhook attempts on this instance by state: in_flight (slots taken), stuck (running past WEBHOOK_TIMEOUT_MS; never expected, each attempt is bounded)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const status = app.hasDecorator('webhookDelivery') ? app.webhookDelivery?.status() : undefined;
        if (!status) return this.reset();
        this.set({ state: 'in_flight' }, status.inFlight);
        this.set({ state: 'stuck' }, status.stuck);
      },
    });

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
