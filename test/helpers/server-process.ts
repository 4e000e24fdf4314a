import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { SERVICE_PROCESS_ENV } from '../../src/process-env.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output(): string;
}

export interface ServerProcessOptions {
  /** Run the bundled server (`dist/server.mjs`, built by `npm run build`) with node, as `npm start` does. */
  built?: boolean;
  /** In a process group of its own (its pid is the group's id), as a terminal runs `npm start`. */
  detached?: boolean;
}

/**
 * Starts the server as a user would (`src/server.ts` through tsx, or the compiled one), on an embedded database in
 * `dataDir`; resolves once it listens.
 */
export function startServerProcess(
  dataDir: string,
  env: Record<string, string> = {},
  options: ServerProcessOptions = {},
): Promise<ServerProcess> {
  return new Promise((resolve, reject) => {
    const args = options.built ? ['--enable-source-maps', 'dist/server.mjs'] : ['--import', 'tsx', 'src/server.ts'];
    const child = spawn(process.execPath, args, {
      env: {
        ...process.env,
        ...(options.built ? SERVICE_PROCESS_ENV : {}),
        PORT: '0',
        DATA_DIR: dataDir,
        SEED_ON_START: 'false',
        LOG_LEVEL: 'warn',
        DATABASE_URL: '',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached ?? false,
    });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 90000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = output.match(/Service listening on (http:\/\/[^\s]+)/);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, output: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
}

/** Sends `signal` and resolves with the exit code. */
export function stopServerProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', (code) => resolve(code));
    child.kill(signal);
  });
}

/** A client of the embedded cluster in `dataDir` (its port is line 4 of postmaster.pid). */
export function embeddedClient(dataDir: string): pg.Client {
  const port = Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[3]);
  return new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: 'postgres', database: 'app' });
}
