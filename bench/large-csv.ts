import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

/**
 * Writes `rows` rows of `source` (a gzipped EES data CSV whose first column is `time_period` as `YYYYYY`) to
 * `target` (gzipped): the source's rows repeated, each copy with both years moved back 7 more years — the same
 * filters, locations and value distributions over more time periods. Returns the number of rows written.
 */
export async function writeLargeCsv(source: string, target: string, rows: number): Promise<number> {
  const lines: string[] = [];
  let header = '';
  for await (const line of createInterface({
    input: createReadStream(source).pipe(createGunzip()),
    crlfDelay: Infinity,
  })) {
    if (!header) header = line;
    else if (line) lines.push(line);
  }
  const out = createGzip({ level: 1 });
  const file = createWriteStream(target);
  out.pipe(file);
  const write = (text: string) =>
    out.write(text) ? undefined : new Promise<void>((resolve) => out.once('drain', resolve));
  await write(`${header}\n`);
  let written = 0;
  for (let copy = 0; written < rows; copy++) {
    const shift = copy * 7;
    let chunk = '';
    for (const line of lines) {
      if (written >= rows) break;
      // time_period is the first column, `YYYYYY` (e.g. 201516): both years move back by `shift`.
      const start = Number(line.slice(0, 4)) - shift;
      const end = (start + 1) % 100;
      chunk += `${start}${String(end).padStart(2, '0')}${line.slice(6)}\n`;
      written++;
      if (chunk.length > 1 << 20) {
        await write(chunk);
        chunk = '';
      }
    }
    if (chunk) await write(chunk);
  }
  out.end();
  await finished(file);
  return written;
}
