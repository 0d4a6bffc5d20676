/**
 * Revocation as stored (decisions §9): purchases withdrawn and given back, and the notices a refund
 * that came before its order leaves for it. Owns the table `revocation_notice` and the revocation
 * columns of `purchase` (revoked_at, revoke_reason, restored_at).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { sql, statement, trustedSql, type NoRows, type Parameters, type Sql } from '../db/sql';
import type { RevocationRequest } from '../domain/revocation';
import type { RevokeReason } from '../domain/statuses';

/**
 * The reason of the oldest notice that names the order line of input row `i` (null: none), for
 * the statement that records purchases (its `input` has org_id, source, order_ref ('' for none),
 * payment_ref ('' for none) and product_id). The lookup is the database function
 * `revocation_notice_reason` (migration 20261206140000), which the receipt check
 * `withdraw_before_receipt` calls too.
 */
export const noticeReasonOfLine = sql`revocation_notice_reason(i.org_id, i.source, i.order_ref, i.payment_ref, i.product_id)`;

const orderLock = statement<{ locked: unknown }, { orgId: string; source: string; ref: string }>(
  { locked: true }, (p) => sql`select order_revocation_lock(${p.orgId}::uuid, ${p.source}::text, ${p.ref}::text) as locked`,
);

/**
 * Serialises, until the caller's transaction ends, the revocations of one order with the receipt
 * check of its purchases (`withdrawBeforeReceipt`, which takes the same lock): whichever comes
 * second sees what the first committed.
 */
export async function lockOrderRevocations(tx: EntityManager, orgId: string, source: string, ref: string): Promise<void> {
  await orderLock.run(tx, { orgId, source, ref });
}

const noticeInsert = statement<NoRows, {
  orgId: string; source: string; refKind: string; orderRef: string; productId: string | null; reason: string; now: Date;
}>({}, (p) => sql`insert into revocation_notice (id, organisation_id, source, ref_kind, order_ref, product_id, reason, created_at)
       values (gen_random_uuid(), ${p.orgId}, ${p.source}, ${p.refKind}, ${p.orderRef}, ${p.productId}, ${p.reason}, ${p.now})`);

/** A refund or dispute that found no purchase of its order (line): the order, when it arrives, is recorded revoked. */
export async function leaveRevocationNotice(
  tx: EntityManager, request: Pick<RevocationRequest, 'orgId' | 'platform' | 'refKind' | 'orderRef' | 'reason'>, productId: string | null, now: Date,
): Promise<void> {
  await noticeInsert.run(tx, {
    orgId: request.orgId, source: request.platform, refKind: request.refKind, orderRef: request.orderRef, productId, reason: request.reason, now,
  });
}

export interface PurchaseMatch {
  id: string;
  product_id: string;
  revoked: boolean;
}

// The purchases an event's order reference names (an order id, or a payments-c payment), of one
// product or all: one statement per kind of reference and scope.
type OrderParams = { orgId: string; source: string; ref: string };
const ordersPurchases = <Scope>(refColumn: string, product: (p: Parameters<OrderParams & Scope>) => Sql) =>
  (p: Parameters<OrderParams & Scope>) => sql`select id, product_id, revoked_at is not null as revoked from purchase
       where organisation_id = ${p.orgId} and source = ${p.source} and ${trustedSql(refColumn)} = ${p.ref} ${product(p)}
       order by created_at, id`;
const MATCH_KEYS = { id: true, product_id: true, revoked: true } as const;
/** No parameter more: every product of the order. */
type EveryProduct = Record<never, never>;
const ANY_PRODUCT = () => sql``;
const ONE_PRODUCT = (p: Parameters<{ productId: string }>) => sql`and product_id = ${p.productId}`;
const purchasesOfOrder = {
  order: {
    all: statement<PurchaseMatch, OrderParams>(MATCH_KEYS, ordersPurchases<EveryProduct>('external_order_id', ANY_PRODUCT)),
    one: statement<PurchaseMatch, OrderParams & { productId: string }>(MATCH_KEYS, ordersPurchases('external_order_id', ONE_PRODUCT)),
  },
  payment: {
    all: statement<PurchaseMatch, OrderParams>(MATCH_KEYS, ordersPurchases<EveryProduct>('payment_reference', ANY_PRODUCT)),
    one: statement<PurchaseMatch, OrderParams & { productId: string }>(MATCH_KEYS, ordersPurchases('payment_reference', ONE_PRODUCT)),
  },
};

