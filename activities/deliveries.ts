import { alertDue, deliveryStatusOf, type ItemOutcome } from '../src/domain/statuses';
import type { ItemOutcomeReport, OrderAlertRequest } from '../src/domain/fulfilment';
import type { PurchaseSource } from '../src/domain/platforms';
import type { ActivityDeps } from './deps';

export function deliveryActivities({ orm }: ActivityDeps) {
  return {
    /**
     * Writes item outcomes (once: a retry changes nothing) and moves each touched entry from
     * Pending to its final status when its last item is in. Entries are locked so two runs that
     * finish together cannot both decide. Returns the alerts due, for every final Error entry with
     * nothing delivered (sending them is idempotent).
     */
    async recordItemOutcomes({ items }: { items: ItemOutcomeReport[] }): Promise<OrderAlertRequest[]> {
      const em = orm.em.fork();
      return em.transactional(async (tx) => {
        const deliveryIds = new Set<string>();
        for (const item of items) {
          const rows = await tx.execute<Array<{ delivery_id: string }>>(
            `update webhook_delivery_item set outcome = ?, reason = ?, purchase_id = ?
             where id = ? and outcome is null returning delivery_id`,
            [item.outcome, item.reason, item.purchaseId, item.itemId],
          );
          const [found] = rows.length ? rows : await tx.execute<Array<{ delivery_id: string }>>(
            'select delivery_id from webhook_delivery_item where id = ?', [item.itemId],
          );
          if (found) deliveryIds.add(found.delivery_id);
        }
        const alerts: OrderAlertRequest[] = [];
        for (const deliveryId of [...deliveryIds].sort()) {
          const [delivery] = await tx.execute<Array<{ organisation_id: string; platform: PurchaseSource; external_order_id: string; status: string }>>(
            'select organisation_id, platform, external_order_id, status from webhook_delivery where id = ? for update',
            [deliveryId],
          );
          const outcomes = (await tx.execute<Array<{ outcome: ItemOutcome | null }>>(
            'select outcome from webhook_delivery_item where delivery_id = ?', [deliveryId],
          )).map((r) => r.outcome);
          const status = deliveryStatusOf(outcomes);
          if (status !== 'Pending' && delivery.status === 'Pending') {
            await tx.execute(
              `update webhook_delivery set status = ?, unmatched = ?, completed_at = now() where id = ?`,
              [status, outcomes.includes('unmatched'), deliveryId],
            );
          }
          if (alertDue(outcomes)) {
            alerts.push({
              orgId: delivery.organisation_id,
              platform: delivery.platform,
              externalOrderId: delivery.external_order_id,
              deliveryId,
            });
          }
        }
        return alerts;
      });
    },
  };
}
