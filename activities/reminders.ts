import { randomBytes } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { lifetimeWords } from '../src/domain/download-links';
import { reminderBusinessKey, type ReminderOutcome } from '../src/domain/reminder';
import { reminderMail } from '../src/mail/templates';
import { customerNoticeToken } from '../src/purchases/customer-store';
import { reminderContext, type ReminderContextRow } from '../src/purchases/purchase-store';
import { issueDownloadLink } from '../src/services/download-links';
import type { ActivityDeps } from './deps';
import { createSendOnce } from './send-once';

/** Why a due reminder does not go (decisions §16), or undefined when it does. */
function reasonNotToSend(purchase: ReminderContextRow): Exclude<ReminderOutcome, 'sent'> | undefined {
  if (purchase.transferred) return 'transferred';
  if (purchase.revoked) return 'revoked';
  if (purchase.test) return 'test';
  if (purchase.notices_off) return 'notices-off';
  return undefined;
}

export function reminderActivities({ orm, mailer, config }: ActivityDeps) {
  const sendOnce = createSendOnce({ orm, mailer, config });

  return {
    /**
     * The reminder of a purchase whose timer ran out: read now, so a transfer whose signal never
     * arrived, a revocation or notices turned off since the receipt keep it from going. At most one
     * per purchase (its sent-email key): a retry after the send sends nothing.
     */
    async sendReminder({ purchaseId }: { purchaseId: string }): Promise<ReminderOutcome> {
      const purchase = await reminderContext(orm.em.fork(), purchaseId);
      if (!purchase) throw ApplicationFailure.nonRetryable('purchase not found', 'NotFound');
      const reason = reasonNotToSend(purchase);
      if (reason !== undefined) return reason;
      await sendOnce(reminderBusinessKey(purchaseId), 'reminder', purchase.organisation_id, [purchase.email], async (em) => {
        // Committed before the message leaves: a link in an email must work.
        const link = await issueDownloadLink(em, purchaseId, config.downloadLinks, new Date(), 'reminder');
        const token = await customerNoticeToken(em, purchase.customer_id, randomBytes(24).toString('base64url'));
        return reminderMail({
          orgName: purchase.org_name,
          customerName: purchase.customer_name,
          productName: purchase.product_name,
          versionLabel: purchase.version_label,
          licenseKey: purchase.license_key,
          link: link.url,
          expiresAt: link.expiresAt,
          linkLifetime: lifetimeWords(config.downloadLinks.ttlMs),
          unsubscribeUrl: `${config.downloadLinks.siteUrl}/unsubscribe/${token}`,
        });
      });
      return 'sent';
    },
  };
}
