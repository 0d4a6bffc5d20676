import { ApplicationFailure } from '@temporalio/activity';
import type { FulfilmentInput, RecordedPurchase } from '../src/domain/fulfilment';
import type { ActivityDeps } from './deps';

interface Row {
  product_found: boolean;
  customer_id: string | null;
  purchase_id: string | null;
  receipt_status: RecordedPurchase['receiptStatus'] | null;
  purchase_customer_id: string | null;
  already_reported: boolean;
}

/**
 * The customer: an existing one of the organisation, or found or created by email (created only
 * when the product exists, so a refused sale leaves nothing behind).
 */
function customerSql(input: FulfilmentInput, email: string, params: unknown[]): string {
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

export function purchaseActivities({ orm }: ActivityDeps) {
  return {
    /**
     * Finds or creates the customer and creates the purchase, idempotently: the purchase's id is
     * the workflow's `purchaseKey`, and its business key (organisation, source, order id, product)
     * is unique, so a retry or a duplicate run finds the row instead of making another. One
     * statement (one round trip, one commit): it runs as a local activity on the fulfilment's
     * first workflow task.
     */
    async recordPurchase(input: FulfilmentInput & { purchaseKey: string }): Promise<RecordedPurchase> {
      const email = 'id' in input.customer ? '' : input.customer.email.trim().toLowerCase();
      if (!('id' in input.customer) && !email) throw ApplicationFailure.nonRetryable('the order has no customer email', 'NoEmail');
      const params: unknown[] = [input.productId, input.orgId];
      const customer = customerSql(input, email, params);
      params.push(
        input.purchaseKey, input.orgId, input.amount, input.currency, input.paymentMethod, input.source,
        input.externalOrderId, input.test, input.sendReceipt ? 'pending' : 'skipped',
        input.orgId, input.source, input.externalOrderId, input.productId,
        input.deliveryItemId ?? null,
      );
      // Every part of one statement sees the same snapshot: a row another transaction commits
      // meanwhile (the same customer bought twice at once) is invisible here, and the statement
      // finds no customer or purchase; the retry sees it.
      const [row] = await orm.em.fork().execute<Row[]>(
        `with product_row as (select id, active_version_id from product where id = ? and organisation_id = ?),
         ${customer},
         new_purchase as (
           insert into purchase (id, organisation_id, product_id, version_id, customer_id, amount, currency,
             payment_method, source, external_order_id, test, receipt_status, created_at)
           select ?, ?, p.id, p.active_version_id, c.id, ?, ?, ?, ?, ?, ?, ?, now() from product_row p, customer_row c
           on conflict do nothing returning id, receipt_status, customer_id),
         purchase_row as (
           select id, receipt_status, customer_id from new_purchase
           union all
           select id, receipt_status, customer_id from purchase
           where organisation_id = ? and source = ? and external_order_id = ? and product_id = ?
             and not exists (select 1 from new_purchase))
         select exists (select 1 from product_row) as product_found,
           (select id from customer_row limit 1) as customer_id,
           r.id as purchase_id, r.receipt_status, r.customer_id as purchase_customer_id,
           exists (select 1 from webhook_delivery_item where id = ?::uuid and outcome is not null) as already_reported
         from (select 1) as one left join purchase_row r on true`,
        params,
      );
      if (!row.product_found) throw ApplicationFailure.nonRetryable('product not found', 'NotFound');
      if (!row.customer_id && 'id' in input.customer) throw ApplicationFailure.nonRetryable('customer not found', 'NotFound');
      if (!row.purchase_id || !row.receipt_status || !row.purchase_customer_id) {
        throw new Error('the customer or the purchase is being recorded by another transaction; retrying');
      }
      return {
        purchaseId: row.purchase_id,
        customerId: row.purchase_customer_id,
        created: row.purchase_id === input.purchaseKey,
        receiptStatus: row.receipt_status,
        ...(row.already_reported ? { alreadyReported: true } : {}),
      };
    },

    /** The item ended `error`: a later delivery of the order re-sends the receipt (decisions §5). */
    async markReceiptFailed({ purchaseId }: { purchaseId: string }): Promise<void> {
      await orm.em.fork().execute(
        `update purchase set receipt_status = 'failed' where id = ? and receipt_status <> 'sent'`,
        [purchaseId],
      );
    },
  };
}
