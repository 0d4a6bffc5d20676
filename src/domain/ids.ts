import { createHash } from 'node:crypto';
import type { PurchaseSource } from './platforms';
import type { RevocationRequest } from './revocation';

/**
 * The engine's `limit.maxIDLength` as compose and `start:cluster` set it (the dev server too). Temporal
 * measures a workflow id in bytes (UTF-8), so an order id of 200 characters may be 800 bytes.
 */
export const MAX_WORKFLOW_ID_BYTES = 255;

/**
 * A business key `part/part/…` whose `reference` (an order id or payment, as the platform sent it)
 * is kept as it is when the whole id fits the engine's limit — every id that fit before stays the
 * same, so runs already open are still joined — and is otherwise replaced by its SHA-256 digest,
 * which keeps the key deterministic (it still de-duplicates) and short. The full reference travels in
 * the run's input and its OrderId search attribute.
 */
function fittedWorkflowId(head: string[], reference: string, tail: string[]): string {
  const plain = [...head, reference, ...tail].join('/');
  if (Buffer.byteLength(plain, 'utf8') <= MAX_WORKFLOW_ID_BYTES) return plain;
  const digest = `sha256-${createHash('sha256').update(reference, 'utf8').digest('base64url')}`;
  return [...head, digest, ...tail].join('/');
}

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
  return fittedWorkflowId(['fulfil', orgId, source], externalOrderId, [productId]);
}

export function alertWorkflowId(orgId: string, source: PurchaseSource, externalOrderId: string): string {
  return fittedWorkflowId(['alert', orgId, source], externalOrderId, []);
}

/** One run per event entry: a redelivered event is an entry of its own, whose items find the purchases already revoked. */
export function revocationWorkflowId(request: Pick<RevocationRequest, 'orgId' | 'platform' | 'orderRef' | 'deliveryId'>): string {
  return fittedWorkflowId(['revoke', request.orgId, request.platform], request.orderRef, [request.deliveryId]);
}

/** SKUs match case-insensitively after trimming (decisions §3). */
export function normaliseSku(sku: string): string {
  return sku.trim().toLowerCase();
}
