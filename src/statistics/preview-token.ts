/** The `preview-token` header: a preview of unpublished versions (src/statistics/versions/access.ts checks it). */

/** The `preview-token` header of a request (the first one when repeated). */
export function previewTokenOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers['preview-token'];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.trim() || undefined;
}
