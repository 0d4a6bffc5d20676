/**
 * Revocation (decisions §9): what a refund or dispute event does to the purchases it names, what a
 * refund that came before its order leaves for that order, and the staff's revoke and restore.
 * Nothing is ever deleted: a revoked purchase keeps its rows, its links answer 410.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RevocationRequest } from '../domain/revocation';
import { deliveryStatusOf, type ItemOutcome, type RevokeReason } from '../domain/statuses';
import { NotFoundError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import { wakeIfWaitingForKey } from '../licenses/license-pool';
import {
  addDecidedItem, closeEntry, decideItem, itemOutcomesOf, lockRevocationEntry, nextLineIndex, undecidedItems,
} from '../deliveries/delivery-store';
import { logStaffAction, type StaffActor } from '../purchases/link-store';
import {
  leaveRevocationNotice, lockOrderRevocations, lockPurchaseRevocation, purchasesOfRevokedOrder,
  restoreByStaff, revokeByStaff, revokeForEvent, type LockedRevocation, type PurchaseMatch,
} from '../purchases/revocation-store';

/** Why an event leaves a purchase as it is: staff gave access back after the event. */
const RESTORED_LATER = 'access restored by staff after this event';

/**
 * Revokes one purchase unless it already is, or staff restored it after the event (received at
 * `eventAt`): their restore is the later decision, so a late or redelivered event keeps it. Tells which.
 */
async function revokeOne(tx: EntityManager, purchaseId: string, reason: RevokeReason, eventAt: Date, now: Date): Promise<'revoked' | 'already revoked' | 'kept'> {
  const row = await revokeForEvent(tx, purchaseId, reason, eventAt, now);
  if (row.revoked) {
    await wakeIfWaitingForKey(tx, purchaseId);
    return 'revoked';
  }
  return row.restored_later ? 'kept' : 'already revoked';
}

/**
 * Applies one refund or dispute entry: each of its items not yet decided gets `revoked`,
 * `already revoked` or `not found`; a whole-order item becomes one item per purchase of the order.
 * An item that finds no purchase leaves a notice, so the order, when it arrives, is recorded
 * revoked. Idempotent: decided items are skipped, so a retried or repeated run changes nothing.
 * Returns the outcomes written by this call.
 */
export async function applyRevocation(em: EntityManager, request: RevocationRequest, now: Date): Promise<ItemOutcome[]> {
  return em.transactional(async (tx) => {
    // Serialised with the receipt check of the same order: whichever comes second sees the first's commit.
    await lockOrderRevocations(tx, request.orgId, request.platform, request.orderRef);
    // When the event happened, as far as we know: the first receipt of its event id (a redelivery
    // repeats the event), else the receipt of this entry.
    const entry = await lockRevocationEntry(tx, request.orgId, request.deliveryId);
    if (!entry) return [];
    const eventAt = new Date(entry.event_at);
    const items = await undecidedItems(tx, request.deliveryId);
    const written: ItemOutcome[] = [];
    const decide = async (itemId: string, outcome: ItemOutcome, purchase: PurchaseMatch | null, reason: string | null) => {
      await decideItem(tx, { itemId, outcome, reason, purchaseId: purchase?.id ?? null, productId: purchase?.product_id ?? null });
      written.push(outcome);
    };
    const leaveNotice = (productId: string | null) => leaveRevocationNotice(tx, request, productId, now);
    const purchasesOf = (productId: string | null) => purchasesOfRevokedOrder(tx, request, productId);

    let nextLine = await nextLineIndex(tx, request.deliveryId);
    for (const item of items) {
      if (item.product_id === null && item.sku !== null) {
        await decide(item.id, 'not found', null, 'no product has this SKU');
        continue;
      }
      const purchases = await purchasesOf(item.product_id);
      if (purchases.length === 0) {
        await leaveNotice(item.product_id);
        await decide(item.id, 'not found', null, 'no purchase of this order yet: it will be revoked when the order arrives');
        continue;
      }
      // A whole-order item stands for the first purchase; each further one gets an item of its own.
      for (const [index, purchase] of purchases.entries()) {
        const outcome = await revokeOne(tx, purchase.id, request.reason, eventAt, now);
        const reason = outcome === 'kept' ? RESTORED_LATER : null;
        if (index === 0) {
          await decide(item.id, outcome, purchase, reason);
        } else {
          await addDecidedItem(tx, {
            deliveryId: request.deliveryId, lineIndex: nextLine, productId: purchase.product_id, outcome, reason, purchaseId: purchase.id,
          });
          nextLine += 1;
          written.push(outcome);
        }
      }
    }
    const outcomes = await itemOutcomesOf(tx, request.deliveryId);
    await closeEntry(tx, request.deliveryId, deliveryStatusOf(outcomes), now);
    return written;
  });
}

export interface RevocationState {
  purchaseId: string;
  revokedAt: Date | null;
  revokeReason: RevokeReason | null;
}

/** The purchase of this organisation, locked for the caller's transaction; 404 otherwise. */
async function lockedPurchase(tx: EntityManager, orgId: string, purchaseId: string): Promise<LockedRevocation> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  const row = await lockPurchaseRevocation(tx, orgId, purchaseId);
  if (!row) throw new NotFoundError('purchase not found');
  return row;
}

const revocationStateOf = (row: { id: string; revoked_at: Date | string | null; revoke_reason: RevokeReason | null }): RevocationState => ({
  purchaseId: row.id,
  revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at),
  revokeReason: row.revoke_reason,
});

/** Staff revoke by hand (reason `manual`). Idempotent: a revoked purchase stays as it is, unlogged. */
export async function revokeByHand(em: EntityManager, orgId: string, purchaseId: string, actor: StaffActor, now: Date): Promise<RevocationState> {
  return em.transactional(async (tx) => {
    const row = await lockedPurchase(tx, orgId, purchaseId);
    if (row.revoked_at !== null) return revocationStateOf(row);
    await revokeByStaff(tx, purchaseId, now);
    await wakeIfWaitingForKey(tx, purchaseId);
    await logStaffAction(tx, row, 'revoke', actor, 'manual', now);
    return { purchaseId, revokedAt: now, revokeReason: 'manual' };
  });
}

/**
 * Staff restore access: the purchase's links work again (those not expired or used). Idempotent.
 * The time is kept: a refund or dispute event from before it no longer revokes the purchase.
 */
export async function restoreByHand(em: EntityManager, orgId: string, purchaseId: string, actor: StaffActor, now: Date): Promise<RevocationState> {
  return em.transactional(async (tx) => {
    const row = await lockedPurchase(tx, orgId, purchaseId);
    if (row.revoked_at === null) return revocationStateOf(row);
    await restoreByStaff(tx, purchaseId, now);
    await logStaffAction(tx, row, 'restore', actor, `was revoked (${row.revoke_reason ?? 'unknown'})`, now);
    return revocationStateOf({ ...row, revoked_at: null, revoke_reason: null });
  });
}

