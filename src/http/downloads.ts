import Negotiator from 'negotiator';
/** What a file download's reply needs, for both APIs: whether the client takes it gzip-compressed, and its file name. */

/**
 * The content coding to send a body in, of the codings it is kept in (`available`, the server's preference first),
 * by the request's Accept-Encoding (q-values and `*` as RFC 9110 has them; `x-gzip` is gzip); null: the body as it
 * is (identity), also where the client refuses identity too (a 406 would help no one).
 */
export function chosenEncoding<Coding extends 'br' | 'gzip' | 'deflate'>(
  acceptEncoding: string | string[] | undefined,
  available: readonly Coding[],
): Coding | null {
  const header = Array.isArray(acceptEncoding) ? acceptEncoding.join(',') : acceptEncoding;
  if (!header) return null;
  const negotiator = new Negotiator({ headers: { 'accept-encoding': header.replace(/\bx-gzip\b/gi, 'gzip') } });
  // negotiator 1.x breaks ties (`gzip, br`) by the server's preference given as `preferred`; its types predate it.
  const encoding = negotiator.encoding.bind(negotiator) as (
    available: string[],
    options: { preferred: string[] },
  ) => string | undefined;
  const chosen = encoding([...available, 'identity'], { preferred: [...available, 'identity'] });
  return (available as readonly string[]).includes(chosen ?? '') ? (chosen as Coding) : null;
}

/** Whether a gzip body may be sent (Accept-Encoding allows gzip). */
export function acceptsGzip(acceptEncoding: string | string[] | undefined): boolean {
  return chosenEncoding(acceptEncoding, ['gzip']) === 'gzip';
}

/** `Content-Disposition` of a download named `fileName` (plain and RFC 8187 forms). */
export function attachmentDisposition(fileName: string): string {
  return `attachment; filename=${fileName}; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}
