import { Customer, Purchase } from '../src/db/entities';
import type { FreshLinksGroup, FreshLinksRequest } from '../src/domain/fresh-links';
import { freshLinksMail } from '../src/mail/templates';
import { lifetimeWords } from '../src/domain/download-links';
import { issueDownloadLink } from '../src/services/download-links';
import type { ActivityDeps } from './deps';
import { createSendOnce } from './send-once';
import { normaliseEmail } from '../src/domain/email';
import { unrevokedPurchase, unrevokedPurchasesOfEmail } from '../src/purchases/purchase-store';
import { keysOfPurchases } from '../src/licenses/license-store';

export function freshLinkActivities({ orm, mailer, config }: ActivityDeps) {
  const sendOnce = createSendOnce({ orm, mailer, config });
  return {
    /**
     * Which emails a fresh-links request makes: the purchases of the address in each organisation
     * (customers are one per organisation and address), or the one purchase of an expired link;
     * revoked purchases never (decisions §9).
     * Read-only, so a retry is harmless.
     */
    async findFreshLinkGroups({ target, via: asked }: Pick<FreshLinksRequest, 'target' | 'via'>): Promise<FreshLinksGroup[]> {
      const em = orm.em.fork();
      const rows = 'email' in target
        ? await unrevokedPurchasesOfEmail(em, normaliseEmail(target.email))
        : await unrevokedPurchase(em, target.purchaseId);
      const groups = new Map<string, FreshLinksGroup>();
      const via = asked ?? ('email' in target ? 'my' : 'fresh-link');
      for (const row of rows) {
        const group = groups.get(row.customer_id) ?? { orgId: row.organisation_id, customerId: row.customer_id, purchaseIds: [], via };
        group.purchaseIds.push(row.id);
        groups.set(row.customer_id, group);
      }
      return [...groups.values()];
    },

    /**
     * One email to the customer (the purchase's own address, never one typed by whoever asked) with
     * a new link for each purchase of the group. Sent at most once per request and organisation:
     * a retry after the send finds it sent.
     */
    async sendFreshLinks({ requestId, group }: { requestId: string; group: FreshLinksGroup }): Promise<void> {
      const em = orm.em.fork();
      const customer = await em.findOne(Customer, { id: group.customerId, organisation: group.orgId }, { populate: ['organisation'] });
      if (!customer) return;
      const purchases = await em.find(
        Purchase,
        // Revoked since the lookup: no link (decisions §9).
        { id: { $in: group.purchaseIds }, organisation: group.orgId, customer, revokedAt: null },
        { populate: ['product', 'version'], orderBy: { createdAt: 'asc', id: 'asc' } },
      );
      if (purchases.length === 0) return;
      await sendOnce(`links:${requestId}:${group.orgId}`, 'links', group.orgId, [customer.email], async () => {
        const keys = await keysOfPurchases(em, purchases.map((p) => p.id));
        // Committed before the message leaves (not in the send's transaction): a link in an
        // email must already work. A retried send mints new ones; unused links just expire.
        const links = [];
        for (const purchase of purchases) {
          const link = await issueDownloadLink(orm.em.fork(), purchase.id, config.downloadLinks, new Date(), group.via ?? 'my');
          links.push({
            productName: purchase.product.name,
            versionLabel: purchase.version?.version ?? null,
            licenseKey: keys.get(purchase.id) ?? null,
            link: link.url,
            expiresAt: link.expiresAt,
          });
        }
        return freshLinksMail({
          orgName: customer.organisation.name, customerName: customer.name, links, linkLifetime: lifetimeWords(config.downloadLinks.ttlMs),
        });
      });
    },
  };
}
