/** Where links point and how long each works: from issue, and again from each opening (DOWNLOAD_LINK_TTL). */
export interface DownloadLinkSettings {
  siteUrl: string;
  ttlMs: number;
}

export function downloadLinkExpiry(from: Date, ttlMs: number): Date {
  return new Date(from.getTime() + ttlMs);
}

const UNITS: Array<[ms: number, name: string]> = [[86_400_000, 'day'], [3_600_000, 'hour'], [60_000, 'minute'], [1_000, 'second']];

/**
 * A link lifetime in words for customers: "48 hours", "1 hour", "90 minutes". Hours stay hours up
 * to a week (people read "48 hours" faster than "2 days"); the largest unit that divides it exactly.
 */
export function lifetimeWords(ms: number): string {
  for (const [unitMs, name] of UNITS) {
    if (name === 'day' && ms < 7 * unitMs) continue;
    if (ms % unitMs === 0 && ms >= unitMs) {
      const n = ms / unitMs;
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  return `${Math.round(ms / 1000)} seconds`;
}

/** Links are built from SITE_URL, never from a request's Host header. */
export function downloadLinkUrl(siteUrl: string, token: string): string {
  return `${siteUrl}/d/${encodeURIComponent(token)}`;
}

/** The purchase's download allowance (decisions §10): `allowed` null = unlimited. */
export interface DownloadAllowance {
  allowed: number | null;
  /** Completed file transfers since the purchase was made or last re-armed. */
  used: number;
}

/** Whether no further file transfer may start. */
export const limitReached = (allowance: DownloadAllowance): boolean => allowance.allowed !== null && allowance.used >= allowance.allowed;
