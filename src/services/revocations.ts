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
import {
  addDecidedItem, closeEntry, decideItem, itemOutcomesOf, lockRevocationEntry, nextLineIndex, undecidedItems,
} from '../deliveries/delivery-store';

interface PurchaseMatch {
  id: string;
  product_id: string;
  revoked: boolean;
}

/** The purchases an event's order reference names (an order id, or a payments-c payment). */
function orderRefSql(request: RevocationRequest): string {
  return request.refKind === 'payment' ? 'payment_reference = ?' : 'external_order_id = ?';
}

/**
 * Serialises a refund's application with the receipt check of the same order (see
 * `withdrawBeforeReceipt`): whichever comes second sees what the first committed.
 */
async function lockOrder(tx: EntityManager, orgId: string, source: string, ref: string): Promise<void> {
  await tx.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [`revoke:${orgId}:${source}:${ref}`]);
}

/** Why an event leaves a purchase as it is: staff gave access back after the event. */
const RESTORED_LATER = 'access restored by staff after this event';

/**
 * Revokes one purchase unless it already is, or staff restored it after the event (received at
 * `eventAt`): their restore is the later decision, so a late or redelivered event keeps it. Tells which.
 */
async function revokeOne(tx: EntityManager, purchaseId: string, reason: RevokeReason, eventAt: Date, now: Date): Promise<'revoked' | 'already revoked' | 'kept'> {
  const [row] = await tx.execute<Array<{ revoked: boolean; restored_later: boolean }>>(
    `with revoked as (
       update purchase set revoked_at = ?, revoke_reason = ?
       where id = ? and revoked_at is null and (restored_at is null or restored_at < ?) returning id)
     select exists (select 1 from revoked) as revoked, coalesce(restored_at >= ?, false) as restored_later from purchase where id = ?`,
    [now, reason, purchaseId, eventAt, eventAt, purchaseId],
  );
  if (row.revoked) return 'revoked';
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
    await lockOrder(tx, request.orgId, request.platform, request.orderRef);
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
    const leaveNotice = (productId: string | null) => tx.execute(
      `insert into revocation_notice (id, organisation_id, source, ref_kind, order_ref, product_id, reason, created_at)
       values (gen_random_uuid(), ?, ?, ?, ?, ?, ?, ?)`,
      [request.orgId, request.platform, request.refKind, request.orderRef, productId, request.reason, now],
    );
    const purchasesOf = (productId: string | null) => tx.execute<PurchaseMatch[]>(
      `select id, product_id, revoked_at is not null as revoked from purchase
       where organisation_id = ? and source = ? and ${orderRefSql(request)} ${productId === null ? '' : 'and product_id = ?'}
       order by created_at, id`,
      [request.orgId, request.platform, request.orderRef, ...(productId === null ? [] : [productId])],
    );

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

/**
 * Just before a receipt goes out: a refund that came before the order (its notice) withdraws the
 * purchase now, under the order's lock, so a refund applied at the same moment cannot slip between
 * the purchase's recording and its receipt. Returns whether the purchase is revoked (no receipt).
 */
export async function withdrawBeforeReceipt(em: EntityManager, purchaseId: string, now: Date): Promise<boolean> {
  return em.transactional(async (tx) => {
    const [purchase] = await tx.execute<Array<{ organisation_id: string; source: string; external_order_id: string | null; payment_reference: string | null; product_id: string; revoked: boolean }>>(
      `select organisation_id, source, external_order_id, payment_reference, product_id, revoked_at is not null as revoked
       from purchase where id = ?`,
      [purchaseId],
    );
    if (!purchase) return false;
    if (purchase.revoked) return true;
    const refs = [purchase.external_order_id, purchase.payment_reference].filter((r): r is string => r !== null).sort();
    if (refs.length === 0) return false;
    for (const ref of refs) await lockOrder(tx, purchase.organisation_id, purchase.source, ref);
    const rows = await tx.execute<Array<{ id: string }>>(
      `update purchase p set revoked_at = ?, revoke_reason = n.reason, receipt_status = 'skipped'
       from (select reason from revocation_notice
             where organisation_id = ? and source = ?
               and ((ref_kind = 'order' and order_ref = ?) or (ref_kind = 'payment' and order_ref = ?))
               and (product_id is null or product_id = ?)
             order by created_at limit 1) n
       where p.id = ? and p.revoked_at is null returning p.id`,
      [now, purchase.organisation_id, purchase.source, purchase.external_order_id ?? '', purchase.payment_reference ?? '', purchase.product_id, purchaseId],
    );
    if (rows.length > 0) return true;
    const [again] = await tx.execute<Array<{ revoked: boolean }>>('select revoked_at is not null as revoked from purchase where id = ?', [purchaseId]);
    return again.revoked;
  });
}

/** Who did a staff action, for the activity log: a user, in the dashboard or with their API key. */
export interface StaffActor {
  userId: string;
  via: 'key' | 'session';
}

/** A staff action on a purchase, in its activity log (the evidence record lists them). */
export async function logStaffAction(em: EntityManager, purchase: { id: string; organisation_id: string }, kind: 'revoke' | 'restore' | 'rearm' | 'download_limit', actor: StaffActor, detail: string | null, now: Date): Promise<void> {
  await em.execute(
    `insert into activity_log_entry (id, organisation_id, kind, purchase_id, actor, detail, created_at)
     select gen_random_uuid(), ?, ?, ?, (select email from app_user where id = ?) || ?, ?, ?`,
    [purchase.organisation_id, kind, purchase.id, actor.userId, actor.via === 'key' ? ' (API key)' : '', detail, now],
  );
}

export interface RevocationState {
  purchaseId: string;
  revokedAt: Date | null;
  revokeReason: RevokeReason | null;
}

/** The purchase of this organisation, locked for the caller's transaction; 404 otherwise. */
async function lockedPurchase(tx: EntityManager, orgId: string, purchaseId: string) {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  const [row] = await tx.execute<Array<{ id: string; organisation_id: string; revoked_at: Date | string | null; revoke_reason: RevokeReason | null }>>(
    'select id, organisation_id, revoked_at, revoke_reason from purchase where id = ? and organisation_id = ? for update',
    [purchaseId, orgId],
  );
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
    await tx.execute(`update purchase set revoked_at = ?, revoke_reason = 'manual' where id = ?`, [now, purchaseId]);
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
    await tx.execute('update purchase set revoked_at = null, revoke_reason = null, restored_at = ? where id = ?', [now, purchaseId]);
    await logStaffAction(tx, row, 'restore', actor, `was revoked (${row.revoke_reason ?? 'unknown'})`, now);
    return revocationStateOf({ ...row, revoked_at: null, revoke_reason: null });
  });
}

