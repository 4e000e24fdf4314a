/**
 * `whole` cut at the given points (each taken modulo its length + 1; repeats ignored), in order: the pieces a stream
 * could have delivered it in. Property tests use it to check that a reader's answer does not depend on the chunking.
 */
export function cutAt<T extends string | Uint8Array>(whole: T, points: number[]): T[] {
  const at = [...new Set(points.map((p) => p % (whole.length + 1)))].sort((a, b) => a - b);
  const pieces: T[] = [];
  let start = 0;
  for (const p of at) {
    pieces.push(whole.slice(start, p) as T);
    start = p;
  }
  pieces.push(whole.slice(start) as T);
  return pieces;
}
