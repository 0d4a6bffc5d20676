import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
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
   * Sends one email at most once per business key. The key's sent-email row is locked while the
   * message goes out, so two activities with the same key (two runs alerting about one order)
   * send it once, and a retry after a success sends nothing. A 5xx rejection is permanent
   * (non-retryable, also for any later attempt with that key); anything else is thrown as is,
   * so Temporal retries it within the caller's window.
   */
  async function sendOnce(
    businessKey: string,
    kind: EmailKind,
    orgId: string,
    recipients: string[],
    render: (em: EntityManager) => Promise<RenderedMail>,
  ): Promise<void> {
    const attempt = await orm.em.fork().transactional(async (tx): Promise<{ error?: unknown; permanent?: string }> => {
      await tx.execute(
        `insert into sent_email (id, organisation_id, kind, business_key, recipients, subject, status, created_at)
         values (gen_random_uuid(), ?, ?, ?, ?, '', 'sending', now()) on conflict (business_key) do nothing`,
        [orgId, kind, businessKey, JSON.stringify(recipients)],
      );
      const log = await tx.findOneOrFail(SentEmail, { businessKey }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (log.status === 'sent') return {};
      if (log.status === 'failed') return { permanent: log.error ?? 'refused by the mail server' };
      const mail = await render(tx);
      log.subject = mail.subject;
      try {
        const { messageId } = await mailer.send({ to: recipients, ...mail });
        Object.assign(log, { status: 'sent', messageId, sentAt: new Date(), error: null });
        return {};
      } catch (error) {
        log.error = (error as Error).message;
        if (isPermanentSmtpFailure(error)) {
          log.status = 'failed';
          return { permanent: log.error };
        }
        return { error };
      }
    });
    if (attempt.permanent !== undefined) throw ApplicationFailure.nonRetryable(attempt.permanent, 'PermanentSmtpFailure');
    if (attempt.error !== undefined) {
      Context.current().log.warn('temporary SMTP failure, will retry', { businessKey, message: (attempt.error as Error).message });
      throw attempt.error;
    }
  }

  return {
    /** Mints a fresh download link and emails it; `sendKey` names this attempt to send. */
    async sendReceipt({ purchaseId, sendKey }: { purchaseId: string; sendKey: string }): Promise<void> {
      const em = orm.em.fork();
      const purchase = await em.findOneOrFail(Purchase, purchaseId, { populate: ['customer', 'product', 'organisation'] });
      await sendOnce(`receipt:${purchaseId}:${sendKey}`, 'receipt', purchase.organisation.id, [purchase.customer.email], async (tx) => {
        const link = await issueDownloadLink(tx, purchaseId, config.siteUrl);
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
