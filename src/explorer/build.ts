import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants as zlib } from 'node:zlib';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);
import { projectPath } from '../paths.js';

/** One file the explorer serves, with its precompressed forms (compressible types only). */
export interface ExplorerAsset {
  body: Buffer;
  contentType: string;
  /** Content-hashed names never change content: cached for a year. */
  immutable: boolean;
  gzip?: Buffer;
  br?: Buffer;
}

export interface ExplorerAssets {
  /** The page every explorer route answers with but the query builder's. */
  html: ExplorerAsset;
  /** The query builder's page: the same, and it preloads the query page's code, which the others never load. */
  queryHtml: ExplorerAsset;
  /** Under `/assets/`: the key is the path after `/assets/` (e.g. `explorer-1a2b3c4d.js`, `images/favicon.svg`). */
  files: Map<string, ExplorerAsset>;
  /** Names of the hashed bundle files, for the benchmark and tests. */
  script: string;
  stylesheet: string;
  /** The code loaded later (`import()`): the query page, the chart, the table's CSV writer and their shared parts. */
  chunks: string[];
}

// From the project root, not this file: the compiled server (dist/) builds the same TypeScript sources.
const CLIENT_DIR = projectPath('src', 'explorer', 'client');
const GOVUK_DIR = projectPath('node_modules', 'govuk-frontend', 'dist', 'govuk');

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Compressed off the event loop (libuv's thread pool): the server answers other requests meanwhile. */
async function asset(body: Buffer, name: string, immutable: boolean): Promise<ExplorerAsset> {
  const contentType = TYPES[path.extname(name)] ?? 'application/octet-stream';
  const compressible = /^(text\/|image\/svg)/.test(contentType);
  const [gzipped, brotli] = compressible
    ? await Promise.all([
        gzipAsync(body, { level: 9 }),
        brotliAsync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 10, [zlib.BROTLI_PARAM_SIZE_HINT]: body.length } }),
      ])
    : [undefined, undefined];
  return { body, contentType, immutable, gzip: gzipped, br: brotli };
}

const hash8 = (body: Uint8Array) => createHash('sha256').update(body).digest('hex').slice(0, 8);

/**
 * The page shell: the client renders every view into `<main>`; nothing is loaded from another origin. `preload`:
 * code the page will import at once, fetched alongside the main script instead of after it.
 */
export function pageHtml(script: string, stylesheet: string, preload: string[] = []): string {
  return `<!DOCTYPE html>
<html lang="en" class="govuk-template">
<head>
<meta charset="utf-8">
<title>Explore education statistics data</title>
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="theme-color" content="#1d70b8">
<link rel="icon" sizes="48x48" href="/assets/images/favicon.ico">
<link rel="icon" sizes="any" href="/assets/images/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/${stylesheet}">
<script type="module" src="/assets/${script}"></script>
${preload.map((name) => `<link rel="modulepreload" href="/assets/${name}">\n`).join('')}</head>
<body class="govuk-template__body">
<a href="#main-content" class="govuk-skip-link">Skip to main content</a>
<header class="govuk-header" data-module="govuk-header">
<div class="govuk-header__container govuk-width-container">
<div class="govuk-header__logo"><a href="/" class="govuk-header__link govuk-header__link--homepage"><span class="govuk-header__product-name app-header__name">Education statistics</span></a></div>
</div>
</header>
<section aria-label="Service information" class="govuk-service-navigation">
<div class="govuk-width-container"><div class="govuk-service-navigation__container">
<span class="govuk-service-navigation__service-name"><a href="/" class="govuk-service-navigation__link">Explore education statistics data</a></span>
<nav aria-label="Menu" class="govuk-service-navigation__wrapper"><ul class="govuk-service-navigation__list">
<li class="govuk-service-navigation__item"><a class="govuk-service-navigation__link" href="/">Find data</a></li>
<li class="govuk-service-navigation__item"><a class="govuk-service-navigation__link" href="/docs">API reference</a></li>
</ul></nav>
</div></div>
</section>
<div class="govuk-width-container">
<main class="govuk-main-wrapper" id="main-content" tabindex="-1">
<p class="govuk-body" id="app-loading">Loading…</p>
<noscript><p class="govuk-body">This explorer needs JavaScript. The data is also available from the <a class="govuk-link" href="/docs">statistics API</a>.</p></noscript>
</main>
</div>
<footer class="govuk-footer"><div class="govuk-width-container"><div class="govuk-footer__meta"><div class="govuk-footer__meta-item govuk-footer__meta-item--grow">
<p class="govuk-body-s">Data from this service's public statistics API at <a class="govuk-footer__link" href="/docs">/v1</a>.</p>
</div></div></div></footer>
</body>
</html>
`;
}

