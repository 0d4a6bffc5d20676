/**
 * One purchase as the dashboard's purchase page shows it: its row as the lists read it, its download
 * allowance (decisions §10), its license key (§14), and its evidence record (decisions §11: links issued, page opens and
 * file transfers, staff actions, receipts, delivery log entries). Read-only.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { EvidenceEmail, EvidenceRecord } from '../domain/evidence';
import { NotFoundError } from '../domain/errors';
import type { Principal } from '../domain/access';
import { isAdminRole } from '../domain/statuses';
import { purchaseDetailRow, type PurchaseRow } from '../purchases/purchase-store';
import { purchaseLicenseState, type PurchaseLicenseState } from '../licenses/license-activations';
import { purchaseEvidence } from './evidence';

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

/** The purchase's reminder to download (decisions §16), as its page states it. */
export type PurchaseReminder =
  | { state: 'sent'; at: string }
  | { state: 'refused' }
  | { state: 'due'; at: string }
  | { state: 'none' };

export interface PurchaseDetail {
  purchase: PurchaseRow;
  allowance: PurchaseAllowance;
  reminder: PurchaseReminder;
  evidence: EvidenceRecord;
  /** Its license key with the installations (decisions §14), or why it has none. */
  license: PurchaseLicenseState;
}

/** What the sent-email log says of the reminder; without a row, when it is due (if it still would go). */
function reminderOf(email: EvidenceEmail | null, dueAt: string | null): PurchaseReminder {
  if (email?.status === 'sent' && email.acceptedAt !== null) return { state: 'sent', at: email.acceptedAt };
  if (email?.status === 'failed') return { state: 'refused' };
  return dueAt === null ? { state: 'none' } : { state: 'due', at: dueAt };
}

/**
 * The purchase of the viewer's organisation with its allowance and evidence; unknown, malformed or
 * another organisation's id → 404. Buyers' IP addresses are personal data that only owners and
 * admins, who answer disputes, need: a member sees none.
 */
export async function purchaseDetail(em: EntityManager, viewer: Pick<Principal, 'orgId' | 'role'>, purchaseId: string, now: Date): Promise<PurchaseDetail> {
  const { orgId } = viewer;
  const row = await purchaseDetailRow(em, orgId, purchaseId);
  if (!row) throw new NotFoundError('purchase not found');
  const license = await purchaseLicenseState(em, orgId, purchaseId);
  const evidence = await purchaseEvidence(em, orgId, purchaseId, now, license);
  const { productDownloadLimit, countedFrom, used, reminderDueAt, ...purchase } = row;
  return {
    purchase,
    reminder: reminderOf(evidence.reminder, reminderDueAt),
    allowance: {
      product: productDownloadLimit,
      override: purchase.downloadLimit,
      effective: purchase.downloadLimit ?? productDownloadLimit,
      used,
      countedFrom,
    },
    evidence: isAdminRole(viewer.role) ? evidence : { ...evidence, accesses: evidence.accesses.map((access) => ({ ...access, ip: null })) },
    license,
  };
}
