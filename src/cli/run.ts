import { parseArgs, type ParseArgsConfig } from 'node:util';
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
      process.stderr.write(
        `Error: ${error.title}\n${error.errors.map((e) => `  ${e.path}: ${e.message}`).join('\n')}\n`,
      );
    } else {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`Error: ${message}\n`);
      if (error instanceof Error && /^(debug|trace)$/.test(process.env.LOG_LEVEL ?? ''))
        process.stderr.write(`${error.stack}\n`);
    }
    process.exitCode = 1;
  }
}

/** parseArgs with its errors (unknown or malformed options) reported as usage errors, not stack traces. */
export function parseArguments<T extends ParseArgsConfig>(config: T, usage: string): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (error) {
    throw new ValidationError(
      [{ path: 'arguments', message: `${(error as Error).message}\n\n${usage}` }],
      'Invalid arguments.',
    );
  }
}

/** A usage error naming the options that must be given and are not (nothing when all are). */
export function requireOptions(values: Record<string, unknown>, names: readonly string[], usage: string): void {
  const missing = names.filter((n) => values[n] === undefined || values[n] === '');
  if (missing.length > 0) {
    throw new ValidationError(
      [{ path: 'arguments', message: `${missing.map((n) => `--${n}`).join(', ')} required.\n\n${usage}` }],
      'Missing arguments.',
    );
  }
}
