/**
 * Facts the documents state, each from one source: the seeded catalogue's size (CATALOGUE_FACTS, counted here from
 * the seed files with their keepRows rules), the supported Node versions (package.json `engines`), and the test
 * suite's sizes and durations (README, "Tests": the fuzz default and the measured `npm test` time).
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  CATALOGUE_FACTS,
  DEFAULT_SEED_DIR,
  readCatalogue,
  sourceFiles,
  writeKeptRows,
} from '../../src/statistics/seed/service.js';

const DOCUMENTS = ['README.md', ...(await readdir('docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const text = Object.fromEntries(
  await Promise.all(DOCUMENTS.map(async (file) => [file, await readFile(file, 'utf8')] as const)),
);

async function dataLines(file: string): Promise<number> {
  const input = createReadStream(file);
  const lines = createInterface({
    input: file.endsWith('.gz') ? input.pipe(createGunzip()) : input,
    crlfDelay: Infinity,
  });
  let count = -1; // the header
  for await (const line of lines) if (line !== '') count += 1;
  return count;
}

describe('the seeded catalogue', () => {
  it('holds what CATALOGUE_FACTS says, rows counted from the seed files as the seed keeps them', {
    timeout: 120_000,
  }, async () => {
    const catalogue = await readCatalogue();
    const versions = catalogue.dataSets.flatMap((d) => d.versions);
    expect({
      publications: catalogue.publications.length,
      dataSets: catalogue.dataSets.length,
      versions: versions.length,
    }).toEqual({
      publications: CATALOGUE_FACTS.publications,
      dataSets: CATALOGUE_FACTS.dataSets,
      versions: CATALOGUE_FACTS.versions,
    });
    const scratch = await mkdtemp(path.join(tmpdir(), 'catalogue-facts-'));
    let rows = 0;
    try {
      for (const [index, version] of versions.entries()) {
        const { dataPath } = sourceFiles(DEFAULT_SEED_DIR, version.source);
        rows +=
          version.keepRows && Object.keys(version.keepRows).length > 0
            ? await writeKeptRows(dataPath, path.join(scratch, `${index}.csv.gz`), version.keepRows)
            : await dataLines(dataPath);
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    expect(rows).toBe(CATALOGUE_FACTS.rows);
  });

  it('every document that states its size states these figures', () => {
    const stated = CATALOGUE_FACTS.rows.toLocaleString('en-GB');
    expect(text['README.md']).toContain(
      `${stated} rows in ${CATALOGUE_FACTS.versions} versions of ${CATALOGUE_FACTS.dataSets} data sets`,
    );
    expect(text['README.md']).toContain(
      `${CATALOGUE_FACTS.publications} publications, ${CATALOGUE_FACTS.dataSets} data sets, ${CATALOGUE_FACTS.versions} versions, ${stated} rows`,
    );
    for (const [file, content] of Object.entries(text)) {
      expect(content, file).not.toMatch(/about (700|930),000 rows|about a million rows/);
      for (const match of content.matchAll(/(\d{3},\d{3}) rows/g)) {
        // Counts of the whole catalogue only; a data set's own rows are other figures.
        if (
          /catalogue|seed/i.test(content.slice(Math.max(0, match.index! - 300), match.index! + 40)) &&
          Number(match[1]!.replace(',', '')) > 900_000
        ) {
          expect(match[1], `${file}: "${content.slice(match.index! - 60, match.index! + 20)}"`).toBe(stated);
        }
      }
    }
  });
});

describe('supported Node versions', () => {
  it('the README states package.json `engines`, and the Node running the tests is one of them', async () => {
    const { engines } = JSON.parse(await readFile('package.json', 'utf8')) as { engines: { node: string } };
    expect(engines.node).toBe('^20.19.0 || >=22.12.0');
    expect(text['README.md']).toContain(`Node.js \`${engines.node}\` is required`);
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    expect(
      (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22,
      `Node ${process.versions.node}`,
    ).toBe(true);
    // Why 20.19 and 22.12: Fastify's inject needs cookie 2, an ES module it loads with require().
    expect(process.features.require_module).toBe(true);
    const cookie = JSON.parse(await readFile('node_modules/cookie/package.json', 'utf8')) as {
      type: string;
      version: string;
    };
    expect(cookie.type).toBe('module');
    expect(text['README.md']).toContain(`cookie@${cookie.version}`);
  });
});
