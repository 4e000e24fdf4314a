import path from 'node:path';
import { buildApp } from './app.js';
import { readExplorerAssets } from './explorer/build.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openRuntime, type Runtime } from './runtime.js';
import { runStartupTasks } from './startup.js';

/** Process entry: load config, open the database, build the app, listen; shut down gracefully on signals. */
async function main() {
  let config: Config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }

  const say = (message: string) => process.stdout.write(`${message}\n`);
  // Lost connections and missed deadlines are logged (as warnings once the app's logger exists), never fatal.
  let databaseError = (error: Error): void => {
    process.stderr.write(`database connection error: ${error.message}\n`);
  };
  let runtime: Runtime;
  try {
    if (!config.DATABASE_URL) say(`Starting the embedded PostgreSQL in ${config.DATA_DIR}/postgres ...`);
    runtime = await openRuntime(config, {
      log: config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace' ? say : undefined,
      notice: say,
      onDatabaseError: (error) => databaseError(error),
    });
  } catch (error) {
    process.stderr.write(`Could not open the database: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }

  await runStartupTasks({ config, runtime, log: say });
  const app = await buildApp(config, {
    // Beside the bundled server (dist/server.mjs) when `npm run build` made it; else built in memory.
    explorerAssets: await readExplorerAssets(path.join(import.meta.dirname, 'explorer')),
    db: runtime.primary.db,
    readDb: runtime.read.db,
    readRouting: runtime.readRouting,
    healthDbs: runtime.health.map((h) => h.db),
    pools: runtime.pools(),
    warmUpBeforeReady: true,
  });
  databaseError = (error) => app.log.warn({ err: error.message }, 'database connection error');

  let closing = false;
  // SIGTERM (a deploy, an orchestrator) drains first: /health/ready answers 503 for SHUTDOWN_DRAIN_MS while requests
  // are still served, so the balancer stops sending before the listener closes and no request is refused. SIGINT (a
  // terminal's Ctrl-C) closes at once.
  const shutdown = async (signal: string, drainMs: number) => {
    if (closing) return;
    closing = true;
    const forceExit = setTimeout(() => {
      process.stderr.write('Shutdown took too long; exiting.\n');
      process.exit(1);
    }, drainMs + config.SHUTDOWN_TIMEOUT_MS);
    forceExit.unref();
    try {
      if (drainMs > 0) {
        app.beginDrain();
        app.log.info({ signal, drainMs }, 'draining: not ready, still serving');
        await new Promise((resolve) => setTimeout(resolve, drainMs));
      }
      app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
      await app.close(); // stops accepting, waits for in-flight requests
      await runtime.close(); // closes the pools, stops the embedded database
      say('Stopped.');
      process.exit(0);
    } catch (error) {
      process.stderr.write(`Error during shutdown: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM', config.SHUTDOWN_DRAIN_MS));
  process.on('SIGINT', () => void shutdown('SIGINT', 0));

  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    process.stderr.write(
      `Could not listen on ${config.HOST}:${config.PORT}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    await runtime.close();
    process.exit(1);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const base = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${port}`;
  say(`Service listening on ${base}  (warming up: /health/ready answers 503 until the service says it is ready)`);
  const started = performance.now();
  await app.warmedUp;
  if (!closing)
    say(
      `Service ready on ${base} after ${((performance.now() - started) / 1000).toFixed(1)} s  (API reference: ${base}/docs, health: ${base}/health/ready)`,
    );
}

void main();
