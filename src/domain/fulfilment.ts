import type { PurchaseSource } from './platforms';
import type { ItemOutcome, ReceiptStatus } from './statuses';

/**
 * What a sale carries into its purchase besides its customer, however it came (webhook, API,
 * dashboard, a held line delivered later): one list, so a field of the sale is declared once.
 */
export interface SaleTerms {
  /** Decimal string with the currency's minor digits. */
  amount: string;
  currency: string;
  test: boolean;
  /** payments-c: the payment the order was paid with, which its refunds and disputes name. */
  paymentReference?: string;
}

/** One sale of one product to fulfil: the input of the `fulfilOrderLine` workflow. */
export interface FulfilmentInput extends SaleTerms {
  orgId: string;
  source: PurchaseSource;
  /** The platform's order id; null for API and dashboard sales that name none. */
  externalOrderId: string | null;
  productId: string;
  /** An existing customer of the organisation, or one found or created by email. */
  customer: { id: string } | { email: string; name: string };
  paymentMethod: string;
  sendReceipt: boolean;
  /** How long temporary SMTP failures are retried before the receipt fails (EMAIL_RETRY_WINDOW). */
  emailRetryWindowMs: number;
  /**
   * Webhook deliveries: the item of the delivery that started the run. It gets the run's outcome;
   * items of other deliveries that join the run are duplicates. Absent for API and dashboard sales.
   */
  deliveryItemId?: string;
  /**
   * API and dashboard sales: the id of the purchase that the request recorded before the run
   * started (POST /api/purchases). The run's recording step finds that purchase as its own, so the
   * run sends its receipt. Webhook lines have no such id: each run makes up a new one.
   */
  purchaseKey?: string;
  /**
   * The receipt's first attempt runs inside the workflow task (RECEIPT_FIRST_ATTEMPT). Set by every
   * start since 2026-11-27; runs started before have none and replay their normal activity. A field
   * of the input, not a patch marker: a marker would cost each run two history events (the marker
   * and its search-attribute upsert).
   */
  receiptInTask?: boolean;
  /**
   * The first round (record the purchase, the receipt's first attempt, report the items) is one
   * local activity (`fulfilFirstRound`): one workflow task with two activations instead of four.
   * Set by every start since 2026-12-06; runs started before have none and replay their three
   * local activities. A field of the input for the reason `receiptInTask` is.
   */
  firstRoundInTask?: boolean;
}

/** A sale as the service asks for it: the workflow starter adds the email retry window and the run's shape. */
export type FulfilmentRequest = Omit<FulfilmentInput, 'emailRetryWindowMs' | 'receiptInTask' | 'firstRoundInTask'>;

export interface RecordedPurchase {
  purchaseId: string;
  customerId: string;
  /** True when this run created it; false when the order was already recorded. */
  created: boolean;
  receiptStatus: ReceiptStatus;
  /**
   * The run's own delivery item already has its outcome: this run comes from a repeated outbox
   * dispatch after an earlier run finished, and does nothing more.
   */
  alreadyReported?: boolean;
  /** A refund or dispute came before the order (decisions §9): recorded revoked, no receipt. */
  revoked?: boolean;
  /** Its product hands out keys from a pool (decisions §14): the pool's alerts are checked after the purchase. */
  licensePool?: boolean;
  /** The pool had no free key: the receipt waits for one. */
  licenseWaiting?: boolean;
}

export interface FulfilmentResult {
  purchaseId: string;
  customerId: string;
  outcome: Extract<ItemOutcome, 'fulfilled' | 'duplicate' | 'error' | 'revoked'>;
  reason: string | null;
}

export interface ItemOutcomeReport {
  itemId: string;
  outcome: ItemOutcome;
  reason: string | null;
  purchaseId: string | null;
}

/** What a round of a fulfilment run came to: its starting item's outcome. */
export interface RoundResult {
  outcome: FulfilmentResult['outcome'];
  reason: string | null;
}

/**
 * The reason an undecided item shows while its run retries the receipt (the relay deferred its
 * first attempt): the log says why its entry is Pending, and the outbox counts the run as parked,
 * not at work in the engine (it waits on a timer, for up to the email's retry window).
 */
export const RECEIPT_RETRYING_REASON = 'receipt email deferred by the mail server; retrying';

/** The workflow patch under which a run notes that reason (runs begun before it replay without the step). */
export const RECEIPT_RETRY_NOTED_PATCH = 'receipt-retry-noted';

/** The purchase was refunded or disputed (before the order arrived, or by hand): no receipt. */
export const WITHDRAWN: RoundResult = { outcome: 'revoked', reason: 'access withdrawn before the receipt was sent' };
const DUPLICATE: RoundResult = { outcome: 'duplicate', reason: null };
const FULFILLED: RoundResult = { outcome: 'fulfilled', reason: null };

/**
 * What a run does first with the purchase it recorded: a result at once, a license key to settle
 * (a pool product; then `afterKey`), or the receipt to send.
 */
export function firstStepOf(recorded: RecordedPurchase, sendReceipt: boolean): RoundResult | 'settle-key' | 'send' {
  if (recorded.revoked && !recorded.alreadyReported) return WITHDRAWN;
  // Already recorded: by another run, or by this very item's earlier run (a repeated dispatch).
  if (recorded.alreadyReported || (!recorded.created && recorded.receiptStatus !== 'failed')) return DUPLICATE;
  if (recorded.licensePool) return 'settle-key';
  return afterKey(sendReceipt);
}

/** A pool product's next step once its key is settled and not withdrawn. */
export function afterKey(sendReceipt: boolean): RoundResult | 'send' {
  return sendReceipt ? 'send' : FULFILLED;
}

/** A receipt that went out (or was withdrawn on the way): the round's result. */
export function sentResult(sent: { withdrawn: boolean } | undefined): RoundResult {
  // Runs recorded before revocation existed returned nothing: sent.
  return sent?.withdrawn ? WITHDRAWN : FULFILLED;
}

/**
 * The outcomes of a round's items: `starter` gets the round's result; the others joined it, so they
 * are duplicates of the recorded purchase (errors, when none could be recorded).
 */
export function itemReportsOf(itemIds: string[], starter: string | undefined, result: RoundResult, recorded: RecordedPurchase | undefined): ItemOutcomeReport[] {
  return itemIds.map((itemId): ItemOutcomeReport => {
    if (itemId === starter) return { itemId, outcome: result.outcome, reason: result.reason, purchaseId: recorded?.purchaseId ?? null };
    return recorded
      ? { itemId, outcome: 'duplicate', reason: null, purchaseId: recorded.purchaseId }
      : { itemId, outcome: 'error', reason: result.reason, purchaseId: null };
  });
}

/**
 * What `fulfilFirstRound` came to: the round's result with its items reported (and the alerts
 * due); or the receipt's first attempt failed (permanently, or to be retried as a normal activity
 * under the same key); or the purchase asked for something other than its receipt, which the run
 * does itself.
 */
export type FirstRound =
  | { recorded: RecordedPurchase; result: RoundResult; alerts: OrderAlertRequest[] }
  | { recorded: RecordedPurchase; sendFailure: { permanent: boolean; message: string } }
  | { recorded: RecordedPurchase };

/** An order whose delivery entry ended `Error` with nothing delivered: one alert is due. */
export interface OrderAlertRequest {
  orgId: string;
  platform: PurchaseSource;
  externalOrderId: string;
  deliveryId: string;
}
