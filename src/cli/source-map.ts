import { readFile, writeFile } from 'node:fs/promises';
import { decode, encode } from '@jridgewell/sourcemap-codec';

/**
 * The server's source map reduced to the service's own code: the mappings of bundled packages are dropped (their
 * frames in a stack trace then name the bundle's line and column, with their function names, which the bundle
 * keeps). Node decodes a map's mappings whole, on the main thread, the first time it formats a stack trace: with
 * every package's mappings that stalled every instance for a fraction of a second at its first logged error, which
 * in an outage is when it can least afford it (docs/performance.md, "Figures behind the code's choices").
 */
export async function keepOwnMappings(mapFile: string): Promise<void> {
  const map = JSON.parse(await readFile(mapFile, 'utf8')) as { sources: string[]; mappings: string };
  const own = map.sources.map((source) => !source.split(/[\\/]/).includes('node_modules'));
  // A segment is [generated column] or [generated column, source, line, column(, name)]: kept only with an own source.
  const lines = decode(map.mappings).map((segments) =>
    segments.filter((segment) => segment.length > 1 && own[segment[1]!] === true),
  );
  await writeFile(mapFile, JSON.stringify({ ...map, mappings: encode(lines) }));
}
