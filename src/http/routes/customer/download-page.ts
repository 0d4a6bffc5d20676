import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { lifetimeWords, limitReached, type DownloadLinkSettings } from '../../../domain/download-links';
import { findDownloadLink, listLinkFiles, openDownloadLink, type DownloadLink } from '../../../services/downloads';
import { requesterOf } from '../../requester';
import { accessWithdrawnPage, downloadPage, freshLinkSentPage, limitReachedPage, linkGonePage, unknownLinkPage } from '../../views/customer-pages';
import type { AppDeps } from '../../app';
import { requestFreshLinks } from './fresh-links';
import { firstExceeded, sendTooManyRequests, type SelfServiceLimiters } from './limits';
import { sendPage } from './page-reply';
import { boundedText, FIELD_LIMITS } from '../../../domain/field-limits';

const TokenParams = z.object({ token: boundedText(FIELD_LIMITS.token).describe('the download token of the link') });
const PAGE = z.string().describe('HTML page');

/**
 * Why a link and its files cannot be used, as the 410 page to answer, or null when they can:
 * a revoked purchase first (no fresh link offered), then a spent link. `forFile`: a file URL, which
 * the download limit also closes (the page itself still opens and says so).
 */
export function refusalPage(token: string, link: DownloadLink, links: DownloadLinkSettings, forFile: boolean): string | null {
  if (link.revoked) return accessWithdrawnPage(link);
  if (link.state !== 'valid') return goneLinkPage(token, link, links);
  if (forFile && limitReached(link.allowance)) return limitPage(link);
  return null;
}

/** The 410 page of a purchase at its download limit (a limited purchase's only). */
export function limitPage(link: DownloadLink): string {
  return limitReachedPage({ orgName: link.orgName, productName: link.productName, allowed: link.allowance.allowed!, supportEmail: link.supportEmail });
}

/** The 410 page of a spent link. */
function goneLinkPage(token: string, link: DownloadLink, links: DownloadLinkSettings): string {
  return linkGonePage({
    token, orgName: link.orgName, productName: link.productName, reason: link.state === 'used' ? 'used' : 'expired',
    linkLifetime: lifetimeWords(links.ttlMs),
  });
}

/** `/d/{token}`: the link's page, and its "email me a fresh link" button (decisions §6). */
export function downloadPageRoutes(deps: AppDeps, limits: SelfServiceLimiters): FastifyPluginAsyncZod {
  const links = deps.config.downloadLinks;
  return async (app) => {
    app.get('/d/:token', {
      config: { errorFormat: 'page' },
      schema: {
        summary: 'The download page of a link: product, version, files, expiry',
        description: `Opening a valid link moves its expiry to ${lifetimeWords(links.ttlMs)} from now (DOWNLOAD_LINK_TTL). Expired or used: 410 with a button `
          + 'that emails a fresh link to the purchase\'s email. Revoked purchase (refund, chargeback, by hand): 410 "access withdrawn", '
          + 'no fresh link offered. Download limit reached: 200, the page says so and names the seller\'s support address. Unknown: 404.',
        tags: ['customer pages'],
        params: TokenParams,
        response: { 200: PAGE, 404: PAGE, 410: PAGE },
      },
    }, async (request, reply) => {
      const em = request.em;
      const now = deps.clock();
      const found = await findDownloadLink(em, request.params.token, now);
      if (!found) return sendPage(reply, 404, unknownLinkPage());
      const link = await openDownloadLink(em, found, requesterOf(request), now, links.ttlMs);
      const refusal = refusalPage(request.params.token, link, links, false);
      if (refusal !== null) return sendPage(reply, 410, refusal);
      const files = await listLinkFiles(em, link);
      return sendPage(reply, 200, downloadPage({
        token: request.params.token,
        orgId: link.orgId,
        orgName: link.orgName,
        productName: link.productName,
        versionLabel: link.versionLabel,
        expiresAt: link.expiresAt,
        linkLifetime: lifetimeWords(links.ttlMs),
        files,
        licenseKey: link.licenseKey,
        ...(limitReached(link.allowance) ? { limitReached: { allowed: link.allowance.allowed!, supportEmail: link.supportEmail } } : {}),
      }));
    });

    app.post('/d/:token/refresh', {
      config: { errorFormat: 'page' },
      schema: {
        summary: 'Email a fresh link for this link\'s purchase to the purchase\'s email',
        description: 'The button of the 410 page. Whatever the link\'s state, a new link goes to the email the purchase '
          + 'was made with, never to an address given here. Rate limited per client IP and per link (429).',
        tags: ['customer pages'],
        params: TokenParams,
        response: { 200: PAGE, 404: PAGE, 429: PAGE },
      },
    }, async (request, reply) => {
      const wait = await firstExceeded(request, limits.perIp, limits.perLink);
      if (wait !== null) return sendTooManyRequests(reply, wait);
      const link = await findDownloadLink(request.em, request.params.token, deps.clock());
      if (!link) return sendPage(reply, 404, unknownLinkPage());
      await requestFreshLinks(deps, { purchaseId: link.purchaseId }, link.orgId);
      return sendPage(reply, 200, freshLinkSentPage());
    });
  };
}