/**
 * govuk-frontend's stylesheet set in Arial, its own fallback: the GDS Transport typeface is licensed for gov.uk
 * alone (so says the notice in its CSS), and this explorer runs wherever the service is deployed. It also spares a
 * page two font downloads, and Chromium lays out the 10,000 cells of a cross-tab page about 20 ms sooner in Arial
 * (measured). Its `@font-face` rules go; every font stack naming it keeps the rest.
 */
export function withoutGovukTypeface(css: string): string {
  return css
    .replace(/@font-face\{[^}]*GDS Transport[^}]*\}/g, '')
    .replace(/font-family:\s*"?GDS Transport"?\s*,\s*/g, 'font-family:')
    .replace(/font-family:\s*"?GDS Transport"?\s*([;}])/g, 'font-family:arial,sans-serif$1');
}

/**
 * Builds the explorer in memory: the client bundle (esbuild, minified, content-hashed; split so that each page loads
 * only its own code), one stylesheet (govuk-frontend's compiled CSS in Arial, plus the explorer's own rules), the
 * GOV.UK icons, and the page shells. Deterministic: the same sources give the same bytes.
 */
export async function buildExplorerAssets(): Promise<ExplorerAssets> {
  // Loaded only when the explorer is built (in the background after the start).
  const { build } = await import('esbuild');
  const result = await build({
    entryPoints: { explorer: path.join(CLIENT_DIR, 'main.ts'), 'explorer-style': path.join(CLIENT_DIR, 'styles.css') },
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    outdir: 'out',
    // The pages' code in chunks loaded by `import()`, named by esbuild's content hash (the entries' own names, which
    // nothing imports, get the hex hash below).
    splitting: true,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    metafile: true,
    // govuk-frontend's CSS points at /assets/images, which the plugin serves (and at /assets/fonts, taken out below).
    external: ['/assets/*'],
    logLevel: 'silent',
    legalComments: 'none',
    charset: 'utf8',
  });
  const files = new Map<string, ExplorerAsset>();
  let script = '';
  let stylesheet = '';
  const chunks: string[] = [];
  const outputs = result.metafile.outputs;
  // The metafile names files relative to the working directory; `import()` targets are entry points there too.
  const entries = new Set(
    [path.join(CLIENT_DIR, 'main.ts'), path.join(CLIENT_DIR, 'styles.css')].map((file) =>
      path.relative(process.cwd(), file),
    ),
  );
  for (const output of result.outputFiles) {
    const base = path.basename(output.path);
    const ext = path.extname(base);
    const entry = entries.has(outputs[path.relative(process.cwd(), output.path)]?.entryPoint ?? '');
    const contents = ext === '.css' ? Buffer.from(withoutGovukTypeface(output.text)) : Buffer.from(output.contents);
    const name = entry ? `${base.slice(0, -ext.length)}-${hash8(contents)}${ext}` : base;
    files.set(name, await asset(contents, name, true));
    if (!entry) chunks.push(name);
    else if (ext === '.js') script = name;
    else if (ext === '.css') stylesheet = name;
  }
  // What a page imports at once, so the browser fetches it alongside the main script: the main script's static
  // imports, and on the query page that page's chunk and its static imports too.
  const staticImports = (key: string | undefined, seen = new Set<string>()): Set<string> => {
    for (const i of key ? outputs[key]!.imports : []) {
      if (i.kind === 'import-statement' && !seen.has(i.path)) {
        seen.add(i.path);
        staticImports(i.path, seen);
      }
    }
    return seen;
  };
  const keyOf = (file: string) =>
    Object.keys(outputs).find((key) => outputs[key]!.entryPoint === path.relative(process.cwd(), file));
  const mainKey = keyOf(path.join(CLIENT_DIR, 'main.ts'));
  const queryKey = keyOf(path.join(CLIENT_DIR, 'pages', 'query.ts'));
  const mainPreload = [...staticImports(mainKey)];
  const queryPreload = queryKey
    ? [queryKey, ...staticImports(queryKey)].filter((key) => !mainPreload.includes(key))
    : [];
  const names = (keys: string[]) => keys.map((key) => path.basename(key));
  for (const folder of ['images']) {
    for (const file of await readdir(path.join(GOVUK_DIR, 'assets', folder))) {
      files.set(
        `${folder}/${file}`,
        await asset(await readFile(path.join(GOVUK_DIR, 'assets', folder, file)), file, false),
      );
    }
  }
  const html = await asset(Buffer.from(pageHtml(script, stylesheet, names(mainPreload))), 'index.html', false);
  const queryHtml = await asset(
    Buffer.from(pageHtml(script, stylesheet, names([...mainPreload, ...queryPreload]))),
    'index.html',
    false,
  );
  return { html, queryHtml, files, script, stylesheet, chunks: chunks.sort() };
}

