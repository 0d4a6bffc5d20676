import { ApplicationFailure } from '@temporalio/activity';
import type { FulfilmentInput, RecordedPurchase } from '../src/domain/fulfilment';
import { markReceiptFailed, recordPurchase } from '../src/purchases/purchase-store';
import type { ActivityDeps } from './deps';

export function purchaseActivities({ orm }: ActivityDeps) {
  return {
    /**
     * The purchase and its customer (src/purchases/purchase-store): one statement, so it runs
     * as a local activity on the fulfilment's first workflow task. A refused sale is final; a
     * row another transaction is writing right now is retried.
     */
    async recordPurchase(input: FulfilmentInput & { purchaseKey: string }): Promise<RecordedPurchase> {
      if (!('id' in input.customer) && !input.customer.email.trim()) {
        throw ApplicationFailure.nonRetryable('the order has no customer email', 'NoEmail');
      }
      const row = await recordPurchase(orm.em.fork(), input);
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
        ...(row.revoked ? { revoked: true } : {}),
        ...(row.license_pool ? { licensePool: true } : {}),
        ...(row.license_waiting ? { licenseWaiting: true } : {}),
      };
    },

    /** The item ended `error`: a later delivery of the order re-sends the receipt (decisions §5). */
    async markReceiptFailed({ purchaseId }: { purchaseId: string }): Promise<void> {
      await markReceiptFailed(orm.em.fork(), purchaseId);
    },
  };
}
