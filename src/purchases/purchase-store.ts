/**
 * The table `purchase`, whole: its declaration (the entity the migrations must build, checked by
 * the schema test), the statement that records a purchase, and every read and change of it: the
 * API's list (JSON), the dashboard's list and search, the purchase page, the evidence record's
 * purchase, the receipt, the fresh links' purchases, the webhook log's links to recorded order
 * lines, and the small look-ups and changes of the purchase routes. One column list, one row type
 * for every list. A column is therefore added here, in a migration and where it is shown (and, for
 * one a sale supplies, in `SaleTerms` and the sale form). The purchases slice's other stores:
 * revocation-store.ts (revoke and restore, `revocation_notice`), customer-store.ts (`customer`),
 * link-store.ts (`download_token`, `activity_log_entry`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { isoUtc, likeContains, sql, statement, type Columns, type NoRows, type Parameters } from '../db/sql';
import { Organisation } from '../accounts/organisation.entity';
import { ProductVersion } from '../catalogue/product-version.entity';
import { Product } from '../catalogue/product.entity';
import { NotFoundError } from '../domain/errors';
import type { FulfilmentRequest, RecordedPurchase } from '../domain/fulfilment';
import { generatedKeyOf } from '../domain/license-keys';
import { normaliseAmount } from '../domain/money';
import { PURCHASE_SOURCES, type PurchaseSource } from '../domain/platforms';
import { normaliseEmail } from '../domain/email';
import { REVOKE_REASONS, type ReceiptStatus, type RevokeReason } from '../domain/statuses';
import { isUuid } from '../domain/uuid';
import { readInBatches } from '../services/keyset-batches';
import { issueKeysWithPurchases, KEY_OF_PURCHASE, waitsForKey } from '../licenses/license-store';
import { dispatchInsert, type DispatchRow } from '../outbox/outbox-store';
import { Customer } from './customer.entity';
import { COUNTED_TRANSFERS, EVER_TRANSFERRED, logStaffAction, type StaffActor } from './link-store';
import { noticeReasonOfLine } from './revocation-store';

/**
 * The lasting de-duplication guarantee (decisions §5): one purchase per organisation, source,
 * external order id and product, whatever Temporal still remembers.
 */
@Entity({ tableName: 'purchase' })
@Unique({ properties: ['organisation', 'source', 'externalOrderId', 'product'] })
@Index({ properties: ['organisation', 'createdAt'] })
@Index({ properties: ['organisation', 'source', 'paymentReference'] })
export class Purchase {
  [OptionalProps]?: 'createdAt' | 'test' | 'receiptStatus' | 'receiptSentAt' | 'externalOrderId' | 'version' | 'paymentReference'
    | 'revokedAt' | 'revokeReason' | 'restoredAt' | 'downloadLimit' | 'downloadsCountedFrom'
    | 'licenseWanted' | 'reminderDueAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne(() => Organisation, { deleteRule: 'cascade' })
  organisation!: Organisation;

  @ManyToOne(() => Product, { deleteRule: 'cascade' })
  product!: Product;

  /** The version that was active when the sale was recorded: what the customer downloads. */
  @ManyToOne(() => ProductVersion, { nullable: true, deleteRule: 'set null' })
  version: ProductVersion | null = null;

  @ManyToOne(() => Customer, { deleteRule: 'cascade', index: true })
  customer!: Customer;

  /** Decimal string in whole currency units with the currency's minor digits. */
  @Property({ type: 'decimal', precision: 20, scale: 4 })
  amount!: string;

  @Property({ type: 'text' })
  currency!: string;

  @Property({ type: 'text' })
  paymentMethod!: string;

  @Property({ type: 'text' })
  source!: PurchaseSource;

  @Property({ type: 'text', nullable: true })
  externalOrderId: string | null = null;

  @Property({ type: 'boolean' })
  test: boolean = false;

  @Property({ type: 'text' })
  receiptStatus: ReceiptStatus = 'pending';

  @Property({ type: 'timestamptz', nullable: true })
  receiptSentAt: Date | null = null;

  /** payments-c: the payment (`payment_intent`) its refund and dispute events name. */
  @Property({ type: 'text', nullable: true })
  paymentReference: string | null = null;

  /** Set when access was withdrawn (decisions §9); links and file URLs then answer 410. */
  @Property({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  revokeReason: RevokeReason | null = null;

  /** The last time staff restored access: refund and dispute events from before it are ignored. */
  @Property({ type: 'timestamptz', nullable: true })
  restoredAt: Date | null = null;

  /** Completed file transfers allowed (decisions §10); null = the product's limit. */
  @Property({ type: 'integer', nullable: true })
  downloadLimit: number | null = null;

  /** Re-arm resets the count: only transfers completed after this time count toward the limit. */
  @Property({ type: 'timestamptz', nullable: true })
  downloadsCountedFrom: Date | null = null;

  /** Its product issued license keys when it was recorded (decisions §14): it has a key, or waits for one. */
  @Property({ type: 'boolean' })
  licenseWanted: boolean = false;

  /**
   * When the buyer is reminded if no file transfer completed by then (decisions §16): set when the
   * receipt is first accepted, from the organisation's setting of that moment; null: no reminder.
   */
  @Property({ type: 'timestamptz', nullable: true })
  reminderDueAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}

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
  licenseKey: z.string().nullable().describe('the license key issued with this purchase (decisions §14); null: none, or still waiting for one'),
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
  licenseKey: string | null;
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
    licenseKey: row.licenseKey,
  };
}

