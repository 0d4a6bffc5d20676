import { noteItemsWaiting } from '../src/deliveries/delivery-store';
import { RECEIPT_RETRYING_REASON, type ItemOutcomeReport, type OrderAlertRequest } from '../src/domain/fulfilment';
import { recordItemOutcomes } from '../src/services/delivery-log';
import type { ActivityDeps } from './deps';
import { countFulfilments } from './metrics';

export function deliveryActivities({ orm }: ActivityDeps) {
  return {
    /** The run's undecided items show that its receipt is being retried (and stop counting as a run at work). */
    async noteReceiptRetrying({ itemIds }: { itemIds: string[] }): Promise<void> {
      await noteItemsWaiting(orm.em.fork(), itemIds, RECEIPT_RETRYING_REASON);
    },

    /**
     * Writes the outcomes of a run's delivery items and finalises their entries; returns the
     * alerts due (see services/delivery-log). The front door uses the same function.
     */
    async recordItemOutcomes({ items }: { items: ItemOutcomeReport[] }): Promise<OrderAlertRequest[]> {
      const alerts = await recordItemOutcomes(orm.em.fork(), items);
      countFulfilments(items.map((i) => i.outcome));
      return alerts;
    },
  };
}
