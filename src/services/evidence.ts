/**
 * Gathers the dispute evidence record of one purchase (decisions §11) from what the service keeps
 * anyway: the purchase, its order's delivery log entries, the receipt's sent-email rows, the links
 * issued, and the purchase's activity log (the newest page opens and transfers with the count of
 * the rest, staff actions). Read-only.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isoUtc } from '../db/legacy-sql';
import { NotFoundError } from '../domain/errors';
import { EVIDENCE_ACCESS_ROWS, type EvidenceDeliveryEntry, type EvidenceRecord, type LinkOrigin } from '../domain/evidence';
import { isUuid } from '../domain/uuid';
import { displayAmount } from '../purchases/purchase-store';

interface PurchaseRow {
  id: string;
  organisation: string;
  support_email: string | null;
  product: string;
  version: string | null;
  created_at: string;
  test: boolean;
  revoked_at: string | null;
  revoke_reason: string | null;
  customer_name: string;
  customer_email: string;
  source: string;
  external_order_id: string | null;
  payment_reference: string | null;
  amount: string;
  currency: string;
  payment_method: string;
}

const ACCESS_KINDS: Record<string, EvidenceRecord['accesses'][number]['kind']> = {
  page_open: 'page open',
  file_download: 'file transfer',
  download_session: 'download complete',
};
/** The access kinds as an SQL list (constants of this module, never input). */
const ACCESS_KINDS_SQL = Object.keys(ACCESS_KINDS).map((kind) => `'${kind}'`).join(', ');

export async function purchaseEvidence(em: EntityManager, orgId: string, purchaseId: string, now: Date): Promise<EvidenceRecord> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  const [purchase] = await em.execute<PurchaseRow[]>(
    `select p.id, o.name as organisation, o.support_email, pr.name as product, v.version, ${isoUtc('p.created_at')} as created_at,
       p.test, ${isoUtc('p.revoked_at')} as revoked_at, p.revoke_reason, c.name as customer_name, c.email as customer_email,
       p.source, p.external_order_id, p.payment_reference, p.amount::text as amount, p.currency, p.payment_method
     from purchase p
     join organisation o on o.id = p.organisation_id
     join product pr on pr.id = p.product_id
     join customer c on c.id = p.customer_id
     left join product_version v on v.id = p.version_id
     where p.id = ? and p.organisation_id = ?`,
    [purchaseId, orgId],
  );
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
  const links = await em.execute<Array<{ created_at: string; issued_via: LinkOrigin; expires_at: string; used_at: string | null }>>(
    `select ${isoUtc('created_at')} as created_at, issued_via, ${isoUtc('expires_at')} as expires_at, ${isoUtc('used_at')} as used_at
     from download_token where purchase_id = ? order by created_at, id`,
    [purchaseId],
  );
  const accesses = await em.execute<Array<{
    kind: string; at: string; ip: string | null; user_agent: string | null; file: string | null; bytes: string | number | null;
    occurrences: number; total: string | number;
  }>>(
    `select a.kind, ${isoUtc('a.created_at')} as at, a.ip, a.user_agent, f.name as file, a.bytes, a.occurrences, count(*) over () as total
     from activity_log_entry a left join version_file f on f.id = a.file_id
     where a.purchase_id = ? and a.kind in (${ACCESS_KINDS_SQL})
     order by a.created_at desc, a.id desc limit ?`,
    [purchaseId, EVIDENCE_ACCESS_ROWS],
  );
  const staffActions = await em.execute<Array<{ kind: string; at: string; actor: string | null; detail: string | null }>>(
    `select a.kind, ${isoUtc('a.created_at')} as at, a.actor, a.detail from activity_log_entry a
     where a.purchase_id = ? and a.kind not in (${ACCESS_KINDS_SQL})
     order by a.created_at, a.id`,
    [purchaseId],
  );
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
