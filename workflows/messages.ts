import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RecordedPurchase } from '../src/domain/fulfilment';

/** A webhook delivery item that this run's outcome is to be reported to. */
export interface AttachDeliveryItem {
  itemId: string;
}

/**
 * Sent by the dispatcher when a delivery's line finds its run open (and, by runs started before
 * 2026-11-26, with signalWithStart for every item): the item the run was started for gets the
 * run's outcome, items of duplicate deliveries that join it get `duplicate` (or a re-send round).
 */
export const attachDeliveryItem = defineSignal<[AttachDeliveryItem]>('attachDeliveryItem');

/**
 * Completes once the purchase is recorded (before the receipt is sent). Until 2026-11-26 the API
 * and dashboard started their sales with update-with-start and waited on it; sales are now recorded
 * by their request (src/purchases/record-sale), and the handler stays so those runs replay.
 */
export const purchaseRecorded = defineUpdate<RecordedPurchase>('purchaseRecorded');

/**
 * Sent (through the outbox) to the run of a purchase that waits for a pool key when an upload
 * issued it one, or when the purchase was revoked meanwhile: the run looks again.
 */
export const licenseKeyIssued = defineSignal('licenseKeyIssued');

/**
 * Sent (through the outbox) to a purchase's reminder run when its first file transfer completed
 * (decisions §16): the buyer has the product, and the run ends without sending.
 */
export const transferCompleted = defineSignal('transferCompleted');

/**
 * Sent (through the outbox, with signalWithStart) for a redelivery of an event to an endpoint: a run
 * still open makes one more attempt at once after its current one, so a redelivery asked while the
 * run waits to retry, or in the instant after it delivered, is never joined and lost.
 */
export const redeliverOutboundEvent = defineSignal('redeliverOutboundEvent');
