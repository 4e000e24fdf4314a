import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { deflateRaw, inflateRaw, constants as zlibConstants } from 'node:zlib';
import pg from 'pg';
import Cursor from 'pg-cursor';
import { to as copyTo } from 'pg-copy-streams';
import { startEmbeddedPostgres } from '../src/db/embedded.js';

/**
 * `npx tsx bench/index-load.ts [--data-dir .data/bench-scale]`: how fast an instance can get a version's query
 * structures (the typed arrays of the row index: row ids, level, time period, locations and filters as integers,
 * indicator values), measured on every version of the database `npm run bench:scale` leaves behind:
 *
 * 1. `cursor`: rows through a cursor as objects, 10,000 at a time (how the row index was built until now);
 * 2. `copy-binary`: one `COPY (SELECT …) TO STDOUT (FORMAT binary)`, parsed straight into the arrays;
 * 3. `snapshot`: the arrays stored once as deflate-compressed bytea chunks and read back (write time, size, read).
 *
 * Writes bench/results/index-load.json. The choice and its reasons are in docs/architecture.md.
 */
const root = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: { 'data-dir': { type: 'string', default: '.data/bench-scale' } },
  strict: true,
});
const embedded = await startEmbeddedPostgres(path.resolve(values['data-dir']), { database: 'postgres' });
const url = Object.assign(new URL(embedded.url), { pathname: '/bench_scale' }).toString();
const client = new pg.Client({ connectionString: url });
await client.connect();
await client.query('SET statement_timeout = 0');

interface Arrays {
  ints: Map<string, Int32Array>;
  numbers: Map<string, Float64Array>;
}

