import type { EntityManager } from '@mikro-orm/postgresql';
import { downloadLinkExpiry, downloadLinkUrl } from '../domain/download-links';
import { DownloadToken } from '../db/entities';
import { mintDownloadToken } from '../security/secrets';

export interface IssuedLink {
  url: string;
  expiresAt: Date;
}

/** Mints a fresh token for a purchase; only its hash is stored, the URL is returned once. */
export async function issueDownloadLink(
  em: EntityManager,
  purchaseId: string,
  siteUrl: string,
  now: Date = new Date(),
): Promise<IssuedLink> {
  const { token, hash } = mintDownloadToken();
  const expiresAt = downloadLinkExpiry(now);
  em.create(DownloadToken, { purchase: purchaseId, tokenHash: hash, expiresAt, createdAt: now });
  await em.flush();
  return { url: downloadLinkUrl(siteUrl, token), expiresAt };
}
