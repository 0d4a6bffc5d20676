/**
 * What the front door decides for each line of a received order (decisions §4–§5), before any
 * fulfilment: held, unmatched and unfulfillable lines get their outcome at once; the others are
 * fulfilled by a workflow. Pure: the caller looks the products up.
 */
import type { ProductStatus } from './statuses';

/** The product a line's SKU maps to, as far as the decision needs it. */
export interface MatchedProduct {
  productId: string;
  status: ProductStatus;
  /** It has an active version whose status is `ready`. */
  hasLiveVersion: boolean;
}

export interface OrderFacts {
  paid: boolean;
  subscriptionExpired: boolean;
  /** The customer email is present and looks like an address. */
  hasCustomerEmail: boolean;
}

export type LinePlan =
  | { kind: 'fulfil'; productId: string }
  | { kind: 'final'; productId: string | null; outcome: 'held' | 'unmatched' | 'error'; reason: string };

export const LINE_REASONS = {
  subscriptionExpired: 'subscription expired',
  notPaid: 'not paid',
  noSku: 'no SKU',
  unknownSku: 'unknown SKU',
  draft: 'product is draft',
  archived: 'product is archived',
  notLive: 'product has no live version',
  noEmail: 'order has no customer email',
} as const;

/**
 * One line's fate. Order-wide holds come first (a lapsed subscription, an unpaid order: every
 * line is held so that no sale is lost and a later delivery fulfils it), then the SKU, then the
 * product's state, then whether a receipt can be addressed at all.
 */
export function planLine(sku: string | null, product: MatchedProduct | undefined, order: OrderFacts): LinePlan {
  const productId = product?.productId ?? null;
  const final = (outcome: 'held' | 'unmatched' | 'error', reason: string): LinePlan => ({ kind: 'final', productId, outcome, reason });
  if (order.subscriptionExpired) return final('held', LINE_REASONS.subscriptionExpired);
  if (!order.paid) return final('held', LINE_REASONS.notPaid);
  if (sku === null) return final('unmatched', LINE_REASONS.noSku);
  if (!product) return final('unmatched', LINE_REASONS.unknownSku);
  if (product.status === 'draft') return final('held', LINE_REASONS.draft);
  if (product.status === 'archived') return final('held', LINE_REASONS.archived);
  if (!product.hasLiveVersion) return final('held', LINE_REASONS.notLive);
  if (!order.hasCustomerEmail) return final('error', LINE_REASONS.noEmail);
  return { kind: 'fulfil', productId: product.productId };
}
