import type { RevocationRequest } from '../src/domain/revocation';
import type { ItemOutcome } from '../src/domain/statuses';
import { applyRevocation } from '../src/services/revocations';
import type { ActivityDeps } from './deps';

export function revocationActivities({ orm }: ActivityDeps) {
  return {
    /** Applies a refund or dispute entry (src/services/revocations): one transaction, repeatable. */
    async applyRevocation(request: RevocationRequest): Promise<ItemOutcome[]> {
      return applyRevocation(orm.em.fork(), request, new Date());
    },
  };
}
