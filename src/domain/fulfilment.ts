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
}

/** A sale as the service asks for it: the workflow starter adds the email retry window and the receipt's shape. */
export type FulfilmentRequest = Omit<FulfilmentInput, 'emailRetryWindowMs' | 'receiptInTask'>;

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

/** An order whose delivery entry ended `Error` with nothing delivered: one alert is due. */
export interface OrderAlertRequest {
  orgId: string;
  platform: PurchaseSource;
  externalOrderId: string;
  deliveryId: string;
}
