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
 * Completes once the purchase is recorded (before the receipt is sent): the API and dashboard use
 * it with update-with-start to answer with the purchase without waiting for SMTP.
 */
export const purchaseRecorded = defineUpdate<RecordedPurchase>('purchaseRecorded');
