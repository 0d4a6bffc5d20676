import { createHash } from 'node:crypto';
import type { FulfilLineDispatch, FulfilSaleDispatch } from './dispatch';
import type { FreshLinksAsk } from './fresh-links';
import type { OrderAlertRequest } from './fulfilment';
import type { OutboundDeliveryTarget } from './outbound-events';
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

/*
 * Every outbox row's workflow id, one function per kind, derived from what the row carries (its
 * payload) so that id and payload cannot disagree. The strings are those of every run recorded so
 * far: open runs are joined by them, so they never change. Ids are business keys and never carry
 * personal data: they are stored and shown in plain text. (The `deliver-event` rows the
 * outbound-events triggers write spell `outboundDeliveryWorkflowId` again in SQL.)
 */

/** The run of one line's product in a webhook order (`fulfil-line`): organisation, platform, order id, product. */
export function fulfilLineWorkflowId(line: Pick<FulfilLineDispatch['payload'], 'orgId' | 'source' | 'externalOrderId' | 'productId'>): string {
  return fittedWorkflowId(['fulfil', line.orgId, line.source], line.externalOrderId, [line.productId]);
}

/** The order key of an API or dashboard sale: its order id, or `sale-{purchaseId}` when it has none. */
export function saleOrderKey(externalOrderId: string | null, purchaseId: string): string {
  return externalOrderId ?? `sale-${purchaseId}`;
}

/** The one run of an API or dashboard sale (`fulfil-sale`): as a line's, with its order key for the order id. */
export function fulfilSaleWorkflowId(sale: Pick<FulfilSaleDispatch['payload'], 'orgId' | 'source' | 'orderKey' | 'productId'>): string {
  return fittedWorkflowId(['fulfil', sale.orgId, sale.source], sale.orderKey, [sale.productId]);
}

/** An order's staff alert (`order-alert`). */
export function alertWorkflowId(alert: Pick<OrderAlertRequest, 'orgId' | 'platform' | 'externalOrderId'>): string {
  return fittedWorkflowId(['alert', alert.orgId, alert.platform], alert.externalOrderId, []);
}

/** One run per event entry (`revoke`): a redelivered event is an entry of its own, whose items find the purchases already revoked. */
export function revocationWorkflowId(request: Pick<RevocationRequest, 'orgId' | 'platform' | 'orderRef' | 'deliveryId'>): string {
  return fittedWorkflowId(['revoke', request.orgId, request.platform], request.orderRef, [request.deliveryId]);
}

/** One run per request (`fresh-links`); no personal data: the request id is random. */
export function freshLinksWorkflowId(ask: Pick<FreshLinksAsk, 'requestId'>): string {
  return `fresh-links/${ask.requestId}`;
}

/**
 * One run (chain) per product version (`notify-buyers`), ever. The row carries the notification,
 * not the version: the id is the version's.
 */
export function versionNotificationWorkflowId(versionId: string): string {
  return `notify/${versionId}`;
}

/** The run of one (event, endpoint) delivery (`deliver-event`): at most 4 + 26 + 1 + 36 + 6 characters, far below the limit. */
export function outboundDeliveryWorkflowId(target: OutboundDeliveryTarget): string {
  return `event/${target.eventId}/${target.endpointId}`;
}

/**
 * The one reminder run of a purchase (`buyer-reminder`, and `transfer-completed` that signals it),
 * readable in the Temporal UI.
 */
export function reminderWorkflowId(purchaseId: string): string {
  return `reminder/${purchaseId}`;
}

/** SKUs match case-insensitively after trimming (decisions §3). */
export function normaliseSku(sku: string): string {
  return sku.trim().toLowerCase();
}
