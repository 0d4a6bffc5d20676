import { ApplicationFailure, Context, sleep } from '@temporalio/activity';
import { lifetimeWords } from '../src/domain/download-links';
import { updateNoticeMail } from '../src/mail/templates';
import { issueDownloadLink } from '../src/services/download-links';
import { hitRateLimit } from '../src/services/rate-limits';
import {
  finishNotification, nextNoticeRecipients, noticeContext, noticeKeyPrefix, prepareNotice,
} from '../src/services/version-notifications';
import type { ActivityDeps } from './deps';
import { createSendOnce } from './send-once';

export function versionNotificationActivities({ orm, mailer, config }: ActivityDeps) {
  const sendOnce = createSendOnce({ orm, mailer });
  const host = new URL(config.downloadLinks.siteUrl).hostname;

  /**
   * Waits for one of the organisation's notices of the current second (UPDATE_NOTICE_RATE): the
   * shared counter bounds the rate across every batch and worker sending for that organisation.
   */
  async function paced(orgId: string): Promise<void> {
    for (;;) {
      const now = new Date();
      const verdict = await hitRateLimit(orm.em.fork(), `update-notices:${orgId}`, config.updateNoticeRate, 1000, now);
      if (verdict.allowed) return;
      await sleep(Math.max(1, verdict.resetAt.getTime() - now.getTime()));
    }
  }

  return {
    /** The next purchases to notify (read-only). */
    async nextNoticeRecipients({ notificationId, after, limit }: { notificationId: string; after: string | null; limit: number }): Promise<string[]> {
      return nextNoticeRecipients(orm.em.fork(), notificationId, after, limit);
    },

    async finishNotification({ notificationId }: { notificationId: string }): Promise<void> {
      await finishNotification(orm.em.fork(), notificationId, new Date());
    },

    /**
     * One notice per purchase, each at most once (the sent-email key per version and purchase):
     * a retried batch skips what went out. The purchase moves to the new version and its notice
     * carries a fresh link to it and the customer's unsubscribe link. A notice the mail server
     * refuses for good is logged failed and the batch goes on.
     */
    async sendUpdateNotices({ notificationId, purchaseIds }: { notificationId: string; purchaseIds: string[] }): Promise<void> {
      for (const [index, purchaseId] of purchaseIds.entries()) {
        Context.current().heartbeat(index);
        // Read at send time: a purchase revoked or a customer unsubscribed since the batch was read gets nothing.
        const context = await noticeContext(orm.em.fork(), notificationId, purchaseId);
        if (!context) continue;
        const key = `${noticeKeyPrefix(context.versionId)}${purchaseId}`;
        await paced(context.orgId);
        try {
          await sendOnce(key, 'update', context.orgId, [context.email], async (em) => {
            const token = await prepareNotice(em, purchaseId, context);
            const link = await issueDownloadLink(em, purchaseId, config.downloadLinks, new Date(), 'update-notice');
            return updateNoticeMail({
              orgName: context.orgName,
              customerName: context.customerName,
              productName: context.productName,
              versionLabel: context.versionLabel,
              link: link.url,
              expiresAt: link.expiresAt,
              linkLifetime: lifetimeWords(config.downloadLinks.ttlMs),
              unsubscribeUrl: `${config.downloadLinks.siteUrl}/unsubscribe/${token}`,
              messageId: `<update.${context.versionId}.${purchaseId}@${host}>`,
            });
          });
        } catch (error) {
          if (error instanceof ApplicationFailure && error.nonRetryable) continue;
          throw error;
        }
      }
    },
  };
}
