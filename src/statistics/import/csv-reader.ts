import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** A batch of parsed CSV records with the physical line number each starts on (the header is line 1). */
export interface CsvBatch {
  records: string[][];
  lines: number[];
}

export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
  }
}

/** A CSV file as a text stream; `fileBytesRead()` counts file bytes (compressed ones for `.gz`) for a progress bar. */
export type CsvText = Readable & { fileBytesRead(): number };

/** Opens a CSV file as a text stream, gunzipping it when its name ends in `.gz`. */
export function openCsvText(path: string): CsvText {
  const file = createReadStream(path, { highWaterMark: 1 << 16 });
  const stream = path.endsWith('.gz') ? file.pipe(createGunzip({ chunkSize: 1 << 16 })) : file;
  // A decompression or read error must reach the consumer instead of being lost in the pipe.
  if (stream !== file) file.on('error', (error) => stream.destroy(error));
  stream.setEncoding('utf8');
  return Object.assign(stream, { fileBytesRead: () => file.bytesRead });
}

/**
 * Streams RFC 4180 records out of a text stream: a leading UTF-8 BOM is dropped, fields may be quoted (with
 * commas, `""` escapes and line breaks inside), lines may end in CRLF or LF, and fully empty lines are skipped.
 * Lines without quotes take a fast path (native split); only quoted lines are scanned character by character.
 */
export async function* readCsvBatches(stream: AsyncIterable<string>): AsyncGenerator<CsvBatch> {
  let pending = '';
  let line = 1;
  let first = true;
  for await (const chunk of stream) {
    let text = pending + chunk;
    if (first) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      first = false;
    }
    const parsed = parseComplete(text, line, false);
    pending = text.slice(parsed.consumed);
    line = parsed.line;
    if (parsed.batch.records.length > 0) yield parsed.batch;
  }
  if (first) return;
  if (pending.length > 0) {
    const parsed = parseComplete(pending, line, true);
    if (parsed.batch.records.length > 0) yield parsed.batch;
  }
}

interface ParseResult {
  batch: CsvBatch;
  consumed: number;
  line: number;
}

function parseComplete(text: string, startLine: number, final: boolean): ParseResult {
  const records: string[][] = [];
  const lines: number[] = [];
  let pos = 0;
  let line = startLine;
  let nextQuote = text.indexOf('"');
  const length = text.length;
  while (pos < length) {
    let newline = text.indexOf('\n', pos);
    if (newline === -1) {
      if (!final) break;
      newline = length;
    }
    if (nextQuote !== -1 && nextQuote < pos) nextQuote = text.indexOf('"', pos);
    if (nextQuote === -1 || nextQuote > newline) {
      // Fast path: no quote on this line.
      let end = newline;
      if (end > pos && text.charCodeAt(end - 1) === 13) end--;
      if (end > pos) {
        records.push(text.slice(pos, end).split(','));
        lines.push(line);
      }
      pos = newline + 1;
      line++;
      continue;
    }
    const scanned = scanQuotedRecord(text, pos, line, final);
    if (!scanned) break;
    records.push(scanned.fields);
    lines.push(line);
    line += 1 + scanned.innerLineBreaks;
    pos = scanned.next;
  }
  return { batch: { records, lines }, consumed: Math.min(pos, length), line };
}

/** Scans one record that contains quotes; undefined when the record continues past the end of `text`. */
function scanQuotedRecord(
  text: string,
  start: number,
  line: number,
  final: boolean,
): { fields: string[]; next: number; innerLineBreaks: number } | undefined {
  const fields: string[] = [];
  const length = text.length;
  let pos = start;
  let innerLineBreaks = 0;
  for (;;) {
    if (pos < length && text.charCodeAt(pos) === 34) {
      // Quoted field.
      let value = '';
      let segment = pos + 1;
      for (;;) {
        const quote = text.indexOf('"', segment);
        if (quote === -1) {
          if (!final) return undefined;
          throw new CsvSyntaxError(line, 'A quoted field is not closed before the end of the file.');
        }
        if (quote + 1 < length && text.charCodeAt(quote + 1) === 34) {
          value += text.slice(segment, quote + 1);
          segment = quote + 2;
          continue;
        }
        if (quote + 1 >= length && !final) return undefined;
        value += text.slice(segment, quote);
        pos = quote + 1;
        break;
      }
      for (let i = value.indexOf('\n'); i !== -1; i = value.indexOf('\n', i + 1)) innerLineBreaks++;
      fields.push(value);
      const c = pos < length ? text.charCodeAt(pos) : -1;
      if (c === 44) {
        pos++;
        continue;
      }
      if (c === 13 && pos + 1 < length && text.charCodeAt(pos + 1) === 10) return { fields, next: pos + 2, innerLineBreaks };
      if (c === 13 && pos + 1 >= length && !final) return undefined;
      if (c === 10 || c === 13) return { fields, next: pos + 1, innerLineBreaks };
      if (c === -1) return final ? { fields, next: pos, innerLineBreaks } : undefined;
      throw new CsvSyntaxError(line + innerLineBreaks, 'A quoted field is followed by text before the next comma.');
    }
    // Unquoted field: up to the next comma or line end.
    let end = pos;
    while (end < length) {
      const c = text.charCodeAt(end);
      if (c === 44 || c === 10) break;
      if (c === 34) throw new CsvSyntaxError(line + innerLineBreaks, 'A field contains a quote but does not start with one.');
      end++;
    }
    if (end >= length && !final) return undefined;
    let valueEnd = end;
    if (valueEnd > pos && text.charCodeAt(valueEnd - 1) === 13 && (end >= length || text.charCodeAt(end) === 10)) valueEnd--;
    fields.push(text.slice(pos, valueEnd));
    if (end < length && text.charCodeAt(end) === 44) {
      pos = end + 1;
      continue;
    }
    return { fields, next: end + 1, innerLineBreaks };
  }
}

/** Reads a whole small CSV file (the meta file) into records with their line numbers. */
export async function readCsvFile(path: string): Promise<CsvBatch> {
  const all: CsvBatch = { records: [], lines: [] };
  for await (const batch of readCsvBatches(openCsvText(path))) {
    all.records.push(...batch.records);
    all.lines.push(...batch.lines);
  }
  return all;
}