/** The purchases the request's order reference names, of the product (null: of every product), oldest first. */
export function purchasesOfRevokedOrder(
  tx: EntityManager, request: Pick<RevocationRequest, 'orgId' | 'platform' | 'refKind' | 'orderRef'>, productId: string | null,
): Promise<PurchaseMatch[]> {
  const statements = purchasesOfOrder[request.refKind === 'payment' ? 'payment' : 'order'];
  const params = { orgId: request.orgId, source: request.platform, ref: request.orderRef };
  return productId === null ? statements.all.rows(tx, params) : statements.one.rows(tx, { ...params, productId });
}

const eventRevoke = statement<{ revoked: boolean; restored_later: boolean }, { purchaseId: string; reason: string; eventAt: Date; now: Date }>(
  { revoked: true, restored_later: true },
  (p) => sql`with revoked as (
       update purchase set revoked_at = ${p.now}, revoke_reason = ${p.reason}
       where id = ${p.purchaseId} and revoked_at is null and (restored_at is null or restored_at < ${p.eventAt}) returning id)
     select exists (select 1 from revoked) as revoked, coalesce(restored_at >= ${p.eventAt}, false) as restored_later from purchase where id = ${p.purchaseId}`,
);

/**
 * Revokes one purchase for an event received at `eventAt` unless it already is revoked, or staff
 * restored it after the event: whether it did, and whether a later restore kept it.
 */
export async function revokeForEvent(
  tx: EntityManager, purchaseId: string, reason: RevokeReason, eventAt: Date, now: Date,
): Promise<{ revoked: boolean; restored_later: boolean }> {
  return (await eventRevoke.first(tx, { purchaseId, reason, eventAt, now }))!;
}

const receiptCheck = statement<{ withdrawn: boolean }, { purchaseId: string; now: Date }>(
  { withdrawn: true }, (p) => sql`select withdraw_before_receipt(${p.purchaseId}::uuid, ${p.now}::timestamptz) as withdrawn`,
);

/**
 * Just before a receipt goes out: a refund that came before the order (its notice) withdraws the
 * purchase now, under the order's locks, so a refund applied at the same moment cannot slip between
 * the purchase's recording and its receipt. Whether the purchase is revoked (no receipt); false for
 * an unknown one. One call of `withdraw_before_receipt` (migration 20261206140000): it reads the
 * notice after taking the locks, with a snapshot of its own, which one plain statement could not.
 */
export async function withdrawBeforeReceipt(em: EntityManager, purchaseId: string, now: Date): Promise<boolean> {
  return (await receiptCheck.first(em, { purchaseId, now }))!.withdrawn;
}

export interface LockedRevocation {
  id: string;
  organisation_id: string;
  revoked_at: Date | string | null;
  revoke_reason: RevokeReason | null;
}

const revocationLock = statement<LockedRevocation, { orgId: string; purchaseId: string }>(
  { id: true, organisation_id: true, revoked_at: true, revoke_reason: true },
  (p) => sql`select id, organisation_id, revoked_at, revoke_reason from purchase where id = ${p.purchaseId} and organisation_id = ${p.orgId} for update`,
);

/** The purchase of this organisation with its revocation, locked for the caller's transaction; undefined otherwise. */
export function lockPurchaseRevocation(tx: EntityManager, orgId: string, purchaseId: string): Promise<LockedRevocation | undefined> {
  return revocationLock.first(tx, { orgId, purchaseId });
}

const handRevoke = statement<NoRows, { purchaseId: string; now: Date }>(
  {}, (p) => sql`update purchase set revoked_at = ${p.now}, revoke_reason = 'manual' where id = ${p.purchaseId}`,
);

/** Staff revoke by hand (reason `manual`). */
export async function revokeByStaff(tx: EntityManager, purchaseId: string, now: Date): Promise<void> {
  await handRevoke.run(tx, { purchaseId, now });
}

const handRestore = statement<NoRows, { purchaseId: string; now: Date }>(
  {}, (p) => sql`update purchase set revoked_at = null, revoke_reason = null, restored_at = ${p.now} where id = ${p.purchaseId}`,
);

/** Staff restore access; the time is kept (an event from before it no longer revokes the purchase). */
export async function restoreByStaff(tx: EntityManager, purchaseId: string, now: Date): Promise<void> {
  await handRestore.run(tx, { purchaseId, now });
}
