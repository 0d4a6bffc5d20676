import type { ItemOutcomeReport, OrderAlertRequest } from '../src/domain/fulfilment';
import { recordItemOutcomes } from '../src/services/delivery-log';
import type { ActivityDeps } from './deps';
import { countFulfilments } from './metrics';

export function deliveryActivities({ orm }: ActivityDeps) {
  return {
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
