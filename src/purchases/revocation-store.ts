/**
 * Revocation as stored (decisions §9): purchases withdrawn and given back, and the notices a refund
 * that came before its order leaves for it. Owns the table `revocation_notice` and the revocation
 * columns of `purchase` (revoked_at, revoke_reason, restored_at).
 */
import { sql, type Parameters } from '../db/sql';

/** What a notice is looked up by: the order's organisation, platform, order and payment references, product. */
export interface NoticeKey {
  orgId: string;
  source: string;
  /** The order's id, '' when it has none. */
  orderRef: string;
  /** The order's payment reference, '' when it has none. */
  paymentRef: string;
  productId: string;
}

/** The reason of the oldest notice that names this order line (none: no row). */
export const firstNotice = (p: Parameters<NoticeKey>) => sql`select reason from revocation_notice
  where organisation_id = ${p.orgId} and source = ${p.source}
    and ((ref_kind = 'order' and order_ref = ${p.orderRef}) or (ref_kind = 'payment' and order_ref = ${p.paymentRef}))
    and (product_id is null or product_id = ${p.productId})
  order by created_at limit 1`;
