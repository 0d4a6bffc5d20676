import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc, preparedRows } from '../db/legacy-sql';
import { likeContains, sql, statement } from '../db/sql';
import { NotFoundError } from '../domain/errors';
import { normaliseAmount } from '../domain/money';
import { PURCHASE_SOURCES, type PurchaseSource } from '../domain/platforms';
import { normaliseEmail } from '../domain/email';
import { REVOKE_REASONS, type ReceiptStatus, type RevokeReason } from '../domain/statuses';
import { isUuid } from '../domain/uuid';
import { readInBatches } from '../services/keyset-batches';
import { logStaffAction, type StaffActor } from '../services/revocations';

/**
 * Purchases as they are read: the API's list (JSON), the dashboard's list and search, the webhook
 * log's links to recorded order lines, and the small look-ups of the purchase routes. One select,
 * one row type.
 */

/** One purchase as GET /api/purchases lists it (decisions §3). */
export const PurchaseJsonSchema = z.object({
  id: z.string(),
  productId: z.string(),
  versionId: z.string().nullable(),
  customer: z.object({ id: z.string(), name: z.string(), email: z.string() }),
  amount: z.string().describe('decimal string with the currency\'s minor-unit digits: "19.99", "29.00", "500" for JPY'),
  currency: z.string().describe('upper-case ISO code'),
  paymentMethod: z.string(),
  source: z.enum(PURCHASE_SOURCES).describe('api (API key), manual (dashboard) or the platform word'),
  externalOrderId: z.string().nullable(),
  test: z.boolean(),
  receiptSentAt: z.string().nullable(),
  createdAt: z.string(),
  revokedAt: z.string().nullable().describe('when access was withdrawn (decisions §9); null while it is not'),
  revokeReason: z.enum(REVOKE_REASONS).nullable(),
  downloadLimit: z.number().int().nullable().describe('this purchase\'s own download limit; null = the product\'s'),
});
export type PurchaseJson = z.infer<typeof PurchaseJsonSchema>;

/** One purchase as the API, the dashboard and the webhook log read it. */
export interface PurchaseRow {
  id: string;
  createdAt: string;
  productId: string;
  productName: string;
  versionId: string | null;
  customerId: string;
  customerName: string;
  customerEmail: string;
  /** With the currency's minor digits (see displayAmount). */
  amount: string;
  currency: string;
  paymentMethod: string;
  source: PurchaseSource;
  externalOrderId: string | null;
  test: boolean;
  receiptStatus: ReceiptStatus;
  receiptSentAt: string | null;
  revokedAt: string | null;
  revokeReason: RevokeReason | null;
  downloadLimit: number | null;
}

/**
 * The stored numeric(20,4) text ("19.9000") with the currency's minor digits ("19.90", "500" for
 * JPY). A stored amount finer than the currency allows is shown as stored, never rounded.
 */
export function displayAmount(stored: string, currency: string): string {
  const exact = normaliseAmount(stored, currency);
  if (exact !== null) return exact;
  return stored.includes('.') ? stored.replace(/0+$/, '').replace(/\.$/, '') : stored;
}

export function purchaseJson(row: PurchaseRow): PurchaseJson {
  return {
    id: row.id,
    productId: row.productId,
    versionId: row.versionId,
    customer: { id: row.customerId, name: row.customerName, email: row.customerEmail },
    amount: row.amount,
    currency: row.currency,
    paymentMethod: row.paymentMethod,
    source: row.source,
    externalOrderId: row.externalOrderId,
    test: row.test,
    receiptSentAt: row.receiptSentAt,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
    revokeReason: row.revokeReason,
    downloadLimit: row.downloadLimit,
  };
}

/** As stored: numeric(20,4) text, the currency as written. */
type StoredPurchaseRow = PurchaseRow;

function displayed(row: StoredPurchaseRow): PurchaseRow {
  return { ...row, amount: displayAmount(row.amount, row.currency), currency: row.currency.toUpperCase() };
}

// One select for every list. Newest first; (created_at, id) is the keyset, and a cursor is a
// purchase id whose position is looked up by primary key, so no timestamp ever makes a round trip
// through JavaScript.
const COLUMNS = `p.id, ${isoUtc('p.created_at')} as "createdAt", pr.id as "productId", pr.name as "productName",
    p.version_id as "versionId", c.id as "customerId", c.name as "customerName", c.email as "customerEmail",
    p.amount::text as amount, p.currency, p.payment_method as "paymentMethod", p.source,
    p.external_order_id as "externalOrderId", p.test, p.receipt_status as "receiptStatus",
    ${isoUtc('p.receipt_sent_at')} as "receiptSentAt", ${isoUtc('p.revoked_at')} as "revokedAt",
    p.revoke_reason as "revokeReason", p.download_limit as "downloadLimit"`;
/** The purchases of `source` (the table, or rows given as JSON) with their customer and product. */
const selectFrom = (source: string, extra = '') => `select ${COLUMNS}${extra}
  from ${source} join customer c on c.id = p.customer_id join product pr on pr.id = p.product_id
  where p.organisation_id = ?`;
const SELECT = selectFrom('purchase p');
const AFTER = ` and (p.created_at, p.id) < (select a.created_at, a.id from purchase a where a.id = ?)`;
const ORDER = ` order by p.created_at desc, p.id desc limit ?`;

export interface PurchasePage {
  /** The id of the purchase the page starts after (the previous page's last id). */
  after?: string;
  limit?: number;
}

/**
 * The organisation's purchases, newest first, in batches of one query each. An `after` that is not
 * a purchase of this organisation is 404, like any other id of another organisation.
 */
