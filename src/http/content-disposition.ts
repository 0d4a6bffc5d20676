/**
 * `Content-Disposition: attachment` for a file name from the database (RFC 6266 with the RFC 8187
 * `filename*` parameter). The quoted `filename` is an ASCII-only fallback for old clients; the name
 * is never used as a path on the server.
 */
export function attachmentDisposition(fileName: string): string {
  // No path separators or control characters (header injection) in what a client may save under.
  // eslint-disable-next-line no-control-regex
  const clean = fileName.replace(/[\u0000-\u001f\u007f/\\]+/g, '_').trim() || 'download';
  const fallback = clean.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').replace(/[^\x20-\x7e]|["%]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeRfc8187(clean)}`;
}

/** Percent-encodes everything outside RFC 8187's attr-char set. */
function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
