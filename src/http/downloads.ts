/** What a file download's reply needs, for both APIs: whether the client takes it gzip-compressed, and its file name. */

/** Whether the request's Accept-Encoding allows gzip (RFC 9110 §12.5.3: `gzip`, `x-gzip` or `*`, with q > 0). */
export function acceptsGzip(acceptEncoding: string | string[] | undefined): boolean {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding;
  if (!header) return false;
  let gzip: number | undefined;
  let star: number | undefined;
  for (const part of header.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (name === 'gzip' || name === 'x-gzip') gzip = Number.isNaN(q) ? 0 : q;
    else if (name === '*') star = Number.isNaN(q) ? 0 : q;
  }
  return (gzip ?? star ?? 0) > 0;
}

/** `Content-Disposition` of a download named `fileName` (plain and RFC 8187 forms). */
export function attachmentDisposition(fileName: string): string {
  return `attachment; filename=${fileName}; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
