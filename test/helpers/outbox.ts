import type { Orm } from '../../src/db/orm';
import { claimDueDispatches, type DispatchClaim, type EngineRunLimits } from '../../src/services/workflow-outbox';
import { CLAIM_LEASE_MS } from '../../src/temporal/dispatcher';

class RolledBack extends Error {}

/** What a dispatcher's claim would take now, its lease and marks rolled back: the next claim sees the same outbox. */
export async function claimRolledBack(orm: Orm, limit: number, limits: EngineRunLimits): Promise<DispatchClaim> {
  let claimed: DispatchClaim = { rows: [], heldOrganisations: [] };
  await orm.em.fork().transactional(async (tx) => {
    claimed = await claimDueDispatches(tx, limit, limits, CLAIM_LEASE_MS);
    throw new RolledBack();
  }).catch((error: unknown) => {
    if (!(error instanceof RolledBack)) throw error;
  });
  return claimed;
}
