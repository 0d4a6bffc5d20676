/**
 * Writing a purchase: the one statement that finds or creates the customer and creates the
 * purchase (the fulfilment workflow's first step; for a sale recorded by its request, with its
 * link and its run's start), and the mark of a failed receipt. Writes the tables `purchase` and
 * `customer` (see purchase-store.ts and customer-store.ts for their reads) and, for a sale,
 * `download_token`.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { sql, statement, type NoRows, type Parameters, type Sql } from '../db/sql';
import { normaliseEmail } from '../domain/email';
import { generatedKeyOf } from '../domain/license-keys';
import type { FulfilmentRequest, RecordedPurchase } from '../domain/fulfilment';
import { issueKeyWithPurchase, waitsForKey } from '../licenses/license-store';
import { firstNotice } from './revocation-store';
import { dispatchInsert, type DispatchRow } from '../outbox/outbox-store';

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

interface RecordParams {
  orgId: string;
  productId: string;
  purchaseKey: string;
  source: string;
  /** The order's id, null when it has none. */
  externalOrderId: string | null;
  paymentReference: string | null;
  /** The same, '' for none: what a notice is matched with. */
  orderRef: string;
  paymentRef: string;
  amount: string;
  currency: string;
  paymentMethod: string;
  test: boolean;
  receiptStatus: string;
  deliveryItemId: string | null;
  /** A key for a generated-key product's new purchase (unused otherwise). */
  generatedKey: string;
}

const RECORD_ROW_KEYS = {
  product_found: true, customer_id: true, purchase_id: true, receipt_status: true, purchase_customer_id: true,
  already_reported: true, revoked: true, license_waiting: true, license_pool: true,
} as const;

/**
 * The statement around `customer_row` (the customer's id, or no row): the product, the notice a
 * refund that came first left, the purchase made or found, and what the caller reads.
 */
function recordWith<Customer, Extra = NoRows>(
  customerRow: (p: Parameters<RecordParams & Customer>) => Sql,
  writesWith: (p: Parameters<RecordParams & Extra>) => Sql = () => sql``,
) {
  return (p: Parameters<RecordParams & Customer & Extra>) => sql`with product_row as (select id, active_version_id, license_source from product where id = ${p.productId} and organisation_id = ${p.orgId}),
     ${customerRow(p)},
     notice as (${firstNotice({ orgId: p.orgId, source: p.source, orderRef: p.orderRef, paymentRef: p.paymentRef, productId: p.productId })}),
     new_purchase as (
       insert into purchase (id, organisation_id, product_id, version_id, customer_id, amount, currency,
         payment_method, source, external_order_id, payment_reference, test, receipt_status, revoked_at, revoke_reason, license_wanted, created_at)
       select ${p.purchaseKey}::uuid, ${p.orgId}::uuid, p.id, p.active_version_id, c.id, ${p.amount}::numeric, ${p.currency}::text,
         ${p.paymentMethod}::text, ${p.source}::text, ${p.externalOrderId}::text, ${p.paymentReference}::text, ${p.test}::boolean,
         case when n.reason is null then ${p.receiptStatus}::text else 'skipped' end,
         case when n.reason is null then null else now() end, n.reason, p.license_source is not null, now()
       from product_row p cross join customer_row c left join notice n on true
       on conflict do nothing returning id, receipt_status, customer_id, revoked_at, license_wanted),
     ${issueKeyWithPurchase({ orgId: p.orgId, productId: p.productId, generatedKey: p.generatedKey })},
     purchase_row as (
       select id, receipt_status, customer_id, revoked_at, license_wanted from new_purchase
       union all
       select id, receipt_status, customer_id, revoked_at, license_wanted from purchase
       where organisation_id = ${p.orgId} and source = ${p.source} and external_order_id = ${p.externalOrderId} and product_id = ${p.productId}
         and not exists (select 1 from new_purchase)
       union all
       select id, receipt_status, customer_id, revoked_at, license_wanted from purchase
       where id = ${p.purchaseKey} and external_order_id is null and not exists (select 1 from new_purchase))
     ${writesWith(p)}
     select exists (select 1 from product_row) as product_found,
       (select id from customer_row limit 1) as customer_id,
       r.id as purchase_id, r.receipt_status, r.customer_id as purchase_customer_id, r.revoked_at is not null as revoked,
       coalesce(${waitsForKey}, false) as license_waiting,
       exists (select 1 from product_row where license_source = 'pool') as license_pool,
       exists (select 1 from webhook_delivery_item where id = ${p.deliveryItemId}::uuid and outcome is not null) as already_reported
     from (select 1) as one left join purchase_row r on true`;
}

/** An existing customer of the organisation. */
const customerById = (p: Parameters<{ customerId: string; orgId: string }>) =>
  sql`customer_row as (select id from customer where id = ${p.customerId} and organisation_id = ${p.orgId})`;

/** The customer found or created by email (created only when the product exists, so a refused sale leaves nothing behind). */
const customerByEmail = (p: Parameters<{ email: string; name: string; orgId: string }>) => sql`new_customer as (
      insert into customer (id, organisation_id, email, name, created_at)
      select gen_random_uuid(), ${p.orgId}::uuid, ${p.email}::text, ${p.name}::text, now() where exists (select 1 from product_row)
      on conflict (organisation_id, email) do nothing returning id),
    customer_row as (
      select id from new_customer union all select id from customer where organisation_id = ${p.orgId} and email = ${p.email} limit 1)`;

