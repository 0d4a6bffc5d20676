import { ApplicationFailure } from '@temporalio/activity';
import { Product } from '../src/db/entities';
import type { FulfilmentInput, RecordedPurchase } from '../src/domain/fulfilment';
import type { ActivityDeps } from './deps';

interface Row {
  id: string;
  receipt_status: RecordedPurchase['receiptStatus'];
}

export function purchaseActivities({ orm }: ActivityDeps) {
  return {
    /**
     * Finds or creates the customer and creates the purchase, idempotently: the purchase's id is
     * the workflow's `purchaseKey`, and its business key (organisation, source, order id, product)
     * is unique, so a retry or a duplicate run finds the row instead of making another.
     */
    async recordPurchase(input: FulfilmentInput & { purchaseKey: string }): Promise<RecordedPurchase> {
      const em = orm.em.fork();
      return em.transactional(async (tx) => {
        const product = await tx.findOne(
          Product,
          { id: input.productId, organisation: input.orgId },
          { fields: ['id', 'activeVersion'] },
        );
        if (!product) throw ApplicationFailure.nonRetryable('product not found', 'NotFound');

        let customerId: string;
        if ('id' in input.customer) {
          const [found] = await tx.execute<Array<{ id: string }>>(
            'select id from customer where id = ? and organisation_id = ?',
            [input.customer.id, input.orgId],
          );
          if (!found) throw ApplicationFailure.nonRetryable('customer not found', 'NotFound');
          customerId = found.id;
        } else {
          const email = input.customer.email.trim().toLowerCase();
          if (!email) throw ApplicationFailure.nonRetryable('the order has no customer email', 'NoEmail');
          await tx.execute(
            `insert into customer (id, organisation_id, email, name, created_at)
             values (gen_random_uuid(), ?, ?, ?, now()) on conflict (organisation_id, email) do nothing`,
            [input.orgId, email, input.customer.name.trim()],
          );
          const [found] = await tx.execute<Array<{ id: string }>>(
            'select id from customer where organisation_id = ? and email = ?',
            [input.orgId, email],
          );
          customerId = found.id;
        }

        await tx.execute(
          `insert into purchase (id, organisation_id, product_id, version_id, customer_id, amount, currency,
             payment_method, source, external_order_id, test, receipt_status, created_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now()) on conflict do nothing`,
          [
            input.purchaseKey, input.orgId, input.productId, product.activeVersion?.id ?? null, customerId,
            input.amount, input.currency, input.paymentMethod, input.source, input.externalOrderId, input.test,
            input.sendReceipt ? 'pending' : 'skipped',
          ],
        );
        const [row] = input.externalOrderId === null
          ? await tx.execute<Row[]>('select id, receipt_status from purchase where id = ?', [input.purchaseKey])
          : await tx.execute<Row[]>(
              `select id, receipt_status, customer_id from purchase
               where organisation_id = ? and source = ? and external_order_id = ? and product_id = ?`,
              [input.orgId, input.source, input.externalOrderId, input.productId],
            );
        const existingCustomer = (row as Row & { customer_id?: string }).customer_id;
        const [reportedItem] = input.deliveryItemId === undefined ? [] : await tx.execute<Array<{ id: string }>>(
          'select id from webhook_delivery_item where id = ? and outcome is not null', [input.deliveryItemId],
        );
        return {
          purchaseId: row.id,
          customerId: existingCustomer ?? customerId,
          created: row.id === input.purchaseKey,
          receiptStatus: row.receipt_status,
          ...(reportedItem ? { alreadyReported: true } : {}),
        };
      });
    },

    /** The item ended `error`: a later delivery of the order re-sends the receipt (decisions §5). */
    async markReceiptFailed({ purchaseId }: { purchaseId: string; reason: string }): Promise<void> {
      await orm.em.fork().execute(
        `update purchase set receipt_status = 'failed' where id = ? and receipt_status <> 'sent'`,
        [purchaseId],
      );
    },
  };
}
