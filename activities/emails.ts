import { ApplicationFailure } from '@temporalio/activity';
import { Organisation, User, WebhookDeliveryItem } from '../src/db/entities';
import type { OrderAlertRequest } from '../src/domain/fulfilment';
import { orderAlertMail, receiptMail } from '../src/mail/templates';
import { lifetimeWords } from '../src/domain/download-links';
import { issueDownloadLink } from '../src/services/download-links';
import { withdrawBeforeReceipt } from '../src/purchases/revocation-store';
import { acceptReceipt, receiptOf } from '../src/purchases/purchase-store';
import { dispatchRows } from '../src/services/workflow-outbox';
import { reminderWorkflowId } from '../src/domain/ids';
import type { ActivityDeps } from './deps';
import { countAlertSent, recordReceiptSend } from './metrics';
import { createSendOnce } from './send-once';

export function emailActivities({ orm, mailer, config }: ActivityDeps) {
  const sendOnce = createSendOnce({ orm, mailer, config });

  return {
    /**
     * Mints a fresh download link and emails it; `sendKey` names this attempt to send. A purchase
     * whose access was withdrawn (revoked, or a refund that came before its order) gets nothing.
     */
    async sendReceipt({ purchaseId, sendKey }: { purchaseId: string; sendKey: string }): Promise<{ withdrawn: boolean }> {
      const em = orm.em.fork();
      if (await withdrawBeforeReceipt(em, purchaseId, new Date())) return { withdrawn: true };
      const receipt = await receiptOf(em, purchaseId);
      if (!receipt) throw ApplicationFailure.nonRetryable('purchase not found', 'NotFound');
      const started = performance.now();
      await sendOnce(`receipt:${purchaseId}:${sendKey}`, 'receipt', receipt.organisation_id, [receipt.email], async () => {
        // Committed before the message leaves, not in the send's transaction: a link in an email must work.
        const link = await issueDownloadLink(em, purchaseId, config.downloadLinks);
        return receiptMail({
          orgName: receipt.org_name,
          customerName: receipt.customer_name,
          productName: receipt.product_name,
          licenseKey: receipt.license_key,
          link: link.url,
          expiresAt: link.expiresAt,
          linkLifetime: lifetimeWords(config.downloadLinks.ttlMs),
        });
      }).then(
        () => recordReceiptSend((performance.now() - started) / 1000, false),
        (error: unknown) => {
          recordReceiptSend((performance.now() - started) / 1000, true);
          throw error;
        },
      );
      // The first accepted receipt starts the purchase's reminder timer (decisions §16): its outbox
      // row commits with the receipt's status, so neither is ever without the other.
      const orgId = receipt.organisation_id;
      const [reminder] = dispatchRows([{
        kind: 'buyer-reminder', workflowId: reminderWorkflowId(purchaseId), orgId, payload: { orgId, purchaseId, dueAt: '' },
      }]);
      await acceptReceipt(em, purchaseId, new Date(), reminder);
      return { withdrawn: false };
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
          { exclusive: true },
        );
        countAlertSent();
      } catch (error) {
        // A permanently refused alert must not fail the fulfilment that triggered it; it is in
        // the sent-email log as failed.
        if (error instanceof ApplicationFailure && error.nonRetryable) return;
        throw error;
      }
    },
  };
}