/**
 * One record shape's two statements: for a customer named by id, and for one found or created by
 * email; `writes` adds data-modifying CTEs that commit with the purchase.
 */
function recordStatements<Extra extends object>(writes?: (p: Parameters<RecordParams & Extra>) => Sql) {
  return {
    byId: statement<RecordPurchaseRow, RecordParams & Extra & { customerId: string }>(RECORD_ROW_KEYS, recordWith(customerById, writes)),
    byEmail: statement<RecordPurchaseRow, RecordParams & Extra & { email: string; name: string }>(RECORD_ROW_KEYS, recordWith(customerByEmail, writes)),
  };
}

const PURCHASE_ONLY = recordStatements<NoRows>();

/** What a sale recorded by its request writes beside its purchase (POST /api/purchases). */
interface SaleWrites {
  tokenHash: string;
  expiresAt: Date;
  now: Date;
  /** Its run's outbox row (a DispatchRow as JSON). */
  dispatchRow: string;
}

/**
 * The link the answer shows and the start of the sale's run, written only with a purchase this
 * statement created: a sale whose order is already recorded leaves neither.
 */
const saleWrites = (p: Parameters<RecordParams & SaleWrites>) => sql`,
     sale_link as (
       insert into download_token (id, purchase_id, token_hash, expires_at, created_at, issued_via)
       select gen_random_uuid(), id, ${p.tokenHash}::text, ${p.expiresAt}::timestamptz, ${p.now}::timestamptz, 'receipt'
       from new_purchase where id = ${p.purchaseKey}::uuid),
     sale_start as (${dispatchInsert(sql`(select case when exists (select 1 from new_purchase) then ${p.dispatchRow}::jsonb else '[]'::jsonb end)`)})`;

const SALE = recordStatements<SaleWrites>(saleWrites);

/**
 * The statement's parameters from the sale. Every field of the sale is taken here by name (the
 * customer goes to `customer_row`), so a field added to the sale and not stored fails to compile
 * instead of being dropped silently.
 */
function recordParams(input: FulfilmentRequest & { purchaseKey: string }): RecordParams {
  const {
    orgId, productId, purchaseKey, source, externalOrderId, paymentReference, amount, currency, paymentMethod, test,
    sendReceipt, deliveryItemId, customer: _customer, ...notStored
  } = input;
  const _nothingForgotten: Record<string, never> = notStored;
  return {
    orgId, productId, purchaseKey, source, externalOrderId, paymentReference: paymentReference ?? null,
    orderRef: externalOrderId ?? '', paymentRef: paymentReference ?? '', amount, currency, paymentMethod, test,
    receiptStatus: sendReceipt ? 'pending' : 'skipped', deliveryItemId: deliveryItemId ?? null,
    generatedKey: generatedKeyOf(randomBytes(13)),
  };
}

/**
 * Finds or creates the customer and creates the purchase, idempotently (a refund that came first,
 * its notice, makes it revoked from the start, with no receipt): the purchase's id is
 * `purchaseKey`, and its business key (organisation, source, order id, product) is unique, so a
 * retry or a duplicate run finds the row instead of making another (by its id when the order has
 * no id of its own: a sale recorded by its request). One statement (one round
 * trip, one commit). Returns the row as read; the caller decides what a missing part means.
 */
export function recordPurchase(em: EntityManager, input: FulfilmentRequest & { purchaseKey: string }): Promise<RecordPurchaseRow> {
  return runRecord(em, PURCHASE_ONLY, input, {});
}

/**
 * `recordPurchase` for a sale recorded by its request, with the link its answer shows and its
 * run's outbox row in the same statement: one round trip and one commit for the whole sale.
 */
export function recordSalePurchase(
  em: EntityManager,
  input: FulfilmentRequest & { purchaseKey: string },
  link: { tokenHash: string; expiresAt: Date; now: Date },
  dispatch: DispatchRow,
): Promise<RecordPurchaseRow> {
  return runRecord(em, SALE, input, { ...link, dispatchRow: JSON.stringify([dispatch]) });
}

async function runRecord<Extra extends object>(
  em: EntityManager, statements: ReturnType<typeof recordStatements<Extra>>, input: FulfilmentRequest & { purchaseKey: string }, extra: Extra,
): Promise<RecordPurchaseRow> {
  const params = { ...recordParams(input), ...extra };
  // Every part of one statement sees the same snapshot: a row another transaction commits
  // meanwhile (the same customer bought twice at once) is invisible here, and the statement
  // finds no customer or purchase; the retry sees it.
  const row = 'id' in input.customer
    ? await statements.byId.first(em, { ...params, customerId: input.customer.id })
    : await statements.byEmail.first(em, { ...params, email: normaliseEmail(input.customer.email), name: input.customer.name.trim() });
  return row!;
}

const receiptFailedUpdate = statement<NoRows, { purchaseId: string }>(
  {}, (p) => sql`update purchase set receipt_status = 'failed' where id = ${p.purchaseId} and receipt_status <> 'sent'`,
);

/** The receipt failed: a later delivery of the order re-sends it (decisions §5). Never undoes `sent`. */
export async function markReceiptFailed(em: EntityManager, purchaseId: string): Promise<void> {
  await receiptFailedUpdate.run(em, { purchaseId });
}