/** Every key of the list's row, for the statements that read it (the compiler checks it against PurchaseRow). */
const PURCHASE_ROW_KEYS: Columns<PurchaseRow> = {
  id: true, createdAt: true, productId: true, productName: true, versionId: true, customerId: true, customerName: true,
  customerEmail: true, amount: true, currency: true, paymentMethod: true, source: true, externalOrderId: true, test: true,
  receiptStatus: true, receiptSentAt: true, revokedAt: true, revokeReason: true, downloadLimit: true, licenseKey: true,
};

/** As stored: numeric(20,4) text, the currency as written. */
type StoredPurchaseRow = PurchaseRow;

function displayed(row: StoredPurchaseRow): PurchaseRow {
  return { ...row, amount: displayAmount(row.amount, row.currency), currency: row.currency.toUpperCase() };
}

// One select for every list. Newest first; (created_at, id) is the keyset, and a cursor is a
// purchase id whose position is looked up by primary key, so no timestamp ever makes a round trip
// through JavaScript.
/** The list's columns, over `p` (purchase), `c` (its customer) and `pr` (its product). */
const PURCHASE_COLUMNS = sql`p.id, ${isoUtc('p.created_at')} as "createdAt", pr.id as "productId", pr.name as "productName",
    p.version_id as "versionId", c.id as "customerId", c.name as "customerName", c.email as "customerEmail",
    p.amount::text as amount, p.currency, p.payment_method as "paymentMethod", p.source,
    p.external_order_id as "externalOrderId", p.test, p.receipt_status as "receiptStatus",
    ${isoUtc('p.receipt_sent_at')} as "receiptSentAt", ${isoUtc('p.revoked_at')} as "revokedAt",
    p.revoke_reason as "revokeReason", p.download_limit as "downloadLimit", ${KEY_OF_PURCHASE} as "licenseKey"`;
/** The customer and product of the purchases `p`. */
const WITH_CUSTOMER_AND_PRODUCT = sql`join customer c on c.id = p.customer_id join product pr on pr.id = p.product_id`;
const SELECT = sql`select ${PURCHASE_COLUMNS} from purchase p ${WITH_CUSTOMER_AND_PRODUCT} where p.organisation_id = `;
const ORDER = sql` order by p.created_at desc, p.id desc limit `;

const purchaseExistsRead = statement<{ found: number }, { orgId: string; purchaseId: string }>(
  { found: true },
  (p) => sql`select 1 as found from purchase where id = ${p.purchaseId} and organisation_id = ${p.orgId}`,
);
const listFirst = statement<StoredPurchaseRow, { orgId: string; limit: number }>(
  PURCHASE_ROW_KEYS, (p) => sql`${SELECT}${p.orgId}${ORDER}${p.limit}`,
);
const listAfter = statement<StoredPurchaseRow, { orgId: string; after: string; limit: number }>(
  PURCHASE_ROW_KEYS,
  (p) => sql`${SELECT}${p.orgId} and (p.created_at, p.id) < (select a.created_at, a.id from purchase a where a.id = ${p.after})${ORDER}${p.limit}`,
);

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
    const found = isUuid(page.after) ? await purchaseExistsRead.first(em, { orgId, purchaseId: page.after }) : undefined;
    if (found === undefined) throw new NotFoundError('after: no purchase with that id');
  }
  return readInBatches<PurchaseRow>(
    async (after, limit) => (after === null
      ? await listFirst.rows(em, { orgId, limit })
      : await listAfter.rows(em, { orgId, after, limit })).map(displayed),
    { after: page.after, limit: page.limit },
  );
}

const asRecordedRead = statement<StoredPurchaseRow & { n: number }, { orgId: string; recorded: string }>(
  { ...PURCHASE_ROW_KEYS, n: true },
  (p) => sql`select ${PURCHASE_COLUMNS}, p.ordinality::int as n
    from jsonb_populate_recordset(null::purchase, ${p.recorded}::jsonb) with ordinality p ${WITH_CUSTOMER_AND_PRODUCT}
    where p.organisation_id = ${p.orgId} order by p.ordinality`,
);

/**
 * Purchases as they were at a moment (rows of the purchase table as `to_jsonb` wrote them then),
 * shown as GET /api/purchases shows a purchase: outbound events' data. Answers by position; a
 * purchase whose customer or product is gone since has none.
 */
export async function purchasesAsRecorded(em: EntityManager, orgId: string, recorded: unknown[]): Promise<Array<PurchaseJson | undefined>> {
  const shown: Array<PurchaseJson | undefined> = recorded.map(() => undefined);
  if (recorded.length === 0) return shown;
  const rows = await asRecordedRead.rows(em, { orgId, recorded: JSON.stringify(recorded) });
  for (const { n, ...row } of rows) shown[n - 1] = purchaseJson(displayed(row));
  return shown;
}

