/**
 * Gathers the dispute evidence record of one purchase (decisions §11) from what the service keeps
 * anyway: the purchase, its order's delivery log entries, the receipt's sent-email rows, the links
 * issued, and the purchase's activity log (the newest page opens and transfers with the count of
 * the rest, staff actions). Read-only.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../db/legacy-sql';
import { NotFoundError } from '../domain/errors';
import { EVIDENCE_ACCESS_ROWS, type EvidenceDeliveryEntry, type EvidenceRecord } from '../domain/evidence';
import { isUuid } from '../domain/uuid';
import { displayAmount, evidencePurchase } from '../purchases/purchase-store';
import { linksOfPurchase, newestAccesses, staffActionsOf, type AccessLogKind } from '../purchases/link-store';

const ACCESS_KINDS: Record<AccessLogKind, EvidenceRecord['accesses'][number]['kind']> = {
  page_open: 'page open',
  file_download: 'file transfer',
  download_session: 'download complete',
};

export async function purchaseEvidence(em: EntityManager, orgId: string, purchaseId: string, now: Date): Promise<EvidenceRecord> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  const purchase = await evidencePurchase(em, orgId, purchaseId);
  if (!purchase) throw new NotFoundError('purchase not found');

  const refs = [purchase.external_order_id, purchase.payment_reference].filter((r): r is string => r !== null);
  const deliveryRows = refs.length === 0 ? [] : await em.execute<Array<{
    id: string; platform: string; kind: string; status: string; received_at: string; completed_at: string | null;
    items: Array<{ sku: string | null; outcome: string | null; reason: string | null }>;
  }>>(
    `select d.id, d.platform, d.kind, d.status, ${isoUtc('d.received_at')} as received_at, ${isoUtc('d.completed_at')} as completed_at,
       coalesce((select json_agg(json_build_object('sku', i.sku, 'outcome', i.outcome, 'reason', i.reason) order by i.line_index)
                 from webhook_delivery_item i where i.delivery_id = d.id), '[]') as items
     from webhook_delivery d
     where d.organisation_id = ? and d.platform = ? and d.external_order_id in (select jsonb_array_elements_text(?::jsonb))
     order by d.received_at, d.id`,
    [orgId, purchase.source, JSON.stringify(refs)],
  );
  const deliveries: EvidenceDeliveryEntry[] = deliveryRows.map((d) => ({
    id: d.id, platform: d.platform, kind: d.kind, status: d.status, receivedAt: d.received_at, completedAt: d.completed_at, items: d.items,
  }));

  const receipts = await em.execute<Array<{ status: string; sent_at: string | null; message_id: string | null; recipients: string[]; subject: string }>>(
    `select status, ${isoUtc('sent_at')} as sent_at, message_id, recipients, subject from sent_email
     where business_key like ? order by created_at`,
    [`receipt:${purchaseId}:%`],
  );
  const links = await linksOfPurchase(em, purchaseId);
  const accesses = await newestAccesses(em, purchaseId, EVIDENCE_ACCESS_ROWS);
  const staffActions = await staffActionsOf(em, purchaseId);
  // Every row carries the count of all (a window over the rows before the limit).
  const accessesTotal = accesses.length === 0 ? 0 : Number(accesses[0].total);

  return {
    generatedAt: now.toISOString(),
    seller: { organisation: purchase.organisation, supportEmail: purchase.support_email },
    purchase: {
      id: purchase.id, product: purchase.product, version: purchase.version, createdAt: purchase.created_at,
      test: purchase.test, revokedAt: purchase.revoked_at, revokeReason: purchase.revoke_reason,
    },
    customer: { name: purchase.customer_name, email: purchase.customer_email },
    order: {
      source: purchase.source,
      externalOrderId: purchase.external_order_id,
      amount: displayAmount(purchase.amount, purchase.currency),
      currency: purchase.currency.toUpperCase(),
      paymentMethod: purchase.payment_method,
      receivedAt: deliveries.find((d) => d.kind === 'order')?.receivedAt ?? purchase.created_at,
      deliveries,
    },
    receipts: receipts.map((r) => ({ status: r.status, acceptedAt: r.sent_at, messageId: r.message_id, recipients: r.recipients, subject: r.subject })),
    links: links.map((l) => ({ issuedAt: l.created_at, via: l.issued_via, expiresAt: l.expires_at, usedAt: l.used_at })),
    accesses: [...accesses].reverse().map((a) => ({
      at: a.at, kind: ACCESS_KINDS[a.kind], ip: a.ip, userAgent: a.user_agent, file: a.file, bytes: a.bytes === null ? null : Number(a.bytes),
      count: a.occurrences,
    })),
    accessesNotListed: accessesTotal - accesses.length,
    staffActions: staffActions.map((a) => ({ at: a.at, action: a.kind, by: a.actor, detail: a.detail })),
  };
}
