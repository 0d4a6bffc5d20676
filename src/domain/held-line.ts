/**
 * What an `unmatched` order line keeps so it can be delivered once its SKU is mapped (decisions §12):
 * the sale's terms and its customer, minus the product, which the mapping decides. A line whose
 * product is known goes to the outbox from the same sale (`lineDispatch`), so a field of the sale
 * (`SaleTerms`) reaches both paths without a change here.
 */
import type { NewDispatch } from './dispatch';
import type { SaleTerms } from './fulfilment';
import { fulfilLineWorkflowId } from './ids';
import type { Platform } from './platforms';

export interface HeldLine extends SaleTerms {
  customer: { email: string; name: string };
}

/** Which webhook line a fulfilment is for: its order, and the delivery item that gets the outcome. */
export interface WebhookLine {
  orgId: string;
  platform: Platform;
  externalOrderId: string;
  itemId: string;
}

/** The outbox row that starts (or joins) a webhook line's fulfilment run, now or when its held sale is delivered. */
export function lineDispatch(line: WebhookLine, sale: HeldLine, productId: string): NewDispatch {
  const payload = {
    ...sale,
    orgId: line.orgId,
    source: line.platform,
    externalOrderId: line.externalOrderId,
    productId,
    paymentMethod: line.platform,
    sendReceipt: true,
    deliveryItemId: line.itemId,
  };
  return { kind: 'fulfil-line', workflowId: fulfilLineWorkflowId(payload), orgId: line.orgId, payload };
}
