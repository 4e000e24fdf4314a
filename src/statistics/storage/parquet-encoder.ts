import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { byteLengthOf, joinInto } from './arrow-ipc.js';

/**
 * Parquet encoding on a thread of its own (parquet-encoder-worker.ts): the caller makes a file's record batches (Arrow
 * IPC streams) while the thread encodes the ones before, and the caller's thread stays free for its other work (the
 * import stores the engine form meanwhile). Most of a Parquet write is the encoding inside parquet-wasm, so the
 * import's Parquet phase overlaps the rest instead of following it (docs/decisions/0002-parquet-writer.md).
 *
 * One thread per process, started for a file and ended when no other file waits (it is unref'd meanwhile: it never
 * keeps the process alive), one file at a time: files asked for together are written in turn.
 */

/** How a file is written: what the writer's properties need beyond the batches. */
export interface ParquetFileSettings {
  rowGroupRows: number;
  createdBy: string;
  keyValueMetadata: Record<string, string>;
  /** Columns written without dictionary encoding. */
  plainColumns: string[];
}

export type ParquetEncoderRequest = { start: ParquetFileSettings } | { ipc: Uint8Array } | { end: true };
/** `taken` gives a batch's buffer back once the thread has copied it: the sender drops it. */
export type ParquetEncoderResponse = { taken: true; ipc?: Uint8Array } | { bytes: Uint8Array } | { error: string };

/** Batches sent and not yet taken by the encoder: one being made into IPC, one waiting, one being encoded. */
const MAX_WAITING_BATCHES = 2;

/**
 * The encoder thread: its script beside this module, compiled (`.js`, dist/src/…) or bundled (`.mjs`, beside
 * dist/server.mjs); or the source (`.ts`, where this module runs from source under tsx or vitest), loaded through
 * tsx's CommonJS hook — Node 20 applies no module hooks to a worker's entry module, so `--import tsx` would not do.
 */
function startEncoderThread(): Worker {
  for (const name of ['parquet-encoder-worker.js', 'parquet-encoder-worker.mjs']) {
    const url = new URL(name, import.meta.url);
    if (existsSync(fileURLToPath(url))) return new Worker(url);
  }
  const source = fileURLToPath(new URL('parquet-encoder-worker.ts', import.meta.url));
  return new Worker(`require('tsx/cjs'); require(${JSON.stringify(source)});`, { eval: true });
}

let worker: Worker | undefined;
/** Files asked for and not yet written. */
let waitingFiles = 0;
/** The file being written before the next may start. */
let previous: Promise<unknown> = Promise.resolve();

function encoderThread(): Worker {
  if (worker) return worker;
  const started = startEncoderThread();
  started.unref();
  started.once('exit', () => {
    if (worker === started) worker = undefined;
  });
  worker = started;
  return started;
}

/**
 * Writes one Parquet file of the batches `batches` yields (each an Arrow IPC stream of record batches, in pieces as
 * `ipcStreamPieces` makes them), encoded on the encoder thread; resolves to the file's bytes. A batch is asked for
 * only when the thread has room for it, so at most MAX_WAITING_BATCHES are held whatever the file's size.
 */
export function encodeParquetFile(settings: ParquetFileSettings, batches: Iterable<Uint8Array[]>): Promise<Buffer> {
  waitingFiles++;
  const written = previous.then(() => encodeOne(settings, batches));
  previous = written
    .catch(() => undefined)
    .then(() => {
      // The last file asked for is written: the thread and its WebAssembly memory (which never shrinks) go, so a
      // server that imported its seed at start does not keep them; the next file starts a thread again.
      if (--waitingFiles === 0 && worker) {
        const idle = worker;
        worker = undefined;
        void idle.terminate();
      }
    });
  return written;
}

/**
 * The buffers a file's batches are joined into, each sent to the thread and given back when taken: a file reuses two
 * or three instead of a new one per batch, whose fresh memory the kernel pages in and zeroes each time (measured in
 * docs/decisions/0002-parquet-writer.md).
 */
class BatchBuffers {
  private spare: ArrayBuffer[] = [];

  /** The pieces joined into a buffer of their own (transferable: nothing else shares it). */
  join(pieces: Uint8Array[]): Uint8Array {
    const length = byteLengthOf(pieces);
    let buffer = this.spare.pop();
    // A file's last batch is usually shorter: a spare too small for one batch is dropped, not kept beside a new one.
    if (!buffer || buffer.byteLength < length) buffer = new ArrayBuffer(length + (length >>> 3));
    return joinInto(new Uint8Array(buffer), pieces);
  }

  giveBack(bytes: Uint8Array): void {
    this.spare.push(bytes.buffer as ArrayBuffer);
  }
}

function encodeOne(settings: ParquetFileSettings, batches: Iterable<Uint8Array[]>): Promise<Buffer> {
  const thread = encoderThread();
  const buffers = new BatchBuffers();
  return new Promise<Buffer>((resolve, reject) => {
    const iterator = batches[Symbol.iterator]();
    let waiting = 0;
    let ended = false;
    const fail = (error: Error) => {
      cleanUp();
      // The thread's state is unknown after a failure: the next file gets a new one.
      if (worker === thread) worker = undefined;
      void thread.terminate();
      reject(error);
    };
    const send = () => {
      try {
        while (!ended && waiting < MAX_WAITING_BATCHES) {
          const step = iterator.next();
          if (step.done) {
            ended = true;
            thread.postMessage({ end: true } satisfies ParquetEncoderRequest);
            return;
          }
          waiting++;
          // Transferred, not copied; the thread gives the buffer back when it has taken the batch.
          const ipc = buffers.join(step.value);
          thread.postMessage({ ipc } satisfies ParquetEncoderRequest, [ipc.buffer as ArrayBuffer]);
        }
      } catch (error) {
        fail(error as Error);
      }
    };
    const onMessage = (message: ParquetEncoderResponse) => {
      if ('taken' in message) {
        if (message.ipc) buffers.giveBack(message.ipc);
        waiting = Math.max(0, waiting - 1);
        send();
      } else if ('bytes' in message) {
        cleanUp();
        resolve(Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength));
      } else {
        fail(new Error(`Parquet encoding failed: ${message.error}`));
      }
    };
    const onError = (error: Error) => fail(error);
    const onExit = (code: number) => fail(new Error(`The Parquet encoder thread exited (code ${code})`));
    function cleanUp() {
      thread.off('message', onMessage);
      thread.off('error', onError);
      thread.off('exit', onExit);
      thread.unref();
    }
    thread.on('message', onMessage);
    thread.on('error', onError);
    thread.on('exit', onExit);
    // Kept alive while a file is being written: the caller waits for it.
    thread.ref();
    thread.postMessage({ start: settings } satisfies ParquetEncoderRequest);
    send();
  });
}
