import type { PurchaseSource } from './platforms';

/**
 * Temporal workflow ids are business keys (organisation, source, order id, product id) and never
 * carry personal data: they are stored and shown in plain text.
 */
export function fulfilmentWorkflowId(
  orgId: string,
  source: PurchaseSource,
  externalOrderId: string,
  productId: string,
): string {
  return `fulfil/${orgId}/${source}/${externalOrderId}/${productId}`;
}

export function alertWorkflowId(orgId: string, source: PurchaseSource, externalOrderId: string): string {
  return `alert/${orgId}/${source}/${externalOrderId}`;
}

/** SKUs match case-insensitively after trimming (decisions §3). */
export function normaliseSku(sku: string): string {
  return sku.trim().toLowerCase();
}
