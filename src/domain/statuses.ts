export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];
/** "Admin role" in the spec means owner or admin. */
export const isAdminRole = (role: Role): boolean => role === 'owner' || role === 'admin';

export const PRODUCT_STATUSES = ['draft', 'published', 'archived'] as const;
export type ProductStatus = (typeof PRODUCT_STATUSES)[number];

export const VERSION_STATUSES = ['ready'] as const;
export type VersionStatus = (typeof VERSION_STATUSES)[number];

export const DELIVERY_STATUSES = ['Pending', 'Success', 'Error', 'held'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * What became of one line. Orders: fulfilled, duplicate, held, unmatched, error, or revoked (a refund
 * came first, decisions §9). Refund and dispute events: revoked, not found, already revoked, or kept
 * (a partial refund by amount).
 */
export const ITEM_OUTCOMES = ['fulfilled', 'duplicate', 'held', 'unmatched', 'error', 'revoked', 'not found', 'already revoked', 'kept'] as const;
export type ItemOutcome = (typeof ITEM_OUTCOMES)[number];

/** What a delivery log entry was: an order, or a refund or dispute event (decisions §9). */
export const DELIVERY_KINDS = ['order', 'refund', 'dispute'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** How a delivery log entry came: the platform's webhook, or a reconciliation run that found its order missed (decisions §15). */
export const DELIVERY_SOURCES = ['webhook', 'reconciliation'] as const;
export type DeliverySource = (typeof DELIVERY_SOURCES)[number];

/** Why a purchase's access was withdrawn. */
export const REVOKE_REASONS = ['refund', 'chargeback', 'manual'] as const;
export type RevokeReason = (typeof REVOKE_REASONS)[number];

/**
 * What happened to a purchase's receipt. `failed` is the only state in which a redelivery of the
 * order re-sends it (decisions §5: "never sent" means its item ended `error`).
 */
export const RECEIPT_STATUSES = ['pending', 'sent', 'failed', 'skipped'] as const;
export type ReceiptStatus = (typeof RECEIPT_STATUSES)[number];

/**
 * Entry status from its items' outcomes (decisions §5): `Pending` until every item has one; `Error`
 * if any item is `error` or every item is `unmatched`; `held` if none is fulfilled/duplicate and at
 * least one is held; else `Success`.
 */
export function deliveryStatusOf(outcomes: ReadonlyArray<ItemOutcome | null>): DeliveryStatus {
  if (outcomes.length === 0) return 'Error';
  if (outcomes.some((o) => o === null)) return 'Pending';
  if (outcomes.includes('error')) return 'Error';
  if (outcomes.every((o) => o === 'unmatched')) return 'Error';
  const delivered = outcomes.some((o) => o === 'fulfilled' || o === 'duplicate');
  if (!delivered && outcomes.includes('held')) return 'held';
  return 'Success';
}

/** An alert goes out only when an entry ends `Error` and nothing of it reached the customer. */
export function alertDue(outcomes: ReadonlyArray<ItemOutcome | null>): boolean {
  return (
    deliveryStatusOf(outcomes) === 'Error' &&
    !outcomes.some((o) => o === 'fulfilled' || o === 'duplicate')
  );
}
