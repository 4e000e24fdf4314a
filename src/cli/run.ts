import { ConfigError } from '../config.js';
import { AppError, ValidationError } from '../errors.js';

/** Runs a CLI body: prints a one-line error (no stack trace for expected failures) and sets the exit code. */
export async function runCli(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (error instanceof ValidationError) {
      process.stderr.write(`Error: ${error.title}\n${error.errors.map((e) => `  ${e.path}: ${e.message}`).join('\n')}\n`);
    } else if (error instanceof ConfigError || error instanceof AppError) {
      process.stderr.write(`Error: ${error.message}\n`);
    } else {
      process.stderr.write(`Error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exitCode = 1;
  }
}
