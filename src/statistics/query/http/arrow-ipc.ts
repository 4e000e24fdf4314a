import { AsyncByteQueue, type RecordBatch, RecordBatchStreamWriter } from 'apache-arrow';

/** What an Arrow writer writes, taken as it is written (the writer's own queue is read asynchronously). */
export class TakenBytes extends AsyncByteQueue {
  private chunks: Uint8Array[] = [];

  override write(value: ArrayBufferView | Uint8Array | ArrayBuffer | SharedArrayBuffer): void {
    const bytes = ArrayBuffer.isView(value)
      ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
      : new Uint8Array(value);
    if (bytes.byteLength > 0) this.chunks.push(bytes);
  }

  take(): Uint8Array[] {
    return this.chunks.splice(0);
  }
}

/**
 * One batch as an Arrow IPC stream of its own (schema, dictionaries, the batch, end of stream), in the pieces the
 * writer made (views of the batch's own buffers, unjoined): the caller joins them where it needs them, into memory
 * it keeps, instead of a new buffer per batch (`tableToIPC`).
 */
export function ipcStreamPieces(batch: RecordBatch): Uint8Array[] {
  const taken = new TakenBytes();
  const writer = new RecordBatchStreamWriter().reset(taken);
  writer.write(batch);
  writer.finish();
  return taken.take();
}

/** The bytes of `pieces` one after another, from the start of `target` (which is large enough). */
export function joinInto(target: Uint8Array, pieces: Uint8Array[]): Uint8Array {
  let at = 0;
  for (const piece of pieces) {
    target.set(piece, at);
    at += piece.byteLength;
  }
  return target.subarray(0, at);
}

export function byteLengthOf(pieces: Uint8Array[]): number {
  return pieces.reduce((sum, piece) => sum + piece.byteLength, 0);
}
