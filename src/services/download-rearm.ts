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
import { logStaffAction, type StaffActor } from './revocations';
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
    const [purchase] = await tx.execute<Array<{ id: string; organisation_id: string; email: string; revoked: boolean }>>(
      `select p.id, p.organisation_id, c.email, p.revoked_at is not null as revoked
       from purchase p join customer c on c.id = p.customer_id where p.id = ? and p.organisation_id = ? for update of p`,
      [purchaseId, orgId],
    );
    if (!purchase) throw new NotFoundError('purchase not found');
    if (purchase.revoked) throw new ConflictError('access to this purchase is withdrawn: restore it before re-arming');
    await tx.execute('update purchase set downloads_counted_from = ? where id = ?', [now, purchaseId]);
    await forgetPurchaseCoverage(tx, purchaseId);
    await tx.execute(
      'update download_token set expires_at = ? where purchase_id = ? and used_at is null and expires_at > ?',
      [now, purchaseId, now],
    );
    await logStaffAction(tx, purchase, 'rearm', actor, `fresh link sent to ${purchase.email}`, now);
    const request: FreshLinksAsk = { requestId: randomUUID(), target: { purchaseId }, via: 're-arm' };
    await enqueueDispatches(tx, [{ kind: 'fresh-links', workflowId: freshLinksWorkflowId(request), orgId, payload: request }]);
    return { purchaseId, linkSentTo: purchase.email };
  });
}
