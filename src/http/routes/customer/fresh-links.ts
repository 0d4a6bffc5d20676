import type { FreshLinksAsk } from '../../../domain/fresh-links';
import { enqueueDispatches, freshLinksDispatch } from '../../../services/workflow-outbox';
import type { AppDeps } from '../../app';

/**
 * Records a buyer's freshLinks request in the outbox: the answer waits only for PostgreSQL, and the
 * links go out once Temporal takes the row, even if it is out of reach right now. `orgId` is the
 * purchase's organisation when the request names one.
 */
export async function requestFreshLinks(deps: AppDeps, target: FreshLinksAsk['target'], orgId: string | null = null): Promise<void> {
  await enqueueDispatches(deps.orm.em.fork(), [freshLinksDispatch(target, orgId)]);
  deps.dispatcher.recorded(orgId);
}
