/**
 * The workflow starts and signals a recorded request owes Temporal (the transactional outbox of
 * decisions §4, amended 2026-11-26): what each row carries, and how long a refused one waits.
 */
import type { FulfilmentRequest, OrderAlertRequest } from './fulfilment';
import type { FreshLinksAsk } from './fresh-links';
import type { OutboundDeliveryTarget } from './outbound-events';
import type { PurchaseSource } from './platforms';
import type { BuyerReminderRequest } from './reminder';
import type { RevocationRequest } from './revocation';
import type { VersionNotificationInput } from './version-notification';

export type FulfilLineDispatch = {
  kind: 'fulfil-line';
  /** The line's run input: start it, or attach `deliveryItemId` to the line's open run. */
  payload: FulfilmentRequest & { externalOrderId: string; deliveryItemId: string };
};
/** An API or dashboard sale, recorded by its request (`purchaseKey`): start its one run. */
export type FulfilSaleDispatch = {
  kind: 'fulfil-sale';
  payload: FulfilmentRequest & { purchaseKey: string; orderKey: string };
};
export type OrderAlertDispatch = { kind: 'order-alert'; payload: OrderAlertRequest };
export type FreshLinksDispatch = { kind: 'fresh-links'; payload: FreshLinksAsk };
export type RevokeDispatch = { kind: 'revoke'; payload: RevocationRequest };
export type NotifyBuyersDispatch = { kind: 'notify-buyers'; payload: VersionNotificationInput };

/**
 * One event to one endpoint (decisions §13): written with the event by the outbound-events triggers,
 * or by a redelivery (`redelivery`: a run still open makes one more attempt).
 */
export type DeliverEventDispatch = { kind: 'deliver-event'; payload: OutboundDeliveryTarget & { redelivery?: true } };

/**
 * Wakes the fulfilment run of a purchase that waits for a pool key (decisions §14): an upload issued
 * it one, or it was revoked. `orderKey` is the run's order id (`sale-{purchaseId}` for a sale without one).
 */
export type LicenseIssuedDispatch = {
  kind: 'license-issued';
  payload: { orgId: string; source: PurchaseSource; orderKey: string; productId: string; purchaseId: string };
};

/** A purchase's receipt was accepted (decisions §16): start its one reminder run, which waits until `dueAt`. */
export type BuyerReminderDispatch = { kind: 'buyer-reminder'; payload: BuyerReminderRequest };

/** The purchase's first file transfer completed while its reminder waits: the run ends without sending. */
export type TransferCompletedDispatch = { kind: 'transfer-completed'; payload: { orgId: string; purchaseId: string } };

export type DispatchRequest = FulfilLineDispatch | FulfilSaleDispatch | OrderAlertDispatch | FreshLinksDispatch | RevokeDispatch | NotifyBuyersDispatch
  | DeliverEventDispatch | LicenseIssuedDispatch | BuyerReminderDispatch | TransferCompletedDispatch;
export type DispatchKind = DispatchRequest['kind'];

/**
 * Work nobody waits on: an integrator's events, a version's notices, a buyer reminder's start and its
 * end. An organisation's rows of these kinds are claimed after its others (its sales above all), and
 * their runs get a lower priority in the engine, so a burst of them never holds back a receipt.
 */
export const BULK_DISPATCH_KINDS = ['deliver-event', 'notify-buyers', 'buyer-reminder', 'transfer-completed'] as const satisfies readonly DispatchKind[];

export function isBulkDispatch(kind: DispatchKind): boolean {
  return (BULK_DISPATCH_KINDS as readonly DispatchKind[]).includes(kind);
}

/** One outbox row to write: the request, its workflow id, and its organisation when it has one. */
export type NewDispatch = DispatchRequest & { workflowId: string; orgId: string | null };

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;

/**
 * What a failed start or signal means for its outbox row:
 * - `permanent`: the engine will never take it as it is (invalid argument: an id or payload over its
 *   limits; the namespace does not exist): a dead letter at once;
 * - `unreachable`: the engine did not answer (down, overloaded past the deadline, not yet connected:
 *   the client raises plain errors only while connecting): retried without limit, and the only
 *   reason a dispatcher loop pauses;
 * - `refused`: any other answer (rate limited, a run that closed before its signal …): retried up
 *   to a cap, then a dead letter.
 */
export type DispatchFailureKind = 'permanent' | 'unreachable' | 'refused';

/**
 * How often the engine is tried again while it is out of reach: a dispatch loop that found it so
 * pauses at most this long, and a row it could not start waits at most this long (spread as below).
 * A longer wait would only delay the rows once the engine is back: the loops' pauses are what spare
 * an engine that is down, whatever the number of rows waiting.
 */
export const ENGINE_RETRY_MAX_MS = 5_000;

/**
 * How long a row waits after its `attempts`-th failed start: doubling from 0.5 s up to 30 s when
 * the engine refused it, up to ENGINE_RETRY_MAX_MS when the engine was out of reach; spread by
 * ±50 % (`random` in [0, 1)) so that rows that failed together do not all come back in the same
 * instant.
 */
export function dispatchRetryDelayMs(attempts: number, random: number, cause: Exclude<DispatchFailureKind, 'permanent'>): number {
  const longest = cause === 'unreachable' ? ENGINE_RETRY_MAX_MS : MAX_RETRY_MS;
  const base = Math.min(longest, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
  return Math.round(base * (0.5 + random));
}
