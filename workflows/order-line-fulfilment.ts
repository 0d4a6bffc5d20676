import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import type { Activities } from '../activities';
import { DATABASE_STEP, emailWithin, ORDER_ALERT, RECEIPT_FIRST_ATTEMPT } from '../src/domain/activity-policy';
import {
  afterKey,
  firstStepOf,
  itemReportsOf,
  RECEIPT_RETRY_NOTED_PATCH,
  sentResult,
  WITHDRAWN,
  type FirstRound,
  type FulfilmentInput,
  type FulfilmentResult,
  type OrderAlertRequest,
  type RecordedPurchase,
  type RoundResult,
} from '../src/domain/fulfilment';
import type { ClaimState } from '../src/domain/license-keys';
import { attachDeliveryItem, licenseKeyIssued, purchaseRecorded } from './messages';

/** Database steps are local activities: one workflow task instead of three round trips through the engine. */
const db = proxyLocalActivities<Activities>(DATABASE_STEP);
const { sendOrderAlert, sendLicensePoolAlert } = proxyActivities<Activities>(ORDER_ALERT);
const { sendReceipt: sendReceiptInTask } = proxyLocalActivities<Activities>(RECEIPT_FIRST_ATTEMPT);

/** A receipt's first attempt, made inside the workflow task by fulfilFirstRound, that failed. */
interface FailedFirstAttempt {
  sendKey: string;
  permanent: boolean;
  message: string;
}

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

  /**
   * The receipt: first inside the workflow task, then, if that attempt failed, with the whole retry
   * window. `firstAttempt` is the outcome of a first attempt made already (by fulfilFirstRound), under its key.
   */
  async function sendReceiptOnce(purchaseId: string, firstAttempt?: FailedFirstAttempt): Promise<{ withdrawn: boolean } | undefined> {
    const sendKey = firstAttempt?.sendKey ?? uuid4();
    if (firstAttempt?.permanent) throw ApplicationFailure.nonRetryable(firstAttempt.message, 'PermanentSmtpFailure');
    if (firstAttempt) {
      log.info('receipt first attempt failed; retrying as an activity', { purchaseId, error: firstAttempt.message });
    } else if (input.receiptInTask === true) {
      try {
        return await sendReceiptInTask({ purchaseId, sendKey });
      } catch (error) {
        if (isPermanent(error)) throw error;
        log.info('receipt first attempt failed; retrying as an activity', { purchaseId, error: rootMessage(error) });
      }
    }
    // Retried on a timer for up to the window: the items say so, and the run no longer takes a place at work.
    const waiting = attached.filter((a) => !reported.has(a.itemId)).map((a) => a.itemId);
    if (waiting.length > 0 && patched(RECEIPT_RETRY_NOTED_PATCH)) await db.noteReceiptRetrying({ itemIds: waiting });
    return sendReceipt({ purchaseId, sendKey });
  }

  async function send(purchaseId: string, firstAttempt?: FailedFirstAttempt): Promise<RoundResult> {
    try {
      return sentResult(await sendReceiptOnce(purchaseId, firstAttempt));
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
   * redelivery's re-send. While any is under way the run stays open, so a delivery that joins it
   * meanwhile is still reported.
   */
  const alertRuns: Promise<void>[] = [];
  let alertsPending = 0;
  function beside(send: () => Promise<void>): void {
    alertsPending += 1;
    alertRuns.push(send().finally(() => {
      alertsPending -= 1;
    }));
  }
  const alert = (request: OrderAlertRequest) => beside(() => sendOrderAlert(request));

  /**
   * Reports the items of rounds up to `round`, including those attached while reporting (the
   * server refuses to complete a run while a signal is unhandled, so none is lost).
   */
  async function report(round: number, starter: string | undefined, result: RoundResult): Promise<void> {
    for (;;) {
      const batch = attached.filter((a) => a.round <= round && !reported.has(a.itemId));
      if (batch.length === 0) return;
      for (const { itemId } of batch) reported.add(itemId);
      const alerts = await db.recordItemOutcomes({ items: itemReportsOf(batch.map((a) => a.itemId), starter, result, recorded) });
      alerts.forEach(alert);
    }
  }

  // A sale recorded by its request comes with its purchase's id: the run finds it as its own.
  const purchaseKey = input.purchaseKey ?? uuid4();

  /**
   * The first round in one local activity (input.firstRoundInTask): the round's result with its
   * items reported, or the failed first attempt of the receipt, or nothing more than the purchase
   * (it asks for more than its receipt: the run goes on as below).
   */
  async function firstRoundInTask(): Promise<{ result?: RoundResult; failed?: FailedFirstAttempt }> {
    const sendKey = uuid4();
    const itemIds = attached.map((a) => a.itemId);
    let first: FirstRound;
    try {
      first = await db.fulfilFirstRound({ ...input, purchaseKey, sendKey, itemIds });
    } catch (error) {
      recordFailure = rootMessage(error);
      return {};
    }
    recorded = first.recorded;
    if ('result' in first) {
      for (const itemId of itemIds) reported.add(itemId);
      first.alerts.forEach(alert);
      return { result: first.result };
    }
    if ('sendFailure' in first) return { failed: { sendKey, ...first.sendFailure } };
    return {};
  }

  let first: { result?: RoundResult; failed?: FailedFirstAttempt } = {};
  if (input.firstRoundInTask === true) {
    first = await firstRoundInTask();
  } else {
    try {
      recorded = await db.recordPurchase({ ...input, purchaseKey });
    } catch (error) {
      recordFailure = rootMessage(error);
    }
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
      for (const poolAlert of settled.alerts) beside(() => sendLicensePoolAlert(poolAlert));
      if (settled.state !== 'waiting') return settled.state;
      if (!noted) {
        await db.noteWaitingForKey({ itemIds: attached.map((a) => a.itemId) });
        noted = true;
      }
      await condition(() => keyWakes > seen);
      waiting = true;
    }
  }

  /** The first round's result, from the purchase as recorded. */
  async function firstResult(purchase: RecordedPurchase): Promise<RoundResult> {
    let step = firstStepOf(purchase, input.sendReceipt);
    if (step === 'settle-key') step = (await settleLicenseKey(purchase)) === 'withdrawn' ? WITHDRAWN : afterKey(input.sendReceipt);
    return step === 'send' ? send(purchase.purchaseId, first.failed) : step;
  }

  let result: RoundResult;
  if (first.result) result = first.result;
  else if (!recorded) result = { outcome: 'error', reason: recordFailure ?? 'purchase could not be recorded' };
  else result = await firstResult(recorded);

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
