import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { existsSync } from 'node:fs';
import type { Db } from '../../db/database.js';
import type { StartupContext } from '../../startup.js';
import { ValidationError } from '../../errors.js';
import {
  importDataSetVersion,
  type ImportProgress,
  type ImportResult,
  type ImportTarget,
  type RowOrder,
} from '../import/import.js';
import { projectPath } from '../../paths.js';
import { parseVersionNumber, compareVersionNumbers } from '../standard/version-numbers.js';
import {
  anyDataSetExists,
  anyDataSetWithoutVersions,
  dataSetHasVersions,
  insertDataSetIfMissing,
  insertPublicationIfMissing,
} from './repository.js';

/** The catalogue file `seed/catalog.json` (publications, data sets, and each data set's version history). */
export interface Catalogue {
  publications: Array<{ id: string; title: string; summary: string }>;
  dataSets: Array<{
    id: string;
    publicationId: string;
    title: string;
    summary: string;
    versions: Array<{ version: string; source: string; published?: string; notes?: string; keepRows?: KeepRows }>;
  }>;
}

/** Rows kept in a version: column → one condition; all must hold. `lte` compares as text. */
export type KeepRows = Record<string, { lte?: string; notIn?: string[] }>;

/** The fixture of the reference's own tests: imported first so its public ids are the reference's (dP0Zw = 1…). */
export const FIXTURE_SOURCE = 'absence-school';

export const DEFAULT_SEED_DIR = projectPath('seed');

/**
 * What seed/catalog.json holds, for the messages and docs that state it: test/docs/facts.test.ts counts the rows the
 * seed keeps from the files (keepRows applied) and checks this and every document that states it.
 */
export const CATALOGUE_FACTS = { publications: 5, dataSets: 6, versions: 8, rows: 928_553 } as const;

export interface SeedOptions {
  log?: (message: string) => void;
  /** Folder with catalog.json and the data folders (default: the project's seed/). */
  seedDir?: string;
  /** Only these data sets (with their publications). */
  dataSetIds?: string[];
  /** Progress of each import (rows so far), e.g. for a progress bar. */
  onProgress?: (dataSetTitle: string, version: string, progress: ImportProgress) => void;
  /** Also write each version's rows as a table (the SQL translation's reference: tests). */
  rowTables?: boolean;
}

export interface SeedResult {
  publications: number;
  dataSets: number;
  versions: ImportResult[];
  seconds: number;
}

export async function readCatalogue(seedDir = DEFAULT_SEED_DIR): Promise<Catalogue> {
  return JSON.parse(await readFile(path.join(seedDir, 'catalog.json'), 'utf8')) as Catalogue;
}

export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** True when no data set exists yet (the server seeds then, when SEED_ON_START is on). */
export async function isCatalogueEmpty(db: Db): Promise<boolean> {
  return !(await anyDataSetExists(db));
}

/** The data and meta files of a seed folder. */
export function sourceFiles(seedDir: string, source: string): { dataPath: string; metaPath: string } {
  const folder = path.join(seedDir, source);
  const gz = path.join(folder, 'data.csv.gz');
  return { dataPath: existsSync(gz) ? gz : path.join(folder, 'data.csv'), metaPath: path.join(folder, 'meta.csv') };
}

/**
 * Imports the catalogue: publications, data sets and every version of each data set in version order, each built
 * from its source folder with its keepRows rules, so later versions carry computed changes. Data sets that already
 * have versions are skipped, so a re-run completes an interrupted seed without duplicating anything.
 */
export async function seedCatalogue(target: ImportTarget & { db: Db }, options: SeedOptions = {}): Promise<SeedResult> {
  const started = Date.now();
  const log = options.log ?? (() => {});
  const seedDir = options.seedDir ?? DEFAULT_SEED_DIR;
  const catalogue = await readCatalogue(seedDir);
  const dataSets = catalogue.dataSets
    .filter((d) => !options.dataSetIds || options.dataSetIds.includes(d.id))
    // The fixture first, so its public ids are those the reference's tests name.
    .sort(
      (a, b) =>
        Number(b.versions.some((v) => v.source === FIXTURE_SOURCE)) -
        Number(a.versions.some((v) => v.source === FIXTURE_SOURCE)),
    );
  const publicationIds = new Set(dataSets.map((d) => d.publicationId));
  const { db } = target;
  const publications = catalogue.publications.filter((p) => publicationIds.has(p.id));
  for (const publication of publications) {
    await insertPublicationIfMissing(db, {
      id: publication.id,
      title: publication.title,
      slug: slugify(publication.title),
      summary: publication.summary,
    });
  }
  const versions: ImportResult[] = [];
  for (const dataSet of dataSets) {
    await insertDataSetIfMissing(db, {
      id: dataSet.id,
      publication_id: dataSet.publicationId,
      title: dataSet.title,
      summary: dataSet.summary,
      status: 'Draft',
      superseding_data_set_id: null,
    });
    if (await dataSetHasVersions(db, dataSet.id)) {
      log(`${dataSet.title}: already has versions, skipped`);
      continue;
    }
    const ordered = [...dataSet.versions].sort((a, b) =>
      compareVersionNumbers(parseVersionNumber(a.version)!, parseVersionNumber(b.version)!),
    );
    for (const entry of ordered) {
      const files = sourceFiles(seedDir, entry.source);
      const keepRows = entry.keepRows ?? {};
      let tempDir: string | undefined;
      try {
        let dataPath = files.dataPath;
        if (Object.keys(keepRows).length > 0) {
          tempDir = await mkdtemp(path.join(tmpdir(), 'stats-seed-'));
          dataPath = path.join(tempDir, 'data.csv.gz');
          await writeKeptRows(files.dataPath, dataPath, keepRows);
        }
        const rowOrder: RowOrder = entry.source === FIXTURE_SOURCE ? 'reference-fixture' : 'file';
        const result = await importDataSetVersion(target, {
          dataSetId: dataSet.id,
          version: entry.version,
          dataPath,
          metaPath: files.metaPath,
          notes: entry.notes ?? '',
          publishedAt: entry.published,
          rowOrder,
          rowTable: options.rowTables,
          onProgress: options.onProgress && ((p) => options.onProgress!(dataSet.title, entry.version, p)),
        });
        versions.push(result);
        log(
          `${dataSet.title} v${result.version}: ${result.rows.toLocaleString('en-GB')} rows in ${result.seconds.toFixed(1)} s` +
            (result.majorChanges + result.minorChanges > 0
              ? ` (${result.majorChanges} major, ${result.minorChanges} minor changes)`
              : ''),
        );
      } finally {
        if (tempDir) await rm(tempDir, { recursive: true, force: true });
      }
    }
  }
  return {
    publications: publications.length,
    dataSets: dataSets.length,
    versions,
    seconds: (Date.now() - started) / 1000,
  };
}

