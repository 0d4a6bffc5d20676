import { proxyLocalActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DATABASE_STEP } from '../src/domain/activity-policy';
import type { RevocationRequest } from '../src/domain/revocation';
import type { ItemOutcome } from '../src/domain/statuses';

const { applyRevocation } = proxyLocalActivities<Activities>(DATABASE_STEP);

/**
 * One refund or dispute event (decisions §9): revokes the purchases it names and writes each of
 * its delivery items' outcome. The step is idempotent by the purchase (revoked once) and the item
 * (decided once), so a retried or repeated run changes nothing; a run of its own in the Web UI
 * shows operators every revocation beside the fulfilments.
 */
export async function purchaseRevocation(request: RevocationRequest): Promise<ItemOutcome[]> {
  return applyRevocation(request);
}
