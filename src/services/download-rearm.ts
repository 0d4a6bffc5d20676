/**
 * Re-arm (decisions §10): a buyer who reached the download limit, or lost the link, gets a clean
 * slate. The count and the bytes sent restart, every open link of the purchase stops working, and a fresh link is
 * emailed to the purchase's own address by a freshLinks run recorded in the outbox with the change.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError } from '../domain/errors';
import type { FreshLinksAsk } from '../domain/fresh-links';
import { freshLinksWorkflowId } from '../domain/ids';
import { isUuid } from '../domain/uuid';
import { forgetPurchaseCoverage } from '../downloads/download-store';
import { expireOpenLinks, logStaffAction, type StaffActor } from '../purchases/link-store';
import { lockPurchaseForRearm, restartDownloadCount } from '../purchases/purchase-store';
import { countStaffMail } from './staff-mail-limit';
import { enqueueDispatches } from './workflow-outbox';

export interface Rearmed {
  purchaseId: string;
  /** The purchase's customer email: where the fresh link goes. */
  linkSentTo: string;
}

/** One transaction: reset, invalidate, log, and the email's outbox row. A revoked purchase is a 409. */
export async function rearmPurchase(em: EntityManager, orgId: string, purchaseId: string, actor: StaffActor, now: Date): Promise<Rearmed> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  return em.transactional(async (tx) => {
    const purchase = await lockPurchaseForRearm(tx, orgId, purchaseId);
    if (!purchase) throw new NotFoundError('purchase not found');
    if (purchase.revoked) throw new ConflictError('access to this purchase is withdrawn: restore it before re-arming');
    // Counted once the purchase is known to be the caller's and gets an email: a refused re-arm uses none.
    await countStaffMail(tx, purchaseId, now);
    await restartDownloadCount(tx, purchaseId, now);
    await forgetPurchaseCoverage(tx, purchaseId);
    await expireOpenLinks(tx, purchaseId, now);
    await logStaffAction(tx, purchase, 'rearm', actor, `fresh link sent to ${purchase.email}`, now);
    const request: FreshLinksAsk = { requestId: randomUUID(), target: { purchaseId }, via: 're-arm' };
    await enqueueDispatches(tx, [{ kind: 'fresh-links', workflowId: freshLinksWorkflowId(request), orgId, payload: request }]);
    return { purchaseId, linkSentTo: purchase.email };
  });
}