export async function purchaseBatches(em: EntityManager, orgId: string, page: PurchasePage): Promise<AsyncIterable<PurchaseRow[]>> {
  if (page.after !== undefined) {
    const found = isUuid(page.after)
      ? await em.execute('select 1 from purchase where id = ? and organisation_id = ?', [page.after, orgId])
      : [];
    if (found.length === 0) throw new NotFoundError('after: no purchase with that id');
  }
  return readInBatches<PurchaseRow>(
    async (after, size) => (await preparedRows<StoredPurchaseRow>(
      em,
      SELECT + (after === null ? '' : AFTER) + ORDER,
      after === null ? [orgId, size] : [orgId, after, size],
    )).map(displayed),
    { after: page.after, limit: page.limit },
  );
}

/**
 * Purchases as they were at a moment (rows of the purchase table as `to_jsonb` wrote them then),
 * shown as GET /api/purchases shows a purchase: outbound events' data. Answers by position; a
 * purchase whose customer or product is gone since has none.
 */
export async function purchasesAsRecorded(em: EntityManager, orgId: string, recorded: unknown[]): Promise<Array<PurchaseJson | undefined>> {
  const shown: Array<PurchaseJson | undefined> = recorded.map(() => undefined);
  if (recorded.length === 0) return shown;
  const rows = await preparedRows<StoredPurchaseRow & { n: number }>(
    em,
    `${selectFrom('jsonb_populate_recordset(null::purchase, ?::jsonb) with ordinality p', ', p.ordinality::int as n')} order by p.ordinality`,
    [JSON.stringify(recorded), orgId],
  );
  for (const { n, ...row } of rows) shown[n - 1] = purchaseJson(displayed(row));
  return shown;
}

/**
 * The dashboard's list: newest first, optionally matching `q`: part of the customer's email, or
 * exactly an order id, a purchase id or a customer id.
 */
export async function searchPurchases(em: EntityManager, orgId: string, q: string, limit: number): Promise<PurchaseRow[]> {
  const text = q.trim();
  const params: unknown[] = [orgId];
  let filter = '';
  if (text) {
    filter = ' and (c.email ilike ? or p.external_order_id = ?';
    params.push(likeContains(normaliseEmail(text)), text);
    if (isUuid(text)) {
      filter += ' or p.id = ? or c.id = ?';
      params.push(text, text);
    }
    filter += ')';
  }
  const rows = await em.execute<StoredPurchaseRow[]>(`${SELECT}${filter}${ORDER}`, [...params, limit]);
  return rows.map(displayed);
}

const purchaseEmailRead = statement<{ email: string; revoked: boolean }, { orgId: string; purchaseId: string }>(
  { email: true, revoked: true },
  (p) => sql`select c.email, p.revoked_at is not null as revoked from purchase p join customer c on c.id = p.customer_id
     where p.id = ${p.purchaseId} and p.organisation_id = ${p.orgId}`,
);

/** The email a purchase of this organisation was made with, or null when there is no such purchase. */
export async function purchaseEmail(em: EntityManager, orgId: string, purchaseId: string): Promise<{ email: string; revoked: boolean } | null> {
  if (!isUuid(purchaseId)) return null;
  return (await purchaseEmailRead.first(em, { orgId, purchaseId })) ?? null;
}

/**
 * A purchase's own download limit (decisions §10); null = the product's. 404 for another
 * organisation's. Logged with who set it, as the other staff actions on a purchase are.
 */
export async function setPurchaseDownloadLimit(
  em: EntityManager, orgId: string, purchaseId: string, downloadLimit: number | null, actor: StaffActor, now: Date,
): Promise<void> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  await em.transactional(async (tx) => {
    const [before] = await tx.execute<Array<{ download_limit: number | null }>>(
      'select download_limit from purchase where id = ? and organisation_id = ? for update', [purchaseId, orgId],
    );
    if (!before) throw new NotFoundError('purchase not found');
    await tx.execute('update purchase set download_limit = ? where id = ?', [downloadLimit, purchaseId], 'run');
    const words = (limit: number | null) => (limit === null ? 'the product\'s' : String(limit));
    await logStaffAction(tx, { id: purchaseId, organisation_id: orgId }, 'download_limit', actor,
      `download limit ${words(downloadLimit)} (was ${words(before.download_limit)})`, now);
  });
}

const saleSummaryRead = statement<{ customerEmail: string; productName: string }, { purchaseId: string }>(
  { customerEmail: true, productName: true },
  (p) => sql`select c.email as "customerEmail", pr.name as "productName"
    from purchase p join customer c on c.id = p.customer_id join product pr on pr.id = p.product_id where p.id = ${p.purchaseId}`,
);

/** What the answer to a recorded sale names: the customer's email and the product. */
export async function saleSummary(em: EntityManager, purchaseId: string): Promise<{ customerEmail: string; productName: string }> {
  const row = await saleSummaryRead.first(em, { purchaseId });
  if (!row) throw new NotFoundError('purchase not found');
  return row;
}

export interface OrderLineKey {
  source: PurchaseSource;
  externalOrderId: string;
  productId: string;
}

export const orderLineKey = (k: OrderLineKey): string => `${k.source}\n${k.externalOrderId}\n${k.productId}`;

/** Which of these platform order lines have a purchase already (recorded by a delivery or by hand). */
export async function recordedOrderLines(em: EntityManager, orgId: string, keys: OrderLineKey[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await em.execute<Array<OrderLineKey & { id: string }>>(
    `select id, source, external_order_id as "externalOrderId", product_id as "productId" from purchase
      where organisation_id = ? and external_order_id in (?)`,
    [orgId, [...new Set(keys.map((k) => k.externalOrderId))]],
  );
  return new Map(rows.map((r) => [orderLineKey(r), r.id]));
}
