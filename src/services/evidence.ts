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
import { newestAccesses, newestLinks, staffActionsOf, type AccessLogKind } from '../purchases/link-store';
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

/** The newest rows of a read that gives them newest first, each with the count of all: in time order, and how many it left out. */
function listedOldestFirst<T extends { total: string | number }>(rows: T[]): { rows: T[]; notListed: number } {
  return { rows: [...rows].reverse(), notListed: rows.length === 0 ? 0 : Number(rows[0].total) - rows.length };
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
  // Links and installations grow with what a link holder does (a fresh link, an activation), like
  // accesses: the record, its PDF above all, lists the newest of each and counts the rest.
  const links = listedOldestFirst(await newestLinks(em, purchaseId, EVIDENCE_ACCESS_ROWS));
  const accesses = listedOldestFirst(await newestAccesses(em, purchaseId, EVIDENCE_ACCESS_ROWS));
  const staffActions = await staffActionsOf(em, purchaseId);
  // The purchase page has read it already.
  const license = knownLicense ?? await purchaseLicenseState(em, orgId, purchaseId);

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
    links: links.rows.map((l) => ({ issuedAt: l.created_at, via: l.issued_via, expiresAt: l.expires_at, usedAt: l.used_at })),
    linksNotListed: links.notListed,
    accesses: accesses.rows.map((a) => ({
      at: a.at, kind: ACCESS_KINDS[a.kind], ip: a.ip, userAgent: a.user_agent, file: a.file, bytes: a.bytes === null ? null : Number(a.bytes),
      count: a.occurrences,
    })),
    accessesNotListed: accesses.notListed,
    staffActions: staffActions.map((a) => ({ at: a.at, action: a.kind, by: a.actor, detail: a.detail })),
    // Read whole (the purchase page lists every installation), so cut here.
    license: license.kind === 'issued'
      ? {
        ...license.license,
        activations: license.license.activations.slice(-EVIDENCE_ACCESS_ROWS),
        activationsNotListed: Math.max(0, license.license.activations.length - EVIDENCE_ACCESS_ROWS),
      }
      : null,
  };
}
