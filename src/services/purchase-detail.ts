/**
 * One purchase as the dashboard's purchase page shows it: its row as the lists read it, its download
 * allowance (decisions §10), and its evidence record (decisions §11: links issued, page opens and
 * file transfers, staff actions, receipts, delivery log entries). Read-only.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../db/legacy-sql';
import type { EvidenceRecord } from '../domain/evidence';
import { NotFoundError } from '../domain/errors';
import { isUuid } from '../domain/uuid';
import type { Principal } from '../domain/access';
import { isAdminRole } from '../domain/statuses';
import { displayAmount, type PurchaseRow } from '../purchases/purchase-rows';
import { purchaseEvidence } from './evidence';
import { COUNTED_TRANSFERS_SQL } from './downloads';

export interface PurchaseAllowance {
  /** The product's limit; null = unlimited. */
  product: number | null;
  /** This purchase's own limit; null = the product's. */
  override: number | null;
  /** What applies: the purchase's own limit, else the product's; null = unlimited. */
  effective: number | null;
  /** Completed file transfers since the purchase was made or last re-armed (counted as the file URLs count them). */
  used: number;
  /** When the count last restarted (re-arm); null: it counts from the purchase. */
  countedFrom: string | null;
}

export interface PurchaseDetail {
  purchase: PurchaseRow;
  allowance: PurchaseAllowance;
  evidence: EvidenceRecord;
}

interface DetailRow extends PurchaseRow {
  productDownloadLimit: number | null;
  countedFrom: string | null;
  used: string | number;
}

const DETAIL_SQL = `select p.id, ${isoUtc('p.created_at')} as "createdAt", pr.id as "productId", pr.name as "productName",
    p.version_id as "versionId", c.id as "customerId", c.name as "customerName", c.email as "customerEmail",
    p.amount::text as amount, p.currency, p.payment_method as "paymentMethod", p.source,
    p.external_order_id as "externalOrderId", p.test, p.receipt_status as "receiptStatus",
    ${isoUtc('p.receipt_sent_at')} as "receiptSentAt", ${isoUtc('p.revoked_at')} as "revokedAt",
    p.revoke_reason as "revokeReason", p.download_limit as "downloadLimit",
    pr.download_limit as "productDownloadLimit", ${isoUtc('p.downloads_counted_from')} as "countedFrom",
    ${COUNTED_TRANSFERS_SQL} as used
  from purchase p join customer c on c.id = p.customer_id join product pr on pr.id = p.product_id
  where p.id = ? and p.organisation_id = ?`;

/**
 * The purchase of the viewer's organisation with its allowance and evidence; unknown, malformed or
 * another organisation's id → 404. Buyers' IP addresses are personal data that only owners and
 * admins, who answer disputes, need: a member sees none.
 */
export async function purchaseDetail(em: EntityManager, viewer: Pick<Principal, 'orgId' | 'role'>, purchaseId: string, now: Date): Promise<PurchaseDetail> {
  const { orgId } = viewer;
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  const [row] = await em.execute<DetailRow[]>(DETAIL_SQL, [purchaseId, orgId]);
  if (!row) throw new NotFoundError('purchase not found');
  const evidence = await purchaseEvidence(em, orgId, purchaseId, now);
  const { productDownloadLimit, countedFrom, used, ...stored } = row;
  const purchase: PurchaseRow = {
    ...stored,
    amount: displayAmount(stored.amount, stored.currency),
    currency: stored.currency.toUpperCase(),
  };
  return {
    purchase,
    allowance: {
      product: productDownloadLimit,
      override: stored.downloadLimit,
      effective: stored.downloadLimit ?? productDownloadLimit,
      used: Number(used),
      countedFrom,
    },
    evidence: isAdminRole(viewer.role) ? evidence : { ...evidence, accesses: evidence.accesses.map((access) => ({ ...access, ip: null })) },
  };
}
