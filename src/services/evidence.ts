/**
 * Gathers the dispute evidence record of one purchase (decisions §11) from what the service keeps
 * anyway: the purchase, its order's delivery log entries, the receipt's and the reminder's sent-email rows, the links
 * issued, and the purchase's activity log (the newest page opens and transfers with the count of
 * the rest, staff actions), the license key with its activations. Read-only.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { NotFoundError } from '../domain/errors';
import { EVIDENCE_ACCESS_ROWS, type EvidenceDeliveryEntry, type EvidenceEmail, type EvidenceRecord } from '../domain/evidence';
import { isUuid } from '../domain/uuid';
import { displayAmount, evidencePurchase } from '../purchases/purchase-store';
import { linksOfPurchase, newestAccesses, staffActionsOf, type AccessLogKind } from '../purchases/link-store';
import { orderDeliveryRows } from '../deliveries/delivery-store';
import { receiptRows, reminderRows, type ReceiptRow } from '../deliveries/mail-ledger-store';
import { purchaseLicenseState, type PurchaseLicenseState } from '../licenses/license-activations';

const ACCESS_KINDS: Record<AccessLogKind, EvidenceRecord['accesses'][number]['kind']> = {
  page_open: 'page open',
  file_download: 'file transfer',
  download_session: 'download complete',
};

const evidenceEmail = (r: ReceiptRow): EvidenceEmail => ({
  status: r.status, acceptedAt: r.sent_at, messageId: r.message_id, recipients: r.recipients, subject: r.subject,
});

/**
 * The newest EVIDENCE_ACCESS_ROWS of rows in time order: links and installations grow with what a
 * link holder does (a fresh link, an activation), and the record, its PDF above all, must not
 * grow with them without bound.
 */
function newest<T>(rows: T[]): T[] {
  return rows.slice(-EVIDENCE_ACCESS_ROWS);
}

export async function purchaseEvidence(
  em: EntityManager, orgId: string, purchaseId: string, now: Date, knownLicense?: PurchaseLicenseState,
): Promise<EvidenceRecord> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  const purchase = await evidencePurchase(em, orgId, purchaseId);
  if (!purchase) throw new NotFoundError('purchase not found');

  const refs = [purchase.externalOrderId, purchase.paymentReference].filter((r): r is string => r !== null);
  const deliveryRows = refs.length === 0 ? [] : await orderDeliveryRows(em, orgId, purchase.source, refs);
  const deliveries: EvidenceDeliveryEntry[] = deliveryRows.map((d) => ({
    id: d.id, platform: d.platform, kind: d.kind, status: d.status, receivedAt: d.received_at, completedAt: d.completed_at, items: d.items,
  }));

  const receipts = await receiptRows(em, purchaseId);
  const [reminder] = await reminderRows(em, purchaseId);
  const links = await linksOfPurchase(em, purchaseId);
  const accesses = await newestAccesses(em, purchaseId, EVIDENCE_ACCESS_ROWS);
  const staffActions = await staffActionsOf(em, purchaseId);
  // The purchase page has read it already.
  const license = knownLicense ?? await purchaseLicenseState(em, orgId, purchaseId);
  // Every row carries the count of all (a window over the rows before the limit).
  const accessesTotal = accesses.length === 0 ? 0 : Number(accesses[0].total);

  return {
    generatedAt: now.toISOString(),
    seller: { organisation: purchase.organisation, supportEmail: purchase.supportEmail },
    purchase: {
      id: purchase.id, product: purchase.productName, version: purchase.version, createdAt: purchase.createdAt,
      test: purchase.test, revokedAt: purchase.revokedAt, revokeReason: purchase.revokeReason,
    },
    customer: { name: purchase.customerName, email: purchase.customerEmail },
    order: {
      source: purchase.source,
      externalOrderId: purchase.externalOrderId,
      amount: displayAmount(purchase.amount, purchase.currency),
      currency: purchase.currency.toUpperCase(),
      paymentMethod: purchase.paymentMethod,
      receivedAt: deliveries.find((d) => d.kind === 'order')?.receivedAt ?? purchase.createdAt,
      deliveries,
    },
    receipts: receipts.map(evidenceEmail),
    reminder: reminder === undefined ? null : evidenceEmail(reminder),
    links: newest(links).map((l) => ({ issuedAt: l.created_at, via: l.issued_via, expiresAt: l.expires_at, usedAt: l.used_at })),
    linksNotListed: Math.max(0, links.length - EVIDENCE_ACCESS_ROWS),
    accesses: [...accesses].reverse().map((a) => ({
      at: a.at, kind: ACCESS_KINDS[a.kind], ip: a.ip, userAgent: a.user_agent, file: a.file, bytes: a.bytes === null ? null : Number(a.bytes),
      count: a.occurrences,
    })),
    accessesNotListed: accessesTotal - accesses.length,
    staffActions: staffActions.map((a) => ({ at: a.at, action: a.kind, by: a.actor, detail: a.detail })),
    license: license.kind === 'issued'
      ? { ...license.license, activations: newest(license.license.activations), activationsNotListed: Math.max(0, license.license.activations.length - EVIDENCE_ACCESS_ROWS) }
      : null,
  };
}
