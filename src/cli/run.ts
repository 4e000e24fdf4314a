import { ValidationError } from '../errors.js';

/**
 * Runs a CLI body: any failure prints `Error: <message>` without a stack trace (validation problems list their fields below it;
 * the stack trace only with LOG_LEVEL=debug or trace) and the process exits 1. The exit code is set explicitly at
 * the end, after the database (and an embedded PostgreSQL the CLI started) has been closed by the body.
 */
export async function runCli(body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (error) {
    if (error instanceof ValidationError) {
      process.stderr.write(`Error: ${error.title}\n${error.errors.map((e) => `  ${e.path}: ${e.message}`).join('\n')}\n`);
    } else {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`Error: ${message}\n`);
      if (error instanceof Error && /^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '')) process.stderr.write(`${error.stack}\n`);
    }
    process.exitCode = 1;
  }
}