/**
 * Where `npm run build` puts the built explorer beside the bundled server (`dist/explorer/`), read back by
 * `readExplorerAssets` at start: the server then neither runs esbuild nor compresses (0.3 s of CPU on a start).
 */
const MANIFEST = 'manifest.json';

interface ExplorerManifest {
  script: string;
  stylesheet: string;
  chunks: string[];
  /** Every file under `assets/` with its type; the page shells are `index.html` and `query.html`. */
  files: { name: string; contentType: string; immutable: boolean; compressed: boolean }[];
}

/** Writes the built explorer to `dir`: each file, its `.gz` and `.br` forms, and a manifest naming them. */
export async function writeExplorerAssets(dir: string, assets: ExplorerAssets): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  const write = async (file: string, body: ExplorerAsset) => {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), body.body);
    if (body.gzip) await writeFile(path.join(dir, `${file}.gz`), body.gzip);
    if (body.br) await writeFile(path.join(dir, `${file}.br`), body.br);
  };
  await write('index.html', assets.html);
  await write('query.html', assets.queryHtml);
  const files: ExplorerManifest['files'] = [];
  for (const [name, file] of assets.files) {
    await write(path.join('assets', name), file);
    files.push({
      name,
      contentType: file.contentType,
      immutable: file.immutable,
      compressed: Boolean(file.gzip && file.br),
    });
  }
  const manifest: ExplorerManifest = {
    script: assets.script,
    stylesheet: assets.stylesheet,
    chunks: assets.chunks,
    files,
  };
  await writeFile(path.join(dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The explorer `writeExplorerAssets` wrote to `dir`, or undefined when there is none there. */
export async function readExplorerAssets(dir: string): Promise<ExplorerAssets | undefined> {
  let manifest: ExplorerManifest;
  try {
    manifest = JSON.parse(await readFile(path.join(dir, MANIFEST), 'utf8')) as ExplorerManifest;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const read = async (
    file: string,
    contentType: string,
    immutable: boolean,
    compressed: boolean,
  ): Promise<ExplorerAsset> => {
    const [body, gzipped, brotli] = await Promise.all([
      readFile(path.join(dir, file)),
      compressed ? readFile(path.join(dir, `${file}.gz`)) : undefined,
      compressed ? readFile(path.join(dir, `${file}.br`)) : undefined,
    ]);
    return { body, contentType, immutable, gzip: gzipped, br: brotli };
  };
  // All at once: one after another, the files took 19 ms of the server's start; together 5-7 ms.
  const [html, queryHtml, ...assets] = await Promise.all([
    read('index.html', TYPES['.html']!, false, true),
    read('query.html', TYPES['.html']!, false, true),
    ...manifest.files.map((file) =>
      read(path.join('assets', file.name), file.contentType, file.immutable, file.compressed),
    ),
  ]);
  return {
    html,
    queryHtml,
    files: new Map(manifest.files.map((file, i) => [file.name, assets[i]!])),
    script: manifest.script,
    stylesheet: manifest.stylesheet,
    chunks: manifest.chunks,
  };
}
