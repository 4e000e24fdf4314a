/**
 * A one-line progress bar for terminal runs of the importer (`[#####.....] 45%  123,456 rows  61,234 rows/s`).
 * When the output is not a terminal (CI logs, pipes) it prints nothing until the final summary line.
 */
export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const width = 30;
  let lastLength = 0;
  return (progress: { rows: number; seconds: number; fraction: number; done: boolean }) => {
    if (!stream.isTTY) return;
    const filled = Math.round(progress.fraction * width);
    const rate = progress.seconds > 0 ? Math.round(progress.rows / progress.seconds) : 0;
    const line =
      `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${String(Math.round(progress.fraction * 100)).padStart(3)}%  ` +
      `${progress.rows.toLocaleString('en-GB')} rows  ${rate.toLocaleString('en-GB')} rows/s`;
    stream.write(`\r${line}${' '.repeat(Math.max(0, lastLength - line.length))}`);
    lastLength = line.length;
    if (progress.done) {
      stream.write('\n');
      lastLength = 0;
    }
  };
}