async function columnsOf(table: string): Promise<{ ints: string[]; texts: string[] }> {
  const { rows } = await client.query<{ column_name: string; data_type: string }>(
    `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = 'stats_data' AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  return {
    ints: rows.filter((r) => r.data_type === 'integer').map((r) => r.column_name),
    texts: rows.filter((r) => r.data_type === 'text').map((r) => r.column_name),
  };
}

const LEVEL = 'geographic_level';

function emptyArrays(n: number, ints: string[], texts: string[]): Arrays {
  return {
    ints: new Map([...ints, LEVEL].map((c) => [c, new Int32Array(n)])),
    numbers: new Map(texts.filter((c) => c !== LEVEL).map((c) => [c, new Float64Array(n)])),
  };
}

async function viaCursor(table: string, n: number, ints: string[], texts: string[]): Promise<Arrays> {
  const arrays = emptyArrays(n, ints, texts);
  const levels = new Map<string, number>();
  const cursor = client.query(new Cursor(`SELECT * FROM stats_data.${table} ORDER BY time_period_id DESC, id`));
  let p = 0;
  for (;;) {
    const rows = await cursor.read(10000);
    if (rows.length === 0) break;
    for (const row of rows as Array<Record<string, unknown>>) {
      for (const c of ints) arrays.ints.get(c)![p] = Number(row[c] ?? 0);
      const code = String(row[LEVEL]);
      if (!levels.has(code)) levels.set(code, levels.size);
      arrays.ints.get(LEVEL)![p] = levels.get(code)!;
      for (const [c, target] of arrays.numbers) target[p] = Number(row[c]);
      p++;
    }
  }
  await cursor.close();
  return arrays;
}

async function viaCopyBinary(table: string, n: number, ints: string[], texts: string[]): Promise<Arrays> {
  const arrays = emptyArrays(n, ints, texts);
  const order = [...ints, ...texts];
  const intTargets = ints.map((c) => arrays.ints.get(c)!);
  const levelTarget = arrays.ints.get(LEVEL)!;
  const numberTargets = texts.map((c) => (c === LEVEL ? undefined : arrays.numbers.get(c)!));
  const levels = new Map<string, number>();
  const stream = client.query(
    copyTo(
      `COPY (SELECT ${order.join(', ')} FROM stats_data.${table} ORDER BY time_period_id DESC, id) TO STDOUT (FORMAT binary)`,
    ),
  );
  let pending: Buffer = Buffer.alloc(0);
  let headerDone = false;
  let p = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const buffer = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    if (!headerDone) {
      at = 11 + 4 + 4 + buffer.readUInt32BE(15);
      headerDone = true;
    }
    for (;;) {
      if (at + 2 > buffer.length) break;
      const fields = buffer.readInt16BE(at);
      if (fields === -1) {
        at = buffer.length;
        break;
      }
      // Is the whole tuple here?
      let end = at + 2;
      let complete = true;
      for (let f = 0; f < fields; f++) {
        if (end + 4 > buffer.length) {
          complete = false;
          break;
        }
        const length = buffer.readInt32BE(end);
        end += 4 + (length > 0 ? length : 0);
        if (end > buffer.length) {
          complete = false;
          break;
        }
      }
      if (!complete) break;
      let field = at + 2;
      for (let f = 0; f < intTargets.length; f++) {
        const length = buffer.readInt32BE(field);
        intTargets[f]![p] = length === 4 ? buffer.readInt32BE(field + 4) : 0;
        field += 4 + Math.max(0, length);
      }
      for (let f = 0; f < numberTargets.length; f++) {
        const length = buffer.readInt32BE(field);
        const text = length > 0 ? buffer.toString('latin1', field + 4, field + 4 + length) : '';
        field += 4 + Math.max(0, length);
        const target = numberTargets[f];
        if (target) target[p] = Number(text);
        else {
          let level = levels.get(text);
          if (level === undefined) levels.set(text, (level = levels.size));
          levelTarget[p] = level;
        }
      }
      p++;
      at = end;
    }
    pending = buffer.subarray(at);
  }
  if (p !== n) throw new Error(`COPY gave ${p} rows, expected ${n}`);
  return arrays;
}

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);
const CHUNK = 8 * 1024 * 1024;

function serialize(arrays: Arrays): Buffer {
  const parts: Buffer[] = [];
  for (const a of [...arrays.ints.values(), ...arrays.numbers.values()])
    parts.push(Buffer.from(a.buffer, a.byteOffset, a.byteLength));
  return Buffer.concat(parts);
}

async function writeSnapshot(arrays: Arrays): Promise<{ seconds: number; rawMb: number; storedMb: number }> {
  const started = performance.now();
  const raw = serialize(arrays);
  const packed = await deflate(raw, { level: 1, strategy: zlibConstants.Z_DEFAULT_STRATEGY });
  await client.query('DROP TABLE IF EXISTS bench_index_snapshot');
  await client.query('CREATE TABLE bench_index_snapshot (chunk integer PRIMARY KEY, bytes bytea NOT NULL)');
  await client.query('ALTER TABLE bench_index_snapshot ALTER COLUMN bytes SET STORAGE EXTERNAL');
  for (let i = 0; i * CHUNK < packed.length; i++) {
    await client.query('INSERT INTO bench_index_snapshot VALUES ($1, $2)', [
      i,
      packed.subarray(i * CHUNK, (i + 1) * CHUNK),
    ]);
  }
  const seconds = (performance.now() - started) / 1000;
  const { rows } = await client.query<{ bytes: string }>(
    `SELECT pg_total_relation_size('bench_index_snapshot') AS bytes`,
  );
  return { seconds, rawMb: raw.length / 2 ** 20, storedMb: Number(rows[0]!.bytes) / 2 ** 20 };
}

async function readSnapshot(like: Arrays, n: number): Promise<Arrays> {
  const { rows } = await client.query<{ bytes: Buffer }>('SELECT bytes FROM bench_index_snapshot ORDER BY chunk');
  const raw = await inflate(Buffer.concat(rows.map((r) => r.bytes)));
  const arrays: Arrays = { ints: new Map(), numbers: new Map() };
  let at = 0;
  for (const name of like.ints.keys()) {
    arrays.ints.set(name, new Int32Array(raw.buffer.slice(raw.byteOffset + at, raw.byteOffset + at + n * 4)));
    at += n * 4;
  }
  for (const name of like.numbers.keys()) {
    arrays.numbers.set(name, new Float64Array(raw.buffer.slice(raw.byteOffset + at, raw.byteOffset + at + n * 8)));
    at += n * 8;
  }
  return arrays;
}

function same(a: Arrays, b: Arrays): boolean {
  for (const [name, column] of a.ints)
    if (Buffer.compare(Buffer.from(column.buffer), Buffer.from(b.ints.get(name)!.buffer)) !== 0) return false;
  for (const [name, column] of a.numbers)
    if (Buffer.compare(Buffer.from(column.buffer), Buffer.from(b.numbers.get(name)!.buffer)) !== 0) return false;
  return true;
}

const timed = async <T>(fn: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const value = await fn();
  return [value, Math.round((performance.now() - started) / 10) / 100];
};

const results = [];
try {
  const { rows: versions } = await client.query<{ rows_table: string; total_results: number }>(
    'SELECT rows_table, total_results FROM data_set_versions ORDER BY total_results',
  );
  for (const version of versions) {
    const { ints, texts } = await columnsOf(version.rows_table);
    const n = version.total_results;
    const loadAtStart = os.loadavg()[0];
    const [fromCursor, cursorSeconds] = await timed(() => viaCursor(version.rows_table, n, ints, texts));
    const [fromCopy, copySeconds] = await timed(() => viaCopyBinary(version.rows_table, n, ints, texts));
    const snapshot = await writeSnapshot(fromCopy);
    const [fromSnapshot, snapshotSeconds] = await timed(() => readSnapshot(fromCopy, n));
    const result = {
      rows: n,
      loadAverage1m: [loadAtStart, os.loadavg()[0]],
      cursorSeconds,
      copyBinarySeconds: copySeconds,
      snapshot: {
        writeSeconds: Math.round(snapshot.seconds * 100) / 100,
        rawMb: Math.round(snapshot.rawMb),
        storedMb: Math.round(snapshot.storedMb),
        readSeconds: snapshotSeconds,
      },
      identical: same(fromCursor, fromCopy) && same(fromCopy, fromSnapshot),
    };
    console.log(JSON.stringify(result));
    results.push(result);
  }
  await client.query('DROP TABLE IF EXISTS bench_index_snapshot');
} finally {
  await client.end();
  await embedded.stop();
}
await mkdir(path.join(root, 'bench/results'), { recursive: true });
const file = path.join(root, 'bench/results/index-load.json');
await writeFile(
  file,
  `${JSON.stringify({ benchmark: 'npx tsx bench/index-load.ts', measuredAt: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, versions: results }, null, 2)}\n`,
);
console.log(`Wrote ${path.relative(root, file)}`);
