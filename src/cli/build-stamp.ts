/**
 * Whether the built service in dist/ is current: a stamp (one SHA-256 over the path and bytes of every build input)
 * is written beside the output after a build, and `npm start` builds again only when the inputs' stamp differs or an
 * output is missing. Contents, not modification times: a checkout or a copy changes the times of unchanged files.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** What the build reads (tsc's tsconfig.build.json includes, the bundler's and explorer's inputs, the dependencies). */
export const BUILD_INPUTS = [
  'src',
  'migrations',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
/** What `npm start` needs from the build. */
export const BUILD_OUTPUTS = ['dist/server.mjs', 'dist/explorer'];
export const STAMP_FILE = 'dist/.build-stamp';

async function filesUnder(root: string, relative: string): Promise<string[]> {
  const full = path.join(root, relative);
  if (!existsSync(full)) return [];
  const entries = await readdir(full, { withFileTypes: true, recursive: true }).catch(() => undefined);
  if (!entries) return [relative];
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

/** The stamp of the build inputs under `root`: their paths (sorted) and contents in one hash. */
export async function sourceStamp(root: string, inputs: readonly string[] = BUILD_INPUTS): Promise<string> {
  const files = (await Promise.all(inputs.map((input) => filesUnder(root, input)))).flat().sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file.split(path.sep).join('/')}\0`);
    hash.update(await readFile(path.join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Why a build is needed under `root` (an output missing, no stamp, changed inputs), or undefined when it is not. */
export async function buildNeeded(
  root: string,
  stamp: string,
  outputs: readonly string[] = BUILD_OUTPUTS,
): Promise<string | undefined> {
  const missing = outputs.find((output) => !existsSync(path.join(root, output)));
  if (missing) return `${missing} is missing`;
  const previous = await readFile(path.join(root, STAMP_FILE), 'utf8').catch(() => undefined);
  if (previous === undefined) return 'no build stamp';
  return previous.trim() === stamp ? undefined : 'sources changed since the last build';
}

export async function writeStamp(root: string, stamp: string): Promise<void> {
  await writeFile(path.join(root, STAMP_FILE), `${stamp}\n`);
}
