import type { EntityManager } from '@mikro-orm/postgresql';
import { downloadLinkExpiry, downloadLinkUrl, type DownloadLinkSettings } from '../domain/download-links';
import type { LinkOrigin } from '../domain/evidence';
import { mintDownloadToken } from '../security/secrets';
import { insertDownloadLink } from '../purchases/link-store';

export interface IssuedLink {
  url: string;
  expiresAt: Date;
}

/**
 * Mints a fresh token for a purchase; only its hash is stored, the URL is returned once. `via` is
 * how it was asked for (the dispute evidence lists it). One insert, no transaction.
 */
export async function issueDownloadLink(
  em: EntityManager,
  purchaseId: string,
  links: DownloadLinkSettings,
  now: Date = new Date(),
  via: LinkOrigin = 'receipt',
): Promise<IssuedLink> {
  const { token, hash } = mintDownloadToken();
  const expiresAt = downloadLinkExpiry(now, links.ttlMs);
  await insertDownloadLink(em, { purchaseId, tokenHash: hash, expiresAt, now, via });
  return { url: downloadLinkUrl(links.siteUrl, token), expiresAt };
}
