import { ActivityFailure, ApplicationFailure, condition, log, proxyActivities, setHandler, uuid4 } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type {
  FulfilmentInput,
  FulfilmentResult,
  ItemOutcomeReport,
  RecordedPurchase,
} from '../src/domain/fulfilment';
import { attachDeliveryItem, purchaseRecorded } from './messages';

const { recordPurchase, markReceiptFailed, recordItemOutcomes, sendOrderAlert } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

/** The message of the failure at the bottom of an activity failure chain. */
function rootMessage(error: unknown): string {
  let current = error as { cause?: unknown; message?: string } | undefined;
  while (current?.cause) current = current.cause as typeof current;
  return current?.message ?? String(error);
}

/** The retry window ran out: a timeout, or no retry left inside the schedule-to-close timeout. */
function isTimeout(error: unknown): boolean {
  if (error instanceof ActivityFailure && error.retryState === 'TIMEOUT') return true;
  return (error as { cause?: { name?: string } }).cause?.name === 'TimeoutFailure';
}

/**
 * Fulfils one product of one order: the purchase (with its customer), then the receipt with a
 * fresh download link. Keyed by organisation + source + order id + product, so duplicate
 * deliveries join one run; the purchase's unique key in PostgreSQL is the lasting guarantee.
 */
export async function orderLineFulfilment(input: FulfilmentInput): Promise<FulfilmentResult> {
  const attached: string[] = [];
  let recorded: RecordedPurchase | undefined;
  let recordFailure: string | undefined;
  setHandler(attachDeliveryItem, ({ itemId }) => {
    if (!attached.includes(itemId)) attached.push(itemId);
  });
  setHandler(purchaseRecorded, async () => {
    await condition(() => recorded !== undefined || recordFailure !== undefined);
    if (!recorded) throw ApplicationFailure.nonRetryable(recordFailure ?? 'not recorded', 'PurchaseNotRecorded');
    return recorded;
  });

  const { sendReceipt } = proxyActivities<Activities>({
    // Temporary SMTP failures are retried with backoff for the whole window; the activity throws
    // permanent ones (5xx) non-retryable.
    scheduleToCloseTimeout: input.emailRetryWindowMs,
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '2 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes' },
  });

  let outcome: FulfilmentResult['outcome'];
  let reason: string | null = null;
  try {
    recorded = await recordPurchase({ ...input, purchaseKey: uuid4() });
  } catch (error) {
    recordFailure = rootMessage(error);
  }

  if (!recorded) {
    outcome = 'error';
    reason = recordFailure ?? 'purchase could not be recorded';
  } else if (!recorded.created && recorded.receiptStatus !== 'failed') {
    outcome = 'duplicate';
  } else if (!input.sendReceipt) {
    outcome = 'fulfilled';
  } else {
    try {
      await sendReceipt({ purchaseId: recorded.purchaseId, sendKey: uuid4() });
      outcome = 'fulfilled';
    } catch (error) {
      reason = isTimeout(error)
        ? 'receipt email could not be sent within the retry window'
        : `receipt email failed: ${rootMessage(error)}`;
      log.warn('receipt failed', { purchaseId: recorded.purchaseId, reason });
      await markReceiptFailed({ purchaseId: recorded.purchaseId, reason });
      outcome = 'error';
    }
  }

  // Report to every attached delivery item, including those whose signals arrive meanwhile (the
  // server refuses to complete a run while a signal is unhandled, so none is lost). The item of
  // the delivery that started the run gets its outcome; items of deliveries that joined it are
  // duplicates of it, unless nothing was recorded at all.
  let reported = 0;
  while (reported < attached.length) {
    const batch: ItemOutcomeReport[] = attached.slice(reported).map((itemId): ItemOutcomeReport => {
      if (itemId === input.deliveryItemId) {
        return { itemId, outcome, reason, purchaseId: recorded?.purchaseId ?? null };
      }
      return recorded
        ? { itemId, outcome: 'duplicate', reason: null, purchaseId: recorded.purchaseId }
        : { itemId, outcome: 'error', reason, purchaseId: null };
    });
    reported += batch.length;
    const alerts = await recordItemOutcomes({ items: batch });
    for (const alert of alerts) await sendOrderAlert(alert);
  }

  return {
    purchaseId: recorded?.purchaseId ?? '',
    customerId: recorded?.customerId ?? '',
    outcome,
    reason,
  };
}
