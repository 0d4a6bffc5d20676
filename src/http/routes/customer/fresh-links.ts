import { randomUUID } from 'node:crypto';
import type { FreshLinksAsk } from '../../../domain/fresh-links';
import { freshLinksWorkflowId } from '../../../domain/ids';
import { enqueueDispatches } from '../../../services/workflow-outbox';
import type { AppDeps } from '../../app';

/**
 * Records a freshLinks run for one request (a new request id each time) in the outbox: the
 * answer waits only for PostgreSQL, and the links go out once Temporal takes the row, even if it
 * is out of reach right now. `orgId` is the purchase's organisation when the request names one;
 * `via` says staff asked (the links' origin in the evidence), absent for the buyer's own request.
 */
export async function requestFreshLinks(
  deps: AppDeps, target: FreshLinksAsk['target'], orgId: string | null = null, via?: FreshLinksAsk['via'],
): Promise<void> {
  const request: FreshLinksAsk = { requestId: randomUUID(), target, ...(via ? { via } : {}) };
  await enqueueDispatches(deps.orm.em.fork(), [
    { kind: 'fresh-links', workflowId: freshLinksWorkflowId(request), orgId, payload: request },
  ]);
  deps.dispatcher.recorded(orgId);
}
