import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { constants as zlibConstants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../../src/app.js';
import { loadConfig } from '../../../src/config.js';
import { RowIndexBuilder, RowIndexStore, type RowIndex } from '../../../src/statistics/query/engine/index.js';
import {
  checkChecksum,
  decodeRowIndex,
  deflateRowIndex,
  FORMAT,
  pieceChunks,
  readHeader,
  type DeflatedRowIndex,
  type StoredHeader,
} from '../../../src/statistics/storage/engine-form.js';
import { rebuildStorage } from '../../../src/statistics/storage/rebuild.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { ABSENCE_SCHOOL, createDataSet, importFixtureVersion } from '../../helpers/statistics.js';

/**
 * The engine form (src/statistics/storage/engine-form.ts) is a cache: a committed fixture pins its current format,
 * and an engine form of another format, missing or corrupt is rebuilt (from the version's Parquet copy, or its row
 * table) without a re-import, answering exactly as before — never from bytes that fail their checksums.
 */

const FIXTURE = path.resolve('test/fixtures/engine-form-v5.json');

/** A small index with every kind of column: ids not consecutive, three levels, a 300-code facet, numbers, floats and texts. */
function fixtureIndex(): RowIndex {
  const n = 40;
  const builder = new RowIndexBuilder(n, ['l_la', 'f1'], ['i1', 'i2']);
  for (let p = 0; p < n; p++) {
    const period = 3 - Math.floor(p / 15);
    builder.add(
      p * 3 + (p % 2),
      period,
      ['NAT', 'REG', 'LA'][p % 3]!,
      [p % 5, 1 + ((p * 37) % 300)],
      [p % 7 === 0 ? 'c' : String(p * 1.5), p % 4 === 0 ? '1.50' : String(p * 1e21)],
    );
  }
  return builder.finish();
}

/** A deflated engine form back into its index, each column checked against its checksum (as a load does). */
function inflateStored(parts: DeflatedRowIndex, rowsTable: string): RowIndex {
  const inflated = { facets: [] as Buffer[], values: [] as Buffer[] };
  for (const { part, chunks } of parts) {
    const head = inflateRawSync(chunks[0]!);
    const header = readHeader<StoredHeader>(head, rowsTable);
    const columns = pieceChunks(header).map(({ first, count }, i) => {
      const bytes = inflateRawSync(Buffer.concat(chunks.slice(first, first + count)));
      checkChecksum(bytes, header.pieceChecksums[i], `piece ${i}`);
      return bytes;
    });
    inflated[part] = [head, ...columns];
  }
  return decodeRowIndex(inflated, rowsTable);
}

describe('the engine form, format 5: a committed fixture', () => {
  it('decodes to the index it was made from, and the code still writes it byte for byte', async () => {
    const index = fixtureIndex();
    const written = await deflateRowIndex('v1', index, 16);
    const encoded = written.map(({ part, chunks }) => ({ part, chunks: chunks.map((p) => p.toString('base64')) }));
    if (process.env.UPDATE_FIXTURES === '1' || !existsSync(FIXTURE))
      writeFileSync(FIXTURE, `${JSON.stringify({ format: FORMAT, parts: encoded }, null, 1)}\n`);
    const fixture = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
      format: number;
      parts: Array<{ part: 'facets' | 'values'; chunks: string[] }>;
    };
    // A change of the layout must bump FORMAT (engine forms of the old one are then rebuilt) and this fixture with it.
    expect(fixture.format).toBe(FORMAT);
    expect(encoded).toEqual(fixture.parts);
    const committed: DeflatedRowIndex = fixture.parts.map(({ part, chunks }) => ({
      part,
      chunks: chunks.map((p) => Buffer.from(p, 'base64')),
    }));
    const decoded = inflateStored(committed, 'v1');
    expect(decoded.size).toBe(40);
    expect(decoded.stored).toEqual(index.stored);
    expect(decoded.indicatorText('i1', 0)).toBe('c');
    expect(decoded.indicatorText('i2', 4)).toBe('1.50');
    expect(decoded.indicatorText('i2', 5)).toBe(String(5 * 1e21));
  });

  it('refuses a column whose bytes changed (its checksum)', async () => {
    const written = await deflateRowIndex('v1', fixtureIndex(), 16);
    const values = written.find((p) => p.part === 'values')!;
    const header = readHeader<StoredHeader>(inflateRawSync(values.chunks[0]!), 'v1');
    const { first } = pieceChunks(header)[0]!;
    const original = inflateRawSync(values.chunks[first]!, { finishFlush: zlibConstants.Z_SYNC_FLUSH });
    const changed = Buffer.from(original);
    changed[0] = changed[0]! ^ 1;
    values.chunks[first] = deflateRawSync(changed, { finishFlush: zlibConstants.Z_FULL_FLUSH });
    expect(() => inflateStored(written, 'v1')).toThrow(/checksum/);
  });
});