// The dashboard's search: the list itself without a text, else one statement per kind of text (any, a uuid).
type SearchParams = { orgId: string; emailLike: string; text: string; limit: number };
const matchesText = (p: Parameters<SearchParams>) => sql`c.email ilike ${p.emailLike} or p.external_order_id = ${p.text}`;
const searchText = statement<StoredPurchaseRow, SearchParams>(
  PURCHASE_ROW_KEYS, (p) => sql`${SELECT}${p.orgId} and (${matchesText(p)})${ORDER}${p.limit}`,
);
const searchTextOrId = statement<StoredPurchaseRow, SearchParams>(
  PURCHASE_ROW_KEYS,
  (p) => sql`${SELECT}${p.orgId} and (${matchesText(p)} or p.id = ${p.text}::uuid or c.id = ${p.text}::uuid)${ORDER}${p.limit}`,
);

/**
 * The dashboard's list: newest first, optionally matching `q`: part of the customer's email, or
 * exactly an order id, a purchase id or a customer id.
 */
export async function searchPurchases(em: EntityManager, orgId: string, q: string, limit: number): Promise<PurchaseRow[]> {
  const text = q.trim();
  let rows: StoredPurchaseRow[];
  if (!text) rows = await listFirst.rows(em, { orgId, limit });
  else {
    const params = { orgId, emailLike: likeContains(normaliseEmail(text)), text, limit };
    rows = await (isUuid(text) ? searchTextOrId : searchText).rows(em, params);
  }
  return rows.map(displayed);
}

/** The purchases an update notice goes to (decisions §12), and a reminder (§16): `p` a purchase, `c` its customer. */
export const NOTICE_ELIGIBLE = sql`p.revoked_at is null and not p.test and c.update_notices_off_at is null`;

/** One purchase as its dashboard page reads it: the list's row, with its download allowance. */
export interface PurchaseDetailRow extends PurchaseRow {
  productDownloadLimit: number | null;
  /** When the count last restarted (re-arm); null: it counts from the purchase. */
  countedFrom: string | null;
  /** Completed file transfers that count toward the limit. */
  used: number;
  /** When its reminder goes (decisions §16), while it still would: none planned, a transfer, a revocation or notices off make it null. */
  reminderDueAt: string | null;
}

const detailRead = statement<Omit<PurchaseDetailRow, 'used'> & { used: string | number }, { orgId: string; purchaseId: string }>(
  { ...PURCHASE_ROW_KEYS, productDownloadLimit: true, countedFrom: true, used: true, reminderDueAt: true },
  (p) => sql`select ${PURCHASE_COLUMNS},
    pr.download_limit as "productDownloadLimit", ${isoUtc('p.downloads_counted_from')} as "countedFrom",
    ${COUNTED_TRANSFERS} as used,
    case when ${NOTICE_ELIGIBLE} and not ${EVER_TRANSFERRED}
      then ${isoUtc('p.reminder_due_at')} end as "reminderDueAt"
  from purchase p ${WITH_CUSTOMER_AND_PRODUCT}
  where p.id = ${p.purchaseId} and p.organisation_id = ${p.orgId}`,
);

/** The purchase of this organisation as its page shows it; undefined for an unknown or malformed id. */
export async function purchaseDetailRow(em: EntityManager, orgId: string, purchaseId: string): Promise<PurchaseDetailRow | undefined> {
  if (!isUuid(purchaseId)) return undefined;
  const row = await detailRead.first(em, { orgId, purchaseId });
  return row && {
    ...displayed(row), productDownloadLimit: row.productDownloadLimit, countedFrom: row.countedFrom, used: Number(row.used), reminderDueAt: row.reminderDueAt,
  };
}

/** Whom a purchase is for: its email and platform order id (null for a sale entered without one). */
export interface PurchaseBuyer {
  email: string;
  revoked: boolean;
  orderId: string | null;
}

const purchaseBuyerRead = statement<PurchaseBuyer, { orgId: string; purchaseId: string }>(
  { email: true, revoked: true, orderId: true },
  (p) => sql`select c.email, p.revoked_at is not null as revoked, p.external_order_id as "orderId"
     from purchase p join customer c on c.id = p.customer_id
     where p.id = ${p.purchaseId} and p.organisation_id = ${p.orgId}`,
);

/** Whom a purchase of this organisation is for (email, order id, revoked), or null when there is no such purchase. */
export async function purchaseBuyer(em: EntityManager, orgId: string, purchaseId: string): Promise<PurchaseBuyer | null> {
  if (!isUuid(purchaseId)) return null;
  return (await purchaseBuyerRead.first(em, { orgId, purchaseId })) ?? null;
}

