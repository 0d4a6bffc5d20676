/** A download link is valid 48 hours from issue, and again 48 hours from each opening. */
export const DOWNLOAD_LINK_TTL_MS = 48 * 60 * 60 * 1000;

export function downloadLinkExpiry(from: Date): Date {
  return new Date(from.getTime() + DOWNLOAD_LINK_TTL_MS);
}

/** Links are built from SITE_URL, never from a request's Host header. */
export function downloadLinkUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/d/${encodeURIComponent(token)}`;
}
