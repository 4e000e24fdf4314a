/**
 * The Parquet encoder's thread (parquet-encoder.ts starts it): takes a file's record batches as Arrow IPC streams, one
 * message each, encodes them with parquet-wasm and answers the whole file's bytes. One file at a time; the thread
 * is ended once no other file waits.
 *
 * Messages in: `{ start: ParquetFileSettings }`, then `{ ipc: Uint8Array }` per batch, then `{ end: true }`.
 * Messages out: `{ taken: true, ipc? }` when a batch has been handed to the encoder (the sender may send another; the
 * batch's buffer comes back with it), `{ bytes: Uint8Array }` at the end, or `{ error: string }` (the file is
 * abandoned; the next `start` begins anew).
 */
import { parentPort } from 'node:worker_threads';
import type { ParquetEncoderRequest, ParquetEncoderResponse, ParquetFileSettings } from './parquet-encoder.js';

type ParquetWasm = typeof import('parquet-wasm');

const port = parentPort;
if (!port) throw new Error('parquet-encoder-worker runs only as a worker thread');

const parquetWasm: Promise<ParquetWasm> = import('parquet-wasm');

/** The batches of the file being written, as they arrive; null: the last one was sent. */
let pending: Array<Uint8Array | null> = [];
let arrived: (() => void) | undefined;

function answer(message: ParquetEncoderResponse, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

async function nextBatch(): Promise<Uint8Array | null> {
  while (pending.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
  return pending.shift()!;
}

async function writeFile(settings: ParquetFileSettings): Promise<Uint8Array> {
  const parquet = await parquetWasm;
  // parquet-wasm ends the file where its input stream fails, as if the batches had ended there: a failure is kept
  // here and the file refused, never answered short.
  let failure: Error | undefined;
  const batches = new ReadableStream(
    {
      async pull(controller) {
        const ipc = await nextBatch();
        if (ipc === null) {
          answer({ taken: true });
          controller.close();
          return;
        }
        try {
          const table = parquet.Table.fromIPCStream(ipc);
          // The batch is copied into WebAssembly memory: its buffer goes back to the sender, whose frequent garbage
          // collections free it. Dropped here, it would wait for this thread's, which allocates too little to run them.
          answer({ taken: true, ipc }, [ipc.buffer as ArrayBuffer]);
          for (const batch of table.recordBatches()) controller.enqueue(batch);
          table.free();
        } catch (error) {
          answer({ taken: true });
          failure = error as Error;
          controller.error(error);
        }
      },
    },
    { highWaterMark: 0 },
  );
  const builder = new parquet.WriterPropertiesBuilder()
    .setCompression(parquet.Compression.ZSTD)
    // Data pages v2: row ids and numbers delta-encoded, a quarter of the v1 file's size.
    .setWriterVersion(parquet.WriterVersion.V2)
    .setMaxRowGroupSize(settings.rowGroupRows)
    .setStatisticsEnabled(parquet.EnabledStatistics.Chunk)
    .setCreatedBy(settings.createdBy)
    .setKeyValueMetadata(new Map(Object.entries(settings.keyValueMetadata)));
  const properties = settings.plainColumns
    .reduce((b, column) => b.setColumnDictionaryEnabled(column, false), builder)
    .build();
  const output = await parquet.transformParquetStream(batches, properties);
  const chunks: Uint8Array[] = [];
  for await (const chunk of output as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  if (failure) throw failure;
  // Its own buffer (Buffer.concat may hand out a slice of a shared pool), so it can be transferred, not copied.
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

port.on('message', (message: ParquetEncoderRequest) => {
  if ('start' in message) {
    pending = [];
    writeFile(message.start).then(
      (bytes) => answer({ bytes }, [bytes.buffer as ArrayBuffer]),
      (error: unknown) => answer({ error: error instanceof Error ? error.message : String(error) }),
    );
    return;
  }
  pending.push('ipc' in message ? message.ipc : null);
  arrived?.();
});
