/**
 * Writing a purchase: the one statement that finds or creates the customer and creates the
 * purchase (the fulfilment workflow's first step), and the mark of a failed receipt.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { normaliseEmail } from '../domain/email';
import type { FulfilmentRequest, RecordedPurchase } from '../domain/fulfilment';

export interface RecordPurchaseRow {
  product_found: boolean;
  customer_id: string | null;
  purchase_id: string | null;
  receipt_status: RecordedPurchase['receiptStatus'] | null;
  purchase_customer_id: string | null;
  already_reported: boolean;
  revoked: boolean;
}

/**
 * The customer: an existing one of the organisation, or found or created by email (created only
 * when the product exists, so a refused sale leaves nothing behind).
 */
function customerSql(input: FulfilmentRequest, email: string, params: unknown[]): string {
  if ('id' in input.customer) {
    params.push(input.customer.id, input.orgId);
    return 'customer_row as (select id from customer where id = ? and organisation_id = ?)';
  }
  params.push(input.orgId, email, input.customer.name.trim(), input.orgId, email);
  return `new_customer as (
      insert into customer (id, organisation_id, email, name, created_at)
      select gen_random_uuid(), ?, ?, ?, now() where exists (select 1 from product_row)
      on conflict (organisation_id, email) do nothing returning id),
    customer_row as (
      select id from new_customer union all select id from customer where organisation_id = ? and email = ? limit 1)`;
}

/**
 * Finds or creates the customer and creates the purchase, idempotently (a refund that came first,
 * its notice, makes it revoked from the start, with no receipt): the purchase's id is
 * `purchaseKey`, and its business key (organisation, source, order id, product) is unique, so a
 * retry or a duplicate run finds the row instead of making another (by its id when the order has
 * no id of its own: a sale recorded by its request). One statement (one round
 * trip, one commit). Returns the row as read; the caller decides what a missing part means.
 */
export async function recordPurchase(em: EntityManager, input: FulfilmentRequest & { purchaseKey: string }): Promise<RecordPurchaseRow> {
  const email = 'id' in input.customer ? '' : normaliseEmail(input.customer.email);
  const params: unknown[] = [input.productId, input.orgId];
  const customer = customerSql(input, email, params);
  params.push(
    input.orgId, input.source, input.externalOrderId ?? '', input.paymentReference ?? '', input.productId,
    input.purchaseKey, input.orgId, input.amount, input.currency, input.paymentMethod, input.source,
    input.externalOrderId, input.paymentReference ?? null, input.test, input.sendReceipt ? 'pending' : 'skipped',
    input.orgId, input.source, input.externalOrderId, input.productId, input.purchaseKey,
    input.deliveryItemId ?? null,
  );
  // Every part of one statement sees the same snapshot: a row another transaction commits
  // meanwhile (the same customer bought twice at once) is invisible here, and the statement
  // finds no customer or purchase; the retry sees it.
  const [row] = await em.execute<RecordPurchaseRow[]>(
    `with product_row as (select id, active_version_id from product where id = ? and organisation_id = ?),
     ${customer},
     notice as (
       select reason from revocation_notice
       where organisation_id = ? and source = ?
         and ((ref_kind = 'order' and order_ref = ?) or (ref_kind = 'payment' and order_ref = ?))
         and (product_id is null or product_id = ?)
       order by created_at limit 1),
     new_purchase as (
       insert into purchase (id, organisation_id, product_id, version_id, customer_id, amount, currency,
         payment_method, source, external_order_id, payment_reference, test, receipt_status, revoked_at, revoke_reason, created_at)
       select ?, ?, p.id, p.active_version_id, c.id, ?, ?, ?, ?, ?, ?, ?,
         case when n.reason is null then ? else 'skipped' end,
         case when n.reason is null then null else now() end, n.reason, now()
       from product_row p cross join customer_row c left join notice n on true
       on conflict do nothing returning id, receipt_status, customer_id, revoked_at),
     purchase_row as (
       select id, receipt_status, customer_id, revoked_at from new_purchase
       union all
       select id, receipt_status, customer_id, revoked_at from purchase
       where organisation_id = ? and source = ? and external_order_id = ? and product_id = ?
         and not exists (select 1 from new_purchase)
       union all
       select id, receipt_status, customer_id, revoked_at from purchase
       where id = ? and external_order_id is null and not exists (select 1 from new_purchase))
     select exists (select 1 from product_row) as product_found,
       (select id from customer_row limit 1) as customer_id,
       r.id as purchase_id, r.receipt_status, r.customer_id as purchase_customer_id, r.revoked_at is not null as revoked,
       exists (select 1 from webhook_delivery_item where id = ?::uuid and outcome is not null) as already_reported
     from (select 1) as one left join purchase_row r on true`,
    params,
  );
  return row;
}

/** The receipt failed: a later delivery of the order re-sends it (decisions §5). Never undoes `sent`. */
export async function markReceiptFailed(em: EntityManager, purchaseId: string): Promise<void> {
  await em.execute(`update purchase set receipt_status = 'failed' where id = ? and receipt_status <> 'sent'`, [purchaseId]);
}
