import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildNeeded, sourceStamp, writeStamp } from '../../src/cli/build-stamp.js';

/** `npm start` builds only when the build inputs changed: the stamp logic on a small project in a temporary folder. */
let root: string;

function write(file: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
  writeFileSync(path.join(root, file), text);
}

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'build-stamp-'));
  write('package.json', '{}');
  write('src/server.ts', 'export {};\n');
  write('src/explorer/client/main.ts', 'export const a = 1;\n');
  write('migrations/0001.ts', 'export {};\n');
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A finished build: the outputs, and the stamp of the inputs it was made from. */
async function built(): Promise<string> {
  write('dist/server.mjs', '');
  write('dist/explorer/index.html', '');
  const stamp = await sourceStamp(root);
  await writeStamp(root, stamp);
  return stamp;
}

describe('build stamp', () => {
  it('asks for a build when nothing was built yet, and skips it when the sources are unchanged', async () => {
    expect(await buildNeeded(root, await sourceStamp(root))).toBe('dist/server.mjs is missing');
    await built();
    expect(await buildNeeded(root, await sourceStamp(root))).toBeUndefined();
  });

  it('asks for a build when a source changes, is added or is removed', async () => {
    await built();
    write('src/explorer/client/main.ts', 'export const a = 2;\n');
    expect(await buildNeeded(root, await sourceStamp(root))).toBe('sources changed since the last build');
    await built();
    write('src/new.ts', 'export {};\n');
    expect(await buildNeeded(root, await sourceStamp(root))).toBe('sources changed since the last build');
    await built();
    rmSync(path.join(root, 'migrations/0001.ts'));
    expect(await buildNeeded(root, await sourceStamp(root))).toBe('sources changed since the last build');
    write('package.json', '{"dependencies":{}}');
    expect(await buildNeeded(root, await sourceStamp(root))).toBe('sources changed since the last build');
  });

  it('ignores a changed modification time of unchanged contents (a fresh checkout), and files outside the inputs', async () => {
    await built();
    utimesSync(path.join(root, 'src/server.ts'), new Date(), new Date(Date.now() + 60_000));
    write('docs/notes.md', 'not an input');
    write('test/a.test.ts', 'not an input');
    expect(await buildNeeded(root, await sourceStamp(root))).toBeUndefined();
  });

  it('asks for a build when an output is gone or the stamp is missing', async () => {
    await built();
    rmSync(path.join(root, 'dist/explorer'), { recursive: true });
    expect(await buildNeeded(root, await sourceStamp(root))).toBe('dist/explorer is missing');
    await built();
    rmSync(path.join(root, 'dist/.build-stamp'));
    expect(await buildNeeded(root, await sourceStamp(root))).toBe('no build stamp');
  });
});
