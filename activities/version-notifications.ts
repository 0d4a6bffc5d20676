import { ApplicationFailure, Context, sleep } from '@temporalio/activity';
import { lifetimeWords } from '../src/domain/download-links';
import { updateNoticeMail } from '../src/mail/templates';
import { issueDownloadLink } from '../src/services/download-links';
import {
  finishNotification, giveUpNotices, nextNoticeRecipients, noticeContext, noticeKeyPrefix, prepareNotice,
} from '../src/services/version-notifications';
import { reserveSlot } from '../src/services/rate-limits';
import type { ActivityDeps } from './deps';
import { createSendOnce } from './send-once';

/**
 * Notices of one batch in flight at once (never more than the rate allows in a second). It is also
 * how many notices a worker that dies can leave accepted by the mail server but not yet logged sent,
 * which its batch's retry sends again under the same Message-ID.
 */
export const NOTICE_SENDERS = 5;

export function versionNotificationActivities({ orm, mailer, config }: ActivityDeps) {
  const sendOnce = createSendOnce({ orm, mailer, config });

  /**
   * Waits for this notice's turn (UPDATE_NOTICE_RATE): the organisation's notices are spaced 1/rate s
   * apart, whichever batch or worker sends. A long wait heartbeats, so it is not taken for a lost worker.
   *
   * A sender that wakes more than a spacing after its slot (the process was stalled) takes a fresh
   * slot: otherwise every sender whose slot passed during the stall sends at the same instant, and
   * that second holds more notices than the rate. It re-reserves once, so a busy process still sends.
   */
  async function paced(orgId: string): Promise<void> {
    const spacingMs = 1000 / config.updateNoticeRate;
    for (let reservations = 1; ; reservations += 1) {
      const slot = Date.now() + await reserveSlot(orm.em.fork(), `update-notices:${orgId}`, spacingMs);
      for (let left = slot - Date.now(); left > 0; left = slot - Date.now()) {
        Context.current().heartbeat();
        await sleep(Math.min(left, 5_000));
      }
      if (reservations === 2 || Date.now() - slot <= spacingMs) return;
    }
  }

  /** One notice: read at send time (a purchase revoked or a customer unsubscribed since gets nothing), paced, sent once. */
  async function sendNotice(notificationId: string, purchaseId: string): Promise<void> {
    const context = await noticeContext(orm.em.fork(), notificationId, purchaseId);
    if (!context) return;
    await paced(context.orgId);
    await sendOnce(`${noticeKeyPrefix(context.versionId)}${purchaseId}`, 'update', context.orgId, [context.email], async (em) => {
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
      });
    });
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
     * a retried batch skips what went out. A few senders work side by side, each waiting for its
     * slot, so the organisation's rate is reached even when one SMTP exchange takes longer than a
     * slot. A notice the mail server refuses for good is logged failed and the batch goes on; a
     * temporary failure fails the batch after the others went out, so it is retried.
     */
    async sendUpdateNotices({ notificationId, purchaseIds }: { notificationId: string; purchaseIds: string[] }): Promise<void> {
      // Heartbeats also while a slow message goes out: a slow send is not a lost worker, whose
      // batch another worker would start again while this one is still sending.
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), 2_000);
      const temporary: unknown[] = [];
      let next = 0;
      const sender = async () => {
        while (next < purchaseIds.length) {
          const purchaseId = purchaseIds[next];
          next += 1;
          try {
            await sendNotice(notificationId, purchaseId);
          } catch (error) {
            if (!(error instanceof ApplicationFailure && error.nonRetryable)) temporary.push(error);
          }
        }
      };
      try {
        await Promise.all(Array.from({ length: Math.min(NOTICE_SENDERS, config.updateNoticeRate) }, sender));
      } finally {
        clearInterval(beat);
      }
      if (temporary.length > 0) throw temporary[0];
    },

    /** A batch whose temporary failures outlasted its retries: those notices are logged failed. */
    async giveUpNotices({ notificationId, purchaseIds, reason }: { notificationId: string; purchaseIds: string[]; reason: string }): Promise<void> {
      await giveUpNotices(orm.em.fork(), notificationId, purchaseIds, reason);
    },
  };
}