const downloadLimitLock = statement<{ download_limit: number | null }, { orgId: string; purchaseId: string }>(
  { download_limit: true },
  (p) => sql`select download_limit from purchase where id = ${p.purchaseId} and organisation_id = ${p.orgId} for update`,
);
const downloadLimitUpdate = statement<NoRows, { purchaseId: string; downloadLimit: number | null }>(
  {}, (p) => sql`update purchase set download_limit = ${p.downloadLimit} where id = ${p.purchaseId}`,
);

/**
 * A purchase's own download limit (decisions §10); null = the product's. 404 for another
 * organisation's. Logged with who set it, as the other staff actions on a purchase are.
 */
export async function setPurchaseDownloadLimit(
  em: EntityManager, orgId: string, purchaseId: string, downloadLimit: number | null, actor: StaffActor, now: Date,
): Promise<void> {
  if (!isUuid(purchaseId)) throw new NotFoundError('purchase not found');
  await em.transactional(async (tx) => {
    const before = await downloadLimitLock.first(tx, { orgId, purchaseId });
    if (!before) throw new NotFoundError('purchase not found');
    await downloadLimitUpdate.run(tx, { purchaseId, downloadLimit });
    const words = (limit: number | null) => (limit === null ? 'the product\'s' : String(limit));
    await logStaffAction(tx, { id: purchaseId, organisation_id: orgId }, 'download_limit', actor,
      `download limit ${words(downloadLimit)} (was ${words(before.download_limit)})`, now);
  });
}

/** What a sale entered by API or dashboard is checked against, read at once (decisions: Purchase-creation input). */
export interface SaleCheckRow {
  product_found: boolean;
  product_live: boolean;
  product_name: string | null;
  /** The existing customer named by id, when one was named and is the organisation's. */
  customer_id: string | null;
  customer_email: string | null;
  /** A new customer's email already belongs to a customer of the organisation. */
  email_taken: boolean;
}

const saleCheckRead = statement<SaleCheckRow, { orgId: string; productId: string; customerId: string | null; email: string | null }>(
  { product_found: true, product_live: true, product_name: true, customer_id: true, customer_email: true, email_taken: true },
  (p) => sql`select pr.id is not null as product_found,
       coalesce(pr.status = 'published' and v.status = 'ready', false) as product_live, pr.name as product_name,
       c.id as customer_id, c.email as customer_email,
       exists (select 1 from customer where organisation_id = ${p.orgId} and email = ${p.email}::text) as email_taken
     from (select 1) as one
     left join product pr on pr.id = ${p.productId}::uuid and pr.organisation_id = ${p.orgId}
     left join product_version v on v.id = pr.active_version_id
     left join customer c on c.id = ${p.customerId}::uuid and c.organisation_id = ${p.orgId}`,
);

/**
 * The product and customer a sale names, in one read: `customerId` for an existing customer (a
 * uuid), `email` for a new one (null for the other).
 */
export async function saleCheck(
  em: EntityManager, check: { orgId: string; productId: string; customerId: string | null; email: string | null },
): Promise<SaleCheckRow> {
  return (await saleCheckRead.first(em, check))!;
}

export interface OrderLineKey {
  source: PurchaseSource;
  externalOrderId: string;
  productId: string;
}

export const orderLineKey = (k: OrderLineKey): string => `${k.source}\n${k.externalOrderId}\n${k.productId}`;

const orderLinesRead = statement<OrderLineKey & { id: string }, { orgId: string; orderIds: string[] }>(
  { id: true, source: true, externalOrderId: true, productId: true },
  (p) => sql`select id, source, external_order_id as "externalOrderId", product_id as "productId" from purchase
      where organisation_id = ${p.orgId} and external_order_id = any(${p.orderIds}::text[])`,
);

