import type { ItemOutcomeReport, OrderAlertRequest } from '../src/domain/fulfilment';
import { announceFreedPlace } from '../src/deliveries/engine-runs-store';
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
      // The outcomes are committed: a failed word only leaves the freed place to the dispatchers' poll.
      await announceFreedPlace(orm.em.fork()).catch(() => undefined);
      countFulfilments(items.map((i) => i.outcome));
      return alerts;
    },
  };
}
