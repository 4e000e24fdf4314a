import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decode, encode } from '@jridgewell/sourcemap-codec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keepOwnMappings } from '../../src/cli/source-map.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'source-map-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the server bundle’s source map (npm run build)', () => {
  it('keeps the mappings of the service’s own code and drops those of bundled packages', async () => {
    const file = path.join(dir, 'server.mjs.map');
    const sources = ['../src/statistics/query/service.ts', '../node_modules/fastify/lib/route.js'];
    await writeFile(
      file,
      JSON.stringify({
        version: 3,
        sources,
        names: ['answer'],
        mappings: encode([
          [[0, 0, 10, 2], [12, 1, 40, 0], [30], [44, 0, 11, 4, 0]],
          [
            [0, 1, 7, 0],
            [6, 0, 20, 6],
          ],
        ]),
      }),
    );
    await keepOwnMappings(file);
    const map = JSON.parse(await readFile(file, 'utf8')) as SourceMapPayload;
    expect(map.sources).toEqual(sources);
    expect(map.names).toEqual(['answer']);
    expect(decode(map.mappings)).toEqual([
      [
        [0, 0, 10, 2],
        [44, 0, 11, 4, 0],
      ],
      [[6, 0, 20, 6]],
    ]);
    // Node maps a frame of the service's code to its source, as --enable-source-maps does for a stack trace.
    const entry = new SourceMap(map).findEntry(1, 6);
    expect(entry).toMatchObject({ originalSource: '../src/statistics/query/service.ts', originalLine: 20 });
  });
});
