import type { Config } from './config.js';
import type { Runtime } from './runtime.js';
import { registerDemoStartupTask } from './register/startup.js';
import { seedCatalogueOnStart } from './statistics/seed/service.js';

export interface StartupContext {
  config: Config;
  runtime: Runtime;
  log: (message: string) => void;
}

/**
 * Work done once before the server listens: seeding an empty embedded database with the statistics catalogue,
 * creating the register's demo provider. Each API adds its task here.
 */
export const startupTasks: Array<(context: StartupContext) => Promise<void>> = [];

startupTasks.push(seedCatalogueOnStart);
startupTasks.push(registerDemoStartupTask);

export async function runStartupTasks(context: StartupContext): Promise<void> {
  for (const task of startupTasks) await task(context);
}