/** Which of these platform order lines have a purchase already (recorded by a delivery or by hand). */
export async function recordedOrderLines(em: EntityManager, orgId: string, keys: OrderLineKey[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const rows = await orderLinesRead.rows(em, { orgId, orderIds: [...new Set(keys.map((k) => k.externalOrderId))] });
  return new Map(rows.map((r) => [orderLineKey(r), r.id]));
}

const eligibleCountRead = statement<{ count: string }, { orgId: string; productId: string }>(
  { count: true },
  (p) => sql`select count(*) from purchase p join customer c on c.id = p.customer_id
     where p.organisation_id = ${p.orgId} and p.product_id = ${p.productId} and ${NOTICE_ELIGIBLE}`,
);

/** How many buyers of the product an update notice would go to now. */
export async function noticeEligibleCount(em: EntityManager, orgId: string, productId: string): Promise<number> {
  const row = await eligibleCountRead.first(em, { orgId, productId });
  return Number(row?.count ?? 0);
}

const rearmLock = statement<{ id: string; organisation_id: string; email: string; revoked: boolean }, { orgId: string; purchaseId: string }>(
  { id: true, organisation_id: true, email: true, revoked: true },
  (p) => sql`select p.id, p.organisation_id, c.email, p.revoked_at is not null as revoked
       from purchase p join customer c on c.id = p.customer_id where p.id = ${p.purchaseId} and p.organisation_id = ${p.orgId} for update of p`,
);

/** The purchase of this organisation with its customer's email, locked for the caller's transaction (re-arm, resend). */
export function lockPurchaseForRearm(tx: EntityManager, orgId: string, purchaseId: string) {
  return rearmLock.first(tx, { orgId, purchaseId });
}

const countRestart = statement<NoRows, { purchaseId: string; now: Date }>(
  {}, (p) => sql`update purchase set downloads_counted_from = ${p.now} where id = ${p.purchaseId}`,
);

/** The purchase's completed transfers count from `now` (re-arm, decisions §10). */
export async function restartDownloadCount(em: EntityManager, purchaseId: string, now: Date): Promise<void> {
  await countRestart.run(em, { purchaseId, now });
}

/** A purchase as its evidence record names it (decisions §11). */
export interface EvidencePurchaseRow extends StoredPurchaseRow {
  organisation: string;
  supportEmail: string | null;
  version: string | null;
  paymentReference: string | null;
}

const evidencePurchaseRead = statement<EvidencePurchaseRow, { orgId: string; purchaseId: string }>(
  { ...PURCHASE_ROW_KEYS, organisation: true, supportEmail: true, version: true, paymentReference: true },
  (p) => sql`select ${PURCHASE_COLUMNS}, o.name as organisation, o.support_email as "supportEmail", v.version,
       p.payment_reference as "paymentReference"
     from purchase p ${WITH_CUSTOMER_AND_PRODUCT}
     join organisation o on o.id = p.organisation_id
     left join product_version v on v.id = p.version_id
     where p.id = ${p.purchaseId} and p.organisation_id = ${p.orgId}`,
);

/** The purchase of this organisation as its evidence record names it, or undefined. */
export function evidencePurchase(em: EntityManager, orgId: string, purchaseId: string): Promise<EvidencePurchaseRow | undefined> {
  return evidencePurchaseRead.first(em, { orgId, purchaseId });
}

const salesPerDayRead = statement<{ day: string; n: string }, { orgId: string; since: Date }>(
  { day: true, n: true },
  (p) => sql`select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, count(*) as n
       from purchase where organisation_id = ${p.orgId} and created_at >= ${p.since} group by 1`,
);

/** Purchases per UTC day since `since` (days without any are left out). */
export function salesPerDay(em: EntityManager, orgId: string, since: Date): Promise<Array<{ day: string; n: string }>> {
  return salesPerDayRead.rows(em, { orgId, since });
}

/** What a purchase's receipt says, and to whom. */
export interface ReceiptRow {
  organisation_id: string;
  org_name: string;
  email: string;
  customer_name: string;
  product_name: string;
  /** Null when the product has no keys (a pool purchase's receipt waits until it has one). */
  license_key: string | null;
}

const receiptRead = statement<ReceiptRow, { purchaseId: string }>(
  { organisation_id: true, org_name: true, email: true, customer_name: true, product_name: true, license_key: true },
  (p) => sql`select p.organisation_id, o.name as org_name, c.email, c.name as customer_name, pr.name as product_name,
           ${KEY_OF_PURCHASE} as license_key
         from purchase p join organisation o on o.id = p.organisation_id join customer c on c.id = p.customer_id
         join product pr on pr.id = p.product_id where p.id = ${p.purchaseId}`,
);

/** The receipt of the purchase, or undefined when there is no such purchase. */
export function receiptOf(em: EntityManager, purchaseId: string): Promise<ReceiptRow | undefined> {
  return receiptRead.first(em, { purchaseId });
}

/** A receipt the mail server accepted: whose purchase, and the reminder it planned, if this was its first. */
export interface AcceptedReceiptRow {
  organisation_id: string;
  /** ISO 8601; null when this receipt planned none (not the first, reminders off, a test purchase). */
  reminder_due_at: string | null;
}

const receiptAccept = statement<AcceptedReceiptRow, { purchaseId: string; now: Date; reminderRow: string }>(
  { organisation_id: true, reminder_due_at: true },
  // The row is locked by the subquery's read, so two sends of one purchase cannot both be the first.
  // The reminder's outbox row (its due time filled in here) commits in the same statement.
  (p) => sql`with prior as (select id, receipt_sent_at is null as first from purchase where id = ${p.purchaseId} for update),
     accepted as (
       update purchase p set receipt_status = 'sent', receipt_sent_at = ${p.now},
         reminder_due_at = case when prior.first and not p.test and o.reminder_after_minutes is not null
           then ${p.now}::timestamptz + make_interval(mins => o.reminder_after_minutes) else p.reminder_due_at end
       from prior, organisation o where p.id = prior.id and o.id = p.organisation_id
       returning p.organisation_id, case when prior.first then ${isoUtc('p.reminder_due_at')} end as reminder_due_at),
     reminder as (${dispatchInsert(sql`(select coalesce(jsonb_agg(jsonb_set(${p.reminderRow}::jsonb, '{payload,dueAt}', to_jsonb(a.reminder_due_at))), '[]')
       from accepted a where a.reminder_due_at is not null)`)})
     select organisation_id, reminder_due_at from accepted`,
);

/**
 * Marks the purchase's receipt sent. Its first accepted receipt also fixes when its buyer is
 * reminded (decisions §16), from the organisation's setting now (a later change of the setting
 * leaves it as it is), and writes `reminder` (the reminder run's outbox row, without its due time)
 * with it: one statement, on the path of every sale.
 */
export function acceptReceipt(em: EntityManager, purchaseId: string, now: Date, reminder: DispatchRow): Promise<AcceptedReceiptRow | undefined> {
  return receiptAccept.first(em, { purchaseId, now, reminderRow: JSON.stringify(reminder) });
}

/** What a reminder says, and whether it still goes (decisions §16). */
export interface ReminderContextRow {
  organisation_id: string;
  org_name: string;
  customer_id: string;
  email: string;
  customer_name: string;
  product_name: string;
  version_label: string | null;
  license_key: string | null;
  revoked: boolean;
  test: boolean;
  notices_off: boolean;
  /** A file transfer of the purchase completed, ever. */
  transferred: boolean;
}

const reminderContextRead = statement<ReminderContextRow, { purchaseId: string }>(
  {
    organisation_id: true, org_name: true, customer_id: true, email: true, customer_name: true, product_name: true, version_label: true,
    license_key: true, revoked: true, test: true, notices_off: true, transferred: true,
  },
  (p) => sql`select p.organisation_id, o.name as org_name, c.id as customer_id, c.email, c.name as customer_name,
       pr.name as product_name, v.version as version_label, ${KEY_OF_PURCHASE} as license_key, p.revoked_at is not null as revoked, p.test,
       c.update_notices_off_at is not null as notices_off,
       ${EVER_TRANSFERRED} as transferred
     from purchase p join organisation o on o.id = p.organisation_id join customer c on c.id = p.customer_id
     join product pr on pr.id = p.product_id left join product_version v on v.id = p.version_id
     where p.id = ${p.purchaseId}`,
);

/** The purchase as its reminder reads it when due, or undefined when there is no such purchase. */
export function reminderContext(em: EntityManager, purchaseId: string): Promise<ReminderContextRow | undefined> {
  return reminderContextRead.first(em, { purchaseId });
}

/** A purchase a fresh link may go to (not revoked), with whose it is. */
export interface LinkPurchaseRow {
  id: string;
  organisation_id: string;
  customer_id: string;
}

const LINK_PURCHASE_KEYS = { id: true, organisation_id: true, customer_id: true } as const;
const linkPurchasesOfEmail = statement<LinkPurchaseRow, { email: string }>(
  LINK_PURCHASE_KEYS,
  (p) => sql`select p.id, p.organisation_id, p.customer_id from purchase p join customer c on c.id = p.customer_id
             where c.email = ${p.email} and p.revoked_at is null order by p.organisation_id, p.created_at, p.id`,
);
const linkPurchaseOfId = statement<LinkPurchaseRow, { purchaseId: string }>(
  LINK_PURCHASE_KEYS,
  (p) => sql`select p.id, p.organisation_id, p.customer_id from purchase p where p.id = ${p.purchaseId} and p.revoked_at is null`,
);

/** The purchases (not revoked) of an email address in every organisation, by organisation, oldest first. */
export function unrevokedPurchasesOfEmail(em: EntityManager, email: string): Promise<LinkPurchaseRow[]> {
  return linkPurchasesOfEmail.rows(em, { email });
}

/** The purchase, unless it is revoked (no row then). */
export function unrevokedPurchase(em: EntityManager, purchaseId: string): Promise<LinkPurchaseRow[]> {
  return linkPurchaseOfId.rows(em, { purchaseId });
}

/**
 * The organisations that sold with this payment on this platform (at most 10): an event that
 * names only its payment (a payments-c dispute) may be for any of them. A subquery for the
 * webhook intake's organisation look-up.
 */
export const organisationsPaidWith = (p: Parameters<{ source: string; paymentReference: string }>) =>
  sql`(select distinct organisation_id from purchase where source = ${p.source} and payment_reference = ${p.paymentReference} limit 10)`;

// Recording purchases: the one statement that finds or creates each line's customer and creates
// its purchase (the fulfilment workflow's first step, one line; sales recorded by their requests,
// many at once, each with its link and its run's start), and the mark of a failed receipt.

export interface RecordPurchaseRow {
  product_found: boolean;
  customer_id: string | null;
  purchase_id: string | null;
  receipt_status: RecordedPurchase['receiptStatus'] | null;
  purchase_customer_id: string | null;
  already_reported: boolean;
  revoked: boolean;
  /** Its product's pool had no free key: the receipt waits for one (decisions §14). */
  license_waiting: boolean;
  /** Its product hands out keys from a pool. */
  license_pool: boolean;
}

const RECORD_ROW_KEYS = {
  product_found: true, customer_id: true, purchase_id: true, receipt_status: true, purchase_customer_id: true,
  already_reported: true, revoked: true, license_waiting: true, license_pool: true,
} as const;

/**
 * One line of the statement's input (an element of its JSON parameter), named as `input`'s
 * columns. A sale recorded by its request also carries its link and its run's outbox row.
 */
interface RecordLine {
  ord: number;
  org_id: string;
  product_id: string;
  purchase_key: string;
  /** An existing customer, by id; null for one found or created by `email`. */
  customer_id: string | null;
  email: string | null;
  name: string | null;
  source: string;
  external_order_id: string | null;
  payment_reference: string | null;
  /** The order's id and payment reference, '' for none: what a notice is matched with. */
  order_ref: string;
  payment_ref: string;
  amount: string;
  currency: string;
  payment_method: string;
  test: boolean;
  receipt_status: string;
  delivery_item_id: string | null;
  /** A key for a generated-key product's new purchase (unused otherwise). */
  generated_key: string;
  token_hash: string | null;
  expires_at: Date | null;
  issued_at: Date | null;
  dispatch: DispatchRow | null;
}

/**
 * Each look-up of a stored row is by key per line (a lateral or scalar subquery): the plan is
 * prepared once per connection, often while the tables are small, and a join there may become a
 * scan of the whole table that the growing table keeps.
 *
 * Finds or creates each line's customer and creates its purchase, idempotently (a refund that came
 * first, its notice, makes it revoked from the start, with no receipt): the purchase's id is the
 * line's `purchase_key`, and its business key (organisation, source, order id, product) is unique,
 * so a retry or a duplicate run finds the row instead of making another (by its id when the order
 * has no id of its own: a sale recorded by its request). A sale's link and its run's outbox row are
 * written only with a purchase this statement created. One row per line, in their order.
 *
 * Every part of one statement sees the same snapshot: a row another transaction commits meanwhile
 * (the same customer bought twice at once), or another line of this statement writes, is invisible
 * to its reads, so such a line finds no customer or purchase; its retry (a new statement) sees it.
 */
const recordLinesStatement = statement<RecordPurchaseRow, { lines: string }>(RECORD_ROW_KEYS, (p) => sql`with input as (
       select * from jsonb_to_recordset(${p.lines}::jsonb) as i(ord int, org_id uuid, product_id uuid, purchase_key uuid,
         customer_id uuid, email text, name text, source text, external_order_id text, payment_reference text,
         order_ref text, payment_ref text, amount numeric, currency text, payment_method text, test boolean,
         receipt_status text, delivery_item_id uuid, generated_key text, token_hash text, expires_at timestamptz,
         issued_at timestamptz, dispatch jsonb)),
     product_row as (
       select i.ord, pr.id, pr.active_version_id, pr.license_source from input i
       cross join lateral (select id, active_version_id, license_source from product
         where id = i.product_id and organisation_id = i.org_id limit 1) pr),
     new_customer as (
       insert into customer (id, organisation_id, email, name, created_at)
       select gen_random_uuid(), i.org_id, i.email, i.name, now()
       from input i where i.email is not null and exists (select 1 from product_row pr where pr.ord = i.ord)
         -- A line of an order already recorded makes no purchase, and so no customer.
         and not exists (select 1 from purchase p where p.organisation_id = i.org_id and p.source = i.source
           and p.external_order_id = i.external_order_id and p.product_id = i.product_id)
       order by i.ord
       on conflict (organisation_id, email) do nothing returning id, organisation_id, email),
     customer_row as (
       select i.ord, coalesce(
         (select n.id from new_customer n where n.organisation_id = i.org_id and n.email = i.email),
         (select c.id from customer c where c.organisation_id = i.org_id and c.email = i.email),
         (select c.id from customer c where c.id = i.customer_id and c.organisation_id = i.org_id)) as id
       from input i),
     new_purchase as (
       insert into purchase (id, organisation_id, product_id, version_id, customer_id, amount, currency,
         payment_method, source, external_order_id, payment_reference, test, receipt_status, revoked_at, revoke_reason, license_wanted, created_at)
       select i.purchase_key, i.org_id, pr.id, pr.active_version_id, c.id, i.amount, i.currency,
         i.payment_method, i.source, i.external_order_id, i.payment_reference, i.test,
         case when n.reason is null then i.receipt_status else 'skipped' end,
         case when n.reason is null then null else now() end, n.reason, pr.license_source is not null, now()
       from input i join product_row pr on pr.ord = i.ord join customer_row c on c.ord = i.ord and c.id is not null
       cross join lateral (select ${noticeReasonOfLine} as reason) n
       order by i.ord
       on conflict do nothing returning id, receipt_status, customer_id, revoked_at, license_wanted),
     -- Each purchase this statement created, with its line.
     new_line as (
       select n.*, i.ord, i.org_id, i.product_id, i.generated_key, pr.license_source, i.token_hash, i.expires_at, i.issued_at, i.dispatch
       from new_purchase n join input i on i.purchase_key = n.id join product_row pr on pr.ord = i.ord),
     ${issueKeysWithPurchases},
     -- The lines that created no purchase (a duplicate, a retry), apart first: only they look one up.
     unmatched as materialized (
       select i.ord, i.org_id, i.source, i.external_order_id, i.product_id, i.purchase_key from input i
       where not exists (select 1 from new_purchase n where n.id = i.purchase_key)),
     purchase_row as (
       select ord, id, receipt_status, customer_id, revoked_at, license_wanted from new_line
       union all
       select u.ord, pu.id, pu.receipt_status, pu.customer_id, pu.revoked_at, pu.license_wanted from unmatched u
       cross join lateral (select * from purchase where organisation_id = u.org_id and source = u.source
         and external_order_id = u.external_order_id and product_id = u.product_id limit 1) pu
       union all
       select u.ord, pu.id, pu.receipt_status, pu.customer_id, pu.revoked_at, pu.license_wanted from unmatched u
       cross join lateral (select * from purchase where id = u.purchase_key and external_order_id is null limit 1) pu),
     sale_link as (
       insert into download_token (id, purchase_id, token_hash, expires_at, created_at, issued_via)
       select gen_random_uuid(), id, token_hash, expires_at, issued_at, 'sale' from new_line where token_hash is not null),
     sale_start as (${dispatchInsert(sql`(select coalesce(jsonb_agg(dispatch order by ord), '[]'::jsonb) from new_line where dispatch is not null)`)})
     select pr.ord is not null as product_found, c.id as customer_id,
       r.id as purchase_id, r.receipt_status, r.customer_id as purchase_customer_id, r.revoked_at is not null as revoked,
       coalesce(${waitsForKey}, false) as license_waiting,
       coalesce(pr.license_source = 'pool', false) as license_pool,
       coalesce((select d.outcome is not null from webhook_delivery_item d where d.id = i.delivery_item_id), false) as already_reported
     from input i left join product_row pr on pr.ord = i.ord left join customer_row c on c.ord = i.ord
       left join purchase_row r on r.ord = i.ord
     order by i.ord`);

/** What a sale recorded by its request writes beside its purchase (POST /api/purchases). */
export interface SaleWrites {
  /** The link its answer shows. */
  link: { tokenHash: string; expiresAt: Date; now: Date };
  /** Its run's outbox row. */
  dispatch: DispatchRow;
}

/**
 * The statement's line for a sale or order line. Every field of the sale is taken here by name,
 * so a field added to the sale and not stored fails to compile instead of being dropped silently.
 */
function recordLine(input: FulfilmentRequest & { purchaseKey: string }, ord: number, writes: SaleWrites | null): RecordLine {
  const {
    orgId, productId, purchaseKey, source, externalOrderId, paymentReference, amount, currency, paymentMethod, test,
    sendReceipt, deliveryItemId, customer, ...notStored
  } = input;
  const _nothingForgotten: Record<string, never> = notStored;
  const byId = 'id' in customer;
  return {
    ord, org_id: orgId, product_id: productId, purchase_key: purchaseKey,
    customer_id: byId ? customer.id : null,
    email: byId ? null : normaliseEmail(customer.email),
    name: byId ? null : customer.name.trim(),
    source, external_order_id: externalOrderId, payment_reference: paymentReference ?? null,
    order_ref: externalOrderId ?? '', payment_ref: paymentReference ?? '', amount, currency, payment_method: paymentMethod, test,
    receipt_status: sendReceipt ? 'pending' : 'skipped', delivery_item_id: deliveryItemId ?? null,
    generated_key: generatedKeyOf(randomBytes(13)),
    token_hash: writes?.link.tokenHash ?? null, expires_at: writes?.link.expiresAt ?? null, issued_at: writes?.link.now ?? null,
    dispatch: writes?.dispatch ?? null,
  };
}

async function recordLines(em: EntityManager, lines: RecordLine[]): Promise<RecordPurchaseRow[]> {
  const rows = await recordLinesStatement.rows(em, { lines: JSON.stringify(lines) });
  if (rows.length !== lines.length) throw new Error(`recording ${lines.length} purchases answered ${rows.length} rows`);
  return rows;
}

/** Records one purchase (an order line's, by its fulfilment run): one statement, one commit. Returns the row as read; the caller decides what a missing part means. */
export async function recordPurchase(em: EntityManager, input: FulfilmentRequest & { purchaseKey: string }): Promise<RecordPurchaseRow> {
  const [row] = await recordLines(em, [recordLine(input, 1, null)]);
  return row;
}

/**
 * Records sales entered by their requests, each with the link its answer shows and its run's
 * outbox row: one statement and one commit for all of them. One row per sale, in their order.
 */
export function recordSalePurchases(
  em: EntityManager, sales: ReadonlyArray<{ input: FulfilmentRequest & { purchaseKey: string }; writes: SaleWrites }>,
): Promise<RecordPurchaseRow[]> {
  return recordLines(em, sales.map((sale, i) => recordLine(sale.input, i + 1, sale.writes)));
}

const receiptFailedUpdate = statement<NoRows, { purchaseId: string }>(
  {}, (p) => sql`update purchase set receipt_status = 'failed' where id = ${p.purchaseId} and receipt_status <> 'sent'`,
);

/** The receipt failed: a later delivery of the order re-sends it (decisions §5). Never undoes `sent`. */
export async function markReceiptFailed(em: EntityManager, purchaseId: string): Promise<void> {
  await receiptFailedUpdate.run(em, { purchaseId });
}