/**
 * Writes the rows of `source` that pass `keepRows` to a gzipped CSV, line by line (the header and kept lines
 * verbatim). Seed files have no line breaks inside quoted fields, which this relies on; quoted cells are unquoted
 * for the comparison.
 */
export async function writeKeptRows(sourcePath: string, targetPath: string, keepRows: KeepRows): Promise<number> {
  const input = createReadStream(sourcePath);
  const text = sourcePath.endsWith('.gz') ? input.pipe(createGunzip()) : input;
  text.setEncoding('utf8');
  const gzip = createGzip();
  const output = gzip.pipe(createWriteStream(targetPath));
  let header: string[] | undefined;
  let conditions: Array<{ index: number; lte?: string; notIn?: Set<string> }> = [];
  let pending = '';
  let kept = 0;
  const write = async (chunk: string) => {
    if (!gzip.write(chunk)) await once(gzip, 'drain');
  };
  const handle = async (line: string) => {
    if (line.replace(/\r$/, '') === '') return;
    if (!header) {
      header = splitCsvLine(line.replace(/^\uFEFF/, '').replace(/\r$/, ''));
      conditions = Object.entries(keepRows).map(([column, rule]) => {
        const index = header!.indexOf(column);
        if (index === -1)
          throw new ValidationError([
            { path: `keepRows.${column}`, message: `The source ${sourcePath} has no column "${column}".` },
          ]);
        return { index, lte: rule.lte, notIn: rule.notIn && new Set(rule.notIn) };
      });
      await write(`${line}\n`);
      return;
    }
    const cells = splitCsvLine(line.replace(/\r$/, ''));
    for (const c of conditions) {
      const value = cells[c.index] ?? '';
      if (c.lte !== undefined && !(value <= c.lte)) return;
      if (c.notIn && c.notIn.has(value)) return;
    }
    kept++;
    await write(`${line}\n`);
  };
  for await (const chunk of text) {
    const lines = (pending + (chunk as string)).split('\n');
    pending = lines.pop()!;
    for (const line of lines) await handle(line);
  }
  if (pending) await handle(pending);
  gzip.end();
  await finished(output);
  return kept;
}

function splitCsvLine(line: string): string[] {
  if (!line.includes('"')) return line.split(',');
  const cells: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let value = '';
      let j = i + 1;
      for (;;) {
        const q = line.indexOf('"', j);
        if (q === -1) {
          value += line.slice(j);
          j = line.length;
          break;
        }
        if (line[q + 1] === '"') {
          value += line.slice(j, q + 1);
          j = q + 2;
          continue;
        }
        value += line.slice(j, q);
        j = q + 1;
        break;
      }
      cells.push(value);
      i = j + 1;
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      cells.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return cells;
}

/**
 * True when the statistics catalogue should be seeded: no data set exists yet, or a catalogue data set exists
 * without any version (a seed that was interrupted; each version import is atomic, so it resumes cleanly).
 */
export async function catalogueSeedPending(db: Db, seedDir = DEFAULT_SEED_DIR): Promise<boolean> {
  if (await isCatalogueEmpty(db)) return true;
  const ids = (await readCatalogue(seedDir)).dataSets.map((d) => d.id);
  return anyDataSetWithoutVersions(db, ids);
}

/** Start-up task: seeds the catalogue when it is empty (or half-seeded) and SEED_ON_START is true, printing progress. */
export async function seedCatalogueOnStart(context: StartupContext, seedDir = DEFAULT_SEED_DIR): Promise<void> {
  if (!context.config.SEED_ON_START) return;
  const { primary } = context.runtime;
  if (!(await catalogueSeedPending(primary.db, seedDir))) return;
  const { dataSets, versions, rows } = CATALOGUE_FACTS;
  context.log(
    `Seeding the statistics catalogue from seed/catalog.json (${dataSets} data sets, ${versions} versions, ${rows.toLocaleString('en-GB')} rows; this takes under a minute) ...`,
  );
  const result = await seedCatalogue(primary, { seedDir, log: (message) => context.log(`  ${message}`) });
  context.log(
    `Seeded ${result.dataSets} data sets (${result.versions.length} versions) in ${result.seconds.toFixed(1)} s.`,
  );
}
