import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DATABASE_STEP, emailWithin, ORDER_ALERT, RECEIPT_FIRST_ATTEMPT } from '../src/domain/activity-policy';
import type {
  FulfilmentInput,
  FulfilmentResult,
  ItemOutcomeReport,
  OrderAlertRequest,
  RecordedPurchase,
} from '../src/domain/fulfilment';
import type { ClaimState } from '../src/domain/license-keys';
import { attachDeliveryItem, licenseKeyIssued, purchaseRecorded } from './messages';

/** Database steps are local activities: one workflow task instead of three round trips through the engine. */
const db = proxyLocalActivities<Activities>(DATABASE_STEP);
const { sendOrderAlert, sendLicensePoolAlert } = proxyActivities<Activities>(ORDER_ALERT);
const { sendReceipt: sendReceiptInTask } = proxyLocalActivities<Activities>(RECEIPT_FIRST_ATTEMPT);

/** A failure no retry can mend (a 5xx from the mail server, a purchase gone): the fallback would fail the same way. */
function isPermanent(error: unknown): boolean {
  // A local activity's failure comes as the activity's own error, a normal one's wrapped in an ActivityFailure.
  const failure = error instanceof ActivityFailure ? error.cause : error;
  return failure instanceof ApplicationFailure && failure.nonRetryable === true;
}

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

interface RoundResult {
  outcome: FulfilmentResult['outcome'];
  reason: string | null;
}

/** The purchase was refunded or disputed (before the order arrived, or by hand): no receipt. */
const WITHDRAWN: RoundResult = { outcome: 'revoked', reason: 'access withdrawn before the receipt was sent' };

/**
 * Fulfils one product of one order: the purchase (with its customer), then the receipt with a
 * fresh download link. Keyed by organisation + source + order id + product, so duplicate
 * deliveries join one run; the purchase's unique key in PostgreSQL is the lasting guarantee.
 *
 * Delivery items are reported in rounds. Round 0 is the run's own: the item that started it gets
 * the outcome, items that joined meanwhile are duplicates of it. An item that arrives after a
 * receipt send failed opens the next round: the receipt is sent once more, that item gets the
 * outcome, and those that join it are its duplicates.
 */