describe('the engine form as a cache of the copy of record', () => {
  let database: TestDatabase;
  let dataSetIds: string[];
  const QUERIES = [
    {},
    {
      criteria: { geographicLevels: { eq: 'LA' } },
      sorts: [{ field: 'location|LA', direction: 'Desc' }],
      pageSize: 50,
    },
    {
      criteria: {
        or: [
          { timePeriods: { gte: { period: '2022/2023', code: 'AY' } } },
          { geographicLevels: { in: ['NAT', 'REG'] } },
        ],
      },
      page: 2,
      pageSize: 7,
    },
    { criteria: { not: { geographicLevels: { eq: 'SCH' } } }, sorts: [{ field: 'timePeriod', direction: 'Asc' }] },
  ];

  beforeAll(async () => {
    database = await createTestDatabase();
    // The seeded fixture (with its row table, the SQL engine's) and the same files imported as the import does by
    // default: no row table, the engine form and the Parquet copy alone.
    const other = await createDataSet(database.db, { title: 'No row table' });
    await importFixtureVersion(database, { dataSetId: other, version: '1.0' });
    dataSetIds = [ABSENCE_SCHOOL.dataSetId, other];
  });
  afterAll(async () => {
    await database?.drop();
  });

  async function withApp<T>(
    options: { index: boolean },
    work: (app: FastifyInstance, store: RowIndexStore) => Promise<T>,
  ): Promise<T> {
    const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, RATE_LIMIT_STATISTICS_MAX: '100000' });
    const store = new RowIndexStore({ engineFormDb: database.db, enabled: options.index, retryAfterMs: 50 });
    const app = await buildApp(config, {
      db: database.db,
      pools: { primary: database.pool },
      logger: false,
      rowIndexes: store,
    });
    try {
      return await work(app, store);
    } finally {
      // The loads the queries started finish before the next step changes what is stored (they outlive the app).
      await vi.waitFor(() => expect(store.buildsInProgress).toBe(0), { timeout: 30000, interval: 50 });
      await app.close();
    }
  }

  /** Every query of every version: status and body (JSON pages and the CSV export). */
  async function answers(app: FastifyInstance): Promise<string[]> {
    const out: string[] = [];
    for (const id of dataSetIds) {
      for (const body of QUERIES) {
        const page = await app.inject({ method: 'POST', url: `/v1/data-sets/${id}/query`, payload: body });
        out.push(`${page.statusCode} ${page.body}`);
      }
      const csv = await app.inject({
        method: 'POST',
        url: `/v1/data-sets/${id}/query`,
        payload: QUERIES[1]!,
        headers: { accept: 'text/csv' },
      });
      out.push(`${csv.statusCode} ${csv.body}`);
    }
    return out;
  }

  /** The stored headers' formats, by part, of every version with data. */
  async function storedFormats(): Promise<number[]> {
    const rows = await database.db
      .selectFrom('version_row_index_chunks')
      .select(['bytes'])
      .where('chunk', '=', 0)
      .execute();
    return rows.map(
      (r) =>
        readHeader<StoredHeader>(
          inflateRawSync(r.bytes),
          JSON.parse(inflateRawSync(r.bytes).toString('utf8', 8, 8 + inflateRawSync(r.bytes).readUInt32LE(0)))
            .rowsTable,
        ).format,
    );
  }

  /** Rewrites every stored header as if written by a release of another format. */
  async function bumpStoredFormats(): Promise<void> {
    const heads = await database.db
      .selectFrom('version_row_index_chunks')
      .select(['rows_table', 'part', 'bytes'])
      .where('chunk', '=', 0)
      .execute();
    for (const head of heads) {
      const bytes = inflateRawSync(head.bytes);
      const json = JSON.parse(bytes.toString('utf8', 8, 8 + bytes.readUInt32LE(0))) as { format: number };
      const text = Buffer.from(JSON.stringify({ ...json, format: FORMAT + 1 }));
      const rewritten = Buffer.alloc(8 + text.length + ((8 - (text.length % 8)) % 8));
      rewritten.writeUInt32LE(text.length, 0);
      text.copy(rewritten, 8);
      await database.db
        .updateTable('version_row_index_chunks')
        .set({ bytes: deflateRawSync(rewritten) })
        .where('rows_table', '=', head.rows_table)
        .where('part', '=', head.part)
        .where('chunk', '=', 0)
        .execute();
    }
  }

  it('a format change: every version answers identically from a rebuilt form, without a re-import', async () => {
    const before = await withApp({ index: true }, (app) => answers(app));
    expect(before.every((a) => a.startsWith('200 '))).toBe(true);
    await bumpStoredFormats();
    await withApp({ index: true }, async (app, store) => {
      expect(await answers(app)).toEqual(before);
      // Rebuilt in the background (queries answered meanwhile from what is correct), and stored again.
      await vi.waitFor(
        () =>
          expect(store.status().outcomes.parquet + store.status().outcomes.rows).toBeGreaterThanOrEqual(
            dataSetIds.length,
          ),
        {
          timeout: 30000,
          interval: 100,
        },
      );
    });
    // Stored again at the code's format, for every other instance.
    expect(await storedFormats()).toEqual(expect.arrayContaining([FORMAT]));
    expect((await storedFormats()).every((f) => f === FORMAT)).toBe(true);
    // And the cold path (no index in memory) reads the rebuilt forms alike.
    await withApp({ index: false }, async (app) => expect(await answers(app)).toEqual(before));
  });

  it('a deleted engine form: rebuilt by the first query, and by `rebuild-storage` on demand', async () => {
    const before = await withApp({ index: true }, (app) => answers(app));
    await database.db.deleteFrom('version_row_index_chunks').execute();
    await withApp({ index: true }, async (app) => expect(await answers(app)).toEqual(before));
    await database.db.deleteFrom('version_row_index_chunks').execute();
    const rebuilt: number[] = [];
    expect(await rebuildStorage(database.db, {}, 60000, (v) => rebuilt.push(v.id))).toBe(dataSetIds.length);
    expect(await rebuildStorage(database.db, {}, 60000, () => undefined)).toBe(0);
    await withApp({ index: false }, async (app) => expect(await answers(app)).toEqual(before));
  });

  it('a corrupt slice is detected by its checksum and rebuilt, never served', async () => {
    const before = await withApp({ index: true }, (app) => answers(app));
    const { rows } = await sql<{
      rows_table: string;
    }>`SELECT rows_table FROM data_set_versions WHERE data_set_id = ${dataSetIds[1]!}`.execute(database.db);
    const rowsTable = rows[0]!.rows_table;
    // The first values slice, changed into a valid deflate stream of other bytes of the same length.
    const slice = await database.db
      .selectFrom('version_row_index_chunks')
      .select('bytes')
      .where('rows_table', '=', rowsTable)
      .where('part', '=', 'values')
      .where('chunk', '=', 1)
      .executeTakeFirstOrThrow();
    const changed = Buffer.from(inflateRawSync(slice.bytes, { finishFlush: zlibConstants.Z_SYNC_FLUSH }));
    for (let i = 0; i < changed.length; i += 4) changed[i] = changed[i]! ^ 0x55;
    const corrupt = deflateRawSync(changed, { finishFlush: zlibConstants.Z_FULL_FLUSH });
    const setCorrupt = () =>
      database.db
        .updateTable('version_row_index_chunks')
        .set({ bytes: corrupt })
        .where('rows_table', '=', rowsTable)
        .where('part', '=', 'values')
        .where('chunk', '=', 1)
        .execute();
    await setCorrupt();

    // The cold path: the query reading it answers 503, never the changed values; the form is rebuilt meanwhile.
    await withApp({ index: false }, async (app) => {
      const first = await app.inject({ method: 'POST', url: `/v1/data-sets/${dataSetIds[1]}/query`, payload: {} });
      expect(first.statusCode).toBe(503);
      await vi.waitFor(async () => expect(await answers(app)).toEqual(before), { timeout: 30000, interval: 200 });
    });
    const repaired = await database.db
      .selectFrom('version_row_index_chunks')
      .select('bytes')
      .where('rows_table', '=', rowsTable)
      .where('part', '=', 'values')
      .where('chunk', '=', 1)
      .executeTakeFirstOrThrow();
    expect(repaired.bytes.equals(corrupt)).toBe(false);

    // Loading the index: the values fail their checksum, the form is rebuilt, and every answer is the old one.
    await setCorrupt();
    await withApp({ index: true }, async (app, store) => {
      await vi.waitFor(async () => expect(await answers(app)).toEqual(before), { timeout: 30000, interval: 200 });
      expect(store.status().outcomes.parquet + store.status().outcomes.rows).toBeGreaterThanOrEqual(1);
    });
  });
});
