import { noteItemsWaiting } from '../src/deliveries/delivery-store';
import { staffEmails } from '../src/events/outbound-events';
import { ApplicationFailure } from '@temporalio/activity';
import { LOW_POOL_THRESHOLD, WAITING_FOR_KEY_REASON, type ClaimState } from '../src/domain/license-keys';
import { duePoolAlerts } from '../src/catalogue/catalogue-store';
import { claimPoolKey } from '../src/licenses/license-store';
import { licensePoolMail } from '../src/mail/templates';
import type { ActivityDeps } from './deps';
import { createSendOnce } from './send-once';

/** A pool alert that became due with a purchase (decisions §14). */
export interface LicensePoolAlert {
  kind: 'dry' | 'low';
  orgId: string;
  productId: string;
  productName: string;
  available: number;
  /** The purchase whose key (or lack of one) made it due: names the alert once. */
  purchaseId: string;
}

export function licenseActivities({ orm, mailer, config }: ActivityDeps) {
  const sendOnce = createSendOnce({ orm, mailer, config });

  return {
    /**
     * After a purchase of a pool product: when it found the pool empty, claims a key that came since
     * (else it waits); then marks the pool's alerts and answers those newly due.
     */
    async settleLicenseKey(input: { purchaseId: string; productId: string; waiting: boolean }): Promise<{ state: ClaimState; alerts: LicensePoolAlert[] }> {
      const em = orm.em.fork();
      const state = input.waiting ? await claimPoolKey(em, input.purchaseId, input.productId) : 'issued';
      const due = await duePoolAlerts(em, input.productId, state === 'waiting', LOW_POOL_THRESHOLD);
      const alerts: LicensePoolAlert[] = [];
      if (due) {
        for (const kind of ['dry', 'low'] as const) {
          if (due[kind]) {
            alerts.push({ kind, orgId: due.organisation_id, productId: input.productId, productName: due.product_name, available: due.available, purchaseId: input.purchaseId });
          }
        }
      }
      return { state, alerts };
    },

    /** The run's undecided items show that the receipt waits for a license key. */
    async noteWaitingForKey({ itemIds }: { itemIds: string[] }): Promise<void> {
      await noteItemsWaiting(orm.em.fork(), itemIds, WAITING_FOR_KEY_REASON);
    },

    /**
     * Emails owners and admins that the pool ran dry or low, once per alert. A permanently refused
     * alert does not fail the sale's run: it is in the sent-email log as failed.
     */
    async sendLicensePoolAlert(alert: LicensePoolAlert): Promise<void> {
      const staff = await staffEmails(orm.em.fork(), alert.orgId);
      if (staff.emails.length === 0) return;
      try {
        await sendOnce(`license-pool-${alert.kind}:${alert.productId}:${alert.purchaseId}`, 'alert', alert.orgId, staff.emails, async () =>
          licensePoolMail({
            orgName: staff.orgName, productName: alert.productName, kind: alert.kind, available: alert.available,
            productUrl: `${config.baseUrl}/products/${alert.productId}`,
          }));
      } catch (error) {
        if (error instanceof ApplicationFailure && error.nonRetryable) return;
        throw error;
      }
    },
  };
}