export async function fulfilOrderLine(input: FulfilmentInput): Promise<FulfilmentResult> {
  /** Each attached item with the round it joined: the run's failed sends when it arrived. */
  const attached: Array<{ itemId: string; round: number }> = [];
  const reported = new Set<string>();
  let failedSends = 0;
  let recorded: RecordedPurchase | undefined;
  let recordFailure: string | undefined;
  const attach = (itemId: string) => {
    if (!attached.some((a) => a.itemId === itemId)) attached.push({ itemId, round: failedSends });
  };
  setHandler(attachDeliveryItem, ({ itemId }) => attach(itemId));
  // A run is started for its item (no signal).
  if (input.deliveryItemId !== undefined) attach(input.deliveryItemId);
  setHandler(purchaseRecorded, async () => {
    await condition(() => recorded !== undefined || recordFailure !== undefined);
    if (!recorded) throw ApplicationFailure.nonRetryable(recordFailure ?? 'not recorded', 'PurchaseNotRecorded');
    return recorded;
  });

  const { sendReceipt } = proxyActivities<Activities>(emailWithin(input.emailRetryWindowMs));

  /** Wake-ups for a purchase waiting for a pool key. */
  let keyWakes = 0;
  setHandler(licenseKeyIssued, () => {
    keyWakes += 1;
  });

  /** The receipt: first inside the workflow task, then, if that attempt failed, with the whole retry window. */
  async function sendReceiptOnce(purchaseId: string): Promise<{ withdrawn: boolean } | undefined> {
    const sendKey = uuid4();
    if (input.receiptInTask === true) {
      try {
        return await sendReceiptInTask({ purchaseId, sendKey });
      } catch (error) {
        if (isPermanent(error)) throw error;
        log.info('receipt first attempt failed; retrying as an activity', { purchaseId, error: rootMessage(error) });
      }
    }
    return sendReceipt({ purchaseId, sendKey });
  }

  async function send(purchaseId: string): Promise<RoundResult> {
    try {
      // Runs recorded before revocation existed returned nothing: sent.
      const sent = await sendReceiptOnce(purchaseId);
      if (sent?.withdrawn) return WITHDRAWN;
      return { outcome: 'fulfilled', reason: null };
    } catch (error) {
      // From here on a delivery that arrives is a redelivery after the failure, not a join.
      failedSends += 1;
      const reason = isTimeout(error)
        ? 'receipt email could not be sent within the retry window'
        : `receipt email failed: ${rootMessage(error)}`;
      log.warn('receipt failed', { purchaseId, reason });
      await db.markReceiptFailed({ purchaseId });
      return { outcome: 'error', reason };
    }
  }

  /**
   * Alerts run beside the rounds: a staff address that defers mail must not hold back a
   * redelivery's re-send.
   */
  const alertRuns: Promise<void>[] = [];
  let alertsPending = 0;
  async function alert(request: OrderAlertRequest): Promise<void> {
    alertsPending += 1;
    try {
      await sendOrderAlert(request);
    } finally {
      alertsPending -= 1;
    }
  }

  /**
   * Reports the items of rounds up to `round`, including those attached while reporting (the
   * server refuses to complete a run while a signal is unhandled, so none is lost).
   */
  async function report(round: number, starter: string | undefined, result: RoundResult): Promise<void> {
    for (;;) {
      const batch = attached.filter((a) => a.round <= round && !reported.has(a.itemId));
      if (batch.length === 0) return;
      const reports = batch.map(({ itemId }): ItemOutcomeReport => {
        reported.add(itemId);
        if (itemId === starter) return { itemId, outcome: result.outcome, reason: result.reason, purchaseId: recorded?.purchaseId ?? null };
        return recorded
          ? { itemId, outcome: 'duplicate', reason: null, purchaseId: recorded.purchaseId }
          : { itemId, outcome: 'error', reason: result.reason, purchaseId: null };
      });
      const alerts = await db.recordItemOutcomes({ items: reports });
      alertRuns.push(...alerts.map(alert));
    }
  }

  try {
    // A sale recorded by its request comes with its purchase's id: the run finds it as its own.
    recorded = await db.recordPurchase({ ...input, purchaseKey: input.purchaseKey ?? uuid4() });
  } catch (error) {
    recordFailure = rootMessage(error);
  }

  /**
   * A new purchase of a pool product (decisions §14): one that found the pool empty waits here,
   * durably, until an upload issues it a key (its items show why the entry is Pending); either way
   * the pool's dry and low alerts go to the staff once each.
   */
  async function settleLicenseKey(purchase: RecordedPurchase): Promise<ClaimState> {
    if (!purchase.licensePool) return 'none';
    let waiting = purchase.licenseWaiting === true;
    let noted = false;
    for (;;) {
      const seen = keyWakes;
      const settled = await db.settleLicenseKey({ purchaseId: purchase.purchaseId, productId: input.productId, waiting });
      alertRuns.push(...settled.alerts.map((a) => sendLicensePoolAlert(a)));
      if (settled.state !== 'waiting') return settled.state;
      if (!noted) {
        await db.noteWaitingForKey({ itemIds: attached.map((a) => a.itemId) });
        noted = true;
      }
      await condition(() => keyWakes > seen);
      waiting = true;
    }
  }

  let result: RoundResult;
  if (!recorded) {
    result = { outcome: 'error', reason: recordFailure ?? 'purchase could not be recorded' };
  } else if (recorded.revoked && !recorded.alreadyReported) {
    result = WITHDRAWN;
  } else if (recorded.alreadyReported || (!recorded.created && recorded.receiptStatus !== 'failed')) {
    // Already recorded: by another run, or by this very item's earlier run (a repeated dispatch).
    result = { outcome: 'duplicate', reason: null };
  } else if ((await settleLicenseKey(recorded)) === 'withdrawn') {
    result = WITHDRAWN;
  } else if (!input.sendReceipt) {
    result = { outcome: 'fulfilled', reason: null };
  } else {
    result = await send(recorded.purchaseId);
  }

  let round = 0;
  let starter = input.deliveryItemId;
  const unreported = () => attached.find((a) => !reported.has(a.itemId));
  for (;;) {
    await report(round, starter, result);
    const next = unreported();
    if (!next) {
      if (alertsPending === 0) break;
      await condition(() => alertsPending === 0 || unreported() !== undefined);
      continue;
    }
    // Joined the current round while alerts went out: the next report takes it as a duplicate.
    if (next.round <= round) continue;
    // A later round needs a failed send, so a recorded purchase; without one nothing is left to do.
    if (!recorded) break;
    round = next.round;
    starter = next.itemId;
    result = await send(recorded.purchaseId);
  }
  await Promise.all(alertRuns);

  return {
    purchaseId: recorded?.purchaseId ?? '',
    customerId: recorded?.customerId ?? '',
    outcome: result.outcome,
    reason: result.reason,
  };
}
