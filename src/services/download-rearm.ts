/**
 * Re-arm (decisions §10): a buyer who reached the download limit, or lost the link, gets a clean
 * slate. The count and the bytes sent restart, every open link of the purchase stops working, and a fresh link is
 * emailed to the purchase's own address by a freshLinks run recorded in the outbox with the change.
 * The dashboard's "Resend link" is the same fresh link without the reset.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { ConflictError, NotFoundError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import { forgetPurchaseCoverage } from '../downloads/download-store';
import { expireOpenLinks, logStaffAction, type StaffActor } from '../purchases/link-store';
import { lockPurchaseForRearm, restartDownloadCount } from '../purchases/purchase-store';
import { countStaffMail } from './staff-mail-limit';
import { enqueueDispatches, freshLinksDispatch } from './workflow-outbox';

export interface Rearmed {
  purchaseId: string;
  /** The purchase's customer email: where the fresh link goes. */
  linkSentTo: string;
}

/**
 * A fresh link emailed by staff to the purchase's own address, in one transaction with `before`
 * (what else the action changes): the purchase locked, the staff email counted (once the purchase is
 * known to be the caller's and gets an email: a refused one uses none), the action logged, and the
 * freshLinks run's outbox row. A revoked purchase is a 409 (`revokedRefusal`).
 */
async function staffFreshLink(
  em: EntityManager, orgId: string, purchaseId: string, actor: StaffActor, now: Date,
  action: { kind: 'rearm' | 'resend'; via: 're-arm' | 'staff-resend'; revokedRefusal: string; before?: (tx: EntityManager) => Promise<void> },
): Promise<Rearmed> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  return em.transactional(async (tx) => {
    const purchase = await lockPurchaseForRearm(tx, orgId, purchaseId);
    if (!purchase) throw new NotFoundError('purchase not found');
    if (purchase.revoked) throw new ConflictError(action.revokedRefusal);
    await countStaffMail(tx, purchaseId, now);
    await action.before?.(tx);
    await logStaffAction(tx, purchase, action.kind, actor, `fresh link sent to ${purchase.email}`, now);
    await enqueueDispatches(tx, [freshLinksDispatch({ purchaseId }, orgId, action.via)]);
    return { purchaseId, linkSentTo: purchase.email };
  });
}

/** Re-arm: reset the count and the byte budgets, invalidate every open link, and email a fresh one. */
export function rearmPurchase(em: EntityManager, orgId: string, purchaseId: string, actor: StaffActor, now: Date): Promise<Rearmed> {
  return staffFreshLink(em, orgId, purchaseId, actor, now, {
    kind: 'rearm', via: 're-arm', revokedRefusal: 'access to this purchase is withdrawn: restore it before re-arming',
    before: async (tx) => {
      await restartDownloadCount(tx, purchaseId, now);
      await forgetPurchaseCoverage(tx, purchaseId);
      await expireOpenLinks(tx, purchaseId, now);
    },
  });
}

/** The dashboard's "Resend link": the same run as an expired link's button, logged as the staff's action. */
export function resendPurchaseLink(em: EntityManager, orgId: string, purchaseId: string, actor: StaffActor, now: Date): Promise<Rearmed> {
  return staffFreshLink(em, orgId, purchaseId, actor, now, {
    kind: 'resend', via: 'staff-resend', revokedRefusal: 'access to this purchase is withdrawn: restore it before sending a link',
  });
}
