import { defineSignal, defineUpdate } from '@temporalio/workflow';
import type { RecordedPurchase } from '../src/domain/fulfilment';

/** A webhook delivery item that this run's outcome is to be reported to. */
export interface AttachDeliveryItem {
  itemId: string;
}

/**
 * Sent with signalWithStart by the front door: the first item attached gets the run's outcome,
 * items of concurrent duplicate deliveries that join the run get `duplicate`.
 */
export const attachDeliveryItem = defineSignal<[AttachDeliveryItem]>('attachDeliveryItem');

/**
 * Completes once the purchase is recorded (before the receipt is sent): the API and dashboard use
 * it with update-with-start to answer with the purchase without waiting for SMTP.
 */
export const purchaseRecorded = defineUpdate<RecordedPurchase>('purchaseRecorded');
