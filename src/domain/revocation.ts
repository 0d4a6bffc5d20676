/**
 * A refund or dispute event to apply (decisions §9): the input of the `purchaseRevocation`
 * workflow, recorded by the front door with the event's delivery log entry.
 */
import type { Platform } from './platforms';
import type { RevokeReason } from './statuses';

export interface RevocationRequest {
  orgId: string;
  platform: Platform;
  /** The delivery log entry (kind refund or dispute) whose items say what became of each line. */
  deliveryId: string;
  /** What the event names: an order id, or (payments-c) the payment the order was paid with. */
  refKind: 'order' | 'payment';
  orderRef: string;
  reason: Extract<RevokeReason, 'refund' | 'chargeback'>;
}
