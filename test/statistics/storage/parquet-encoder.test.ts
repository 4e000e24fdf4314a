import { Field, Int32, makeData, RecordBatch, Schema, Struct } from 'apache-arrow';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { describe, expect, it } from 'vitest';
import { ipcStreamPieces } from '../../../src/statistics/storage/arrow-ipc.js';
import { encodeParquetFile, type ParquetFileSettings } from '../../../src/statistics/storage/parquet-encoder.js';

/**
 * The Parquet encoder thread: files of several batches come back whole and in order, files asked for together are
 * each whole, and a file that cannot be encoded fails with a clear error without spoiling the next one.
 */

const SETTINGS: ParquetFileSettings = {
  rowGroupRows: 1000,
  createdBy: 'parquet-encoder test',
  keyValueMetadata: { note: 'kept' },
  plainColumns: ['n'],
};

/** An IPC stream of one batch in the writer's pieces: column `n` holding from … from+length-1. */
function batchOf(from: number, length: number): Uint8Array[] {
  const field = new Field('n', new Int32(), false);
  const data = makeData({ type: new Int32(), length, data: Int32Array.from({ length }, (_, i) => from + i) });
  const schema = new Schema([field]);
  const batch = new RecordBatch(schema, makeData({ type: new Struct([field]), length, children: [data] }));
  return ipcStreamPieces(batch);
}

async function numbersIn(bytes: Buffer): Promise<number[]> {
  const file = new Uint8Array(bytes).buffer;
  const rows = await parquetReadObjects({ file, columns: ['n'], compressors });
  return rows.map((row) => row.n as number);
}

describe('encodeParquetFile', () => {
  it('writes every batch, in order, in row groups of the size asked for, with the metadata', async () => {
    const bytes = await encodeParquetFile(SETTINGS, [batchOf(0, 1500), batchOf(1500, 700), batchOf(2200, 300)]);
    expect(await numbersIn(bytes)).toEqual(Array.from({ length: 2500 }, (_, i) => i));
    const footer = parquetMetadata(new Uint8Array(bytes).buffer);
    expect(footer.row_groups.map((g) => Number(g.num_rows))).toEqual([1000, 1000, 500]);
    expect(footer.key_value_metadata).toContainEqual({ key: 'note', value: 'kept' });
    expect(footer.created_by).toBe('parquet-encoder test');
  });

  it('writes batches of changing sizes whole: a buffer given back and used again holds only its new batch', async () => {
    // Big after small (a spare too small), small after big (a spare with the bigger batch's bytes beyond the new
    // one's end), and more batches than are ever in flight, so that buffers come back and are used again.
    const sizes = [10, 3000, 5, 2000, 1, 4000, 7, 7, 2500, 3];
    const starts = sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0));
    const bytes = await encodeParquetFile(
      SETTINGS,
      sizes.map((size, i) => batchOf(starts[i]!, size)),
    );
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(await numbersIn(bytes)).toEqual(Array.from({ length: total }, (_, i) => i));
  });

  it('writes files asked for together each whole', async () => {
    const [first, second] = await Promise.all([
      encodeParquetFile(SETTINGS, [batchOf(0, 10), batchOf(10, 10)]),
      encodeParquetFile(SETTINGS, [batchOf(100, 5)]),
    ]);
    expect(await numbersIn(first)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(await numbersIn(second)).toEqual([100, 101, 102, 103, 104]);
  });

  it('fails a file with a batch that is not an Arrow IPC stream, never answering it short, and encodes the next one', async () => {
    const junk = new TextEncoder().encode('not an Arrow IPC stream');
    await expect(encodeParquetFile(SETTINGS, [batchOf(0, 3), [junk]])).rejects.toThrow(/^Parquet encoding failed: /);
    expect(await numbersIn(await encodeParquetFile(SETTINGS, [batchOf(7, 2)]))).toEqual([7, 8]);
  });

  it('fails a file whose batches cannot be made, and encodes the next one', async () => {
    function* failing(): Generator<Uint8Array[]> {
      yield batchOf(0, 3);
      throw new Error('the rows could not be read');
    }
    await expect(encodeParquetFile(SETTINGS, failing())).rejects.toThrow('the rows could not be read');
    expect(await numbersIn(await encodeParquetFile(SETTINGS, [batchOf(1, 1)]))).toEqual([1]);
  });
});
