import { ApplicationFailure, Context } from '@temporalio/activity';
import { Organisation, Purchase, SentEmail, User, WebhookDeliveryItem } from '../src/db/entities';
import type { EmailKind } from '../src/db/entities/sent-email.entity';
import type { OrderAlertRequest } from '../src/domain/fulfilment';
import { isPermanentSmtpFailure } from '../src/mail/mailer';
import { orderAlertMail, receiptMail, type RenderedMail } from '../src/mail/templates';
import { issueDownloadLink } from '../src/services/download-links';
import type { ActivityDeps } from './deps';

export function emailActivities({ orm, mailer, config }: ActivityDeps) {
  /**
   * Sends one email at most once per business key: a retried activity whose message already went
   * out does not send it again. A 5xx rejection is permanent (non-retryable); anything else is
   * thrown as is, so Temporal retries it within the workflow's window.
   */
  async function sendOnce(
    businessKey: string,
    kind: EmailKind,
    orgId: string,
    recipients: string[],
    render: () => Promise<RenderedMail>,
  ): Promise<'sent' | 'already-sent' | 'failed-before'> {
    const em = orm.em.fork();
    const existing = await em.findOne(SentEmail, { businessKey });
    if (existing?.status === 'sent') return 'already-sent';
    if (existing?.status === 'failed') return 'failed-before';
    const mail = await render();
    const log = existing ?? em.create(SentEmail, {
      businessKey, kind, organisation: orgId, recipients, subject: mail.subject,
    });
    await em.flush();
    try {
      const { messageId } = await mailer.send({ to: recipients, ...mail });
      log.status = 'sent';
      log.messageId = messageId;
      log.sentAt = new Date();
      log.error = null;
      await em.flush();
      return 'sent';
    } catch (error) {
      const message = (error as Error).message;
      log.error = message;
      if (isPermanentSmtpFailure(error)) {
        log.status = 'failed';
        await em.flush();
        throw ApplicationFailure.nonRetryable(message, 'PermanentSmtpFailure');
      }
      await em.flush();
      Context.current().log.warn('temporary SMTP failure, will retry', { businessKey, message });
      throw error;
    }
  }

  return {
    /** Mints a fresh download link and emails it; `sendKey` names this attempt to send. */
    async sendReceipt({ purchaseId, sendKey }: { purchaseId: string; sendKey: string }): Promise<void> {
      const em = orm.em.fork();
      const purchase = await em.findOneOrFail(Purchase, purchaseId, { populate: ['customer', 'product', 'organisation'] });
      await sendOnce(`receipt:${purchaseId}:${sendKey}`, 'receipt', purchase.organisation.id, [purchase.customer.email], async () => {
        const link = await issueDownloadLink(em, purchaseId, config.siteUrl);
        return receiptMail({
          orgName: purchase.organisation.name,
          customerName: purchase.customer.name,
          productName: purchase.product.name,
          link: link.url,
          expiresAt: link.expiresAt,
        });
      });
      purchase.receiptStatus = 'sent';
      purchase.receiptSentAt = new Date();
      await em.flush();
    },

    /**
     * The one alert of an order that reached the customer in no way: to every owner and admin,
     * at most once per (organisation, platform, order id).
     */
    async sendOrderAlert(request: OrderAlertRequest): Promise<void> {
      const em = orm.em.fork();
      const org = await em.findOneOrFail(Organisation, request.orgId);
      const staff = await em.find(User, { organisation: org, role: { $in: ['owner', 'admin'] } });
      if (staff.length === 0) return;
      const items = await em.find(WebhookDeliveryItem, { delivery: request.deliveryId }, { orderBy: { lineIndex: 'asc' } });
      try {
        await sendOnce(
          `alert:${request.orgId}:${request.platform}:${request.externalOrderId}`,
          'alert',
          org.id,
          staff.map((u) => u.email),
          async () => orderAlertMail({
            orgName: org.name,
            platform: request.platform,
            externalOrderId: request.externalOrderId,
            lines: items.map((i) => ({ sku: i.sku, reason: i.reason })),
            logUrl: `${config.baseUrl}/webhooks-log?platform=${encodeURIComponent(request.platform)}`,
          }),
        );
      } catch (error) {
        // A permanently refused alert must not fail the fulfilment that triggered it; it is in
        // the sent-email log as failed.
        if (error instanceof ApplicationFailure && error.nonRetryable) return;
        throw error;
      }
    },
  };
}
