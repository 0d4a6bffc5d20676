/**
 * cart-e (Gumroad Ping-style form-encoded sale ping, one product per ping). No signature: the webhook
 * URL carries the shared secret in its query parameter `secret`, compared in constant time.
 *
 * Refunds and disputes re-send the sale's ping (decisions §9), with `resource_name` `refund` or
 * `dispute` when they come through a resource subscription. `refunded=true` only once the whole sale
 * is refunded: a partial refund pings `resource_name=refund` with `refunded=false` (the ping has no
 * partial-refund field). `disputed` stays true after a won dispute, which pings `dispute_won`.
 */
import type { NormalizedOrder, ParseResult, PlatformAdapter } from './adapter';
import { currencyOf, formBody, minorAmount, quantityOf } from './fields';
import { field, requireField } from './form';
import { partialRefund } from './revocation';
import { configured, matched, safeEqual } from './signature';

/**
 * A sale as the ping and the Sales API (`GET /v2/sales`, src/webhooks/cart-e-orders.ts) both give it:
 * the platform builds both from the same purchase, under different field names (ping `sale_id`,
 * `permalink`, `email`; API `id`, `product_permalink`, `purchase_email`). Each reader names the
 * fields; this is the one mapping of both.
 */
export interface CartESale {
  saleId: string;
  email: string | null;
  fullName: string | null;
  /** The product's permalink: the SKU a seller maps. */
  permalink: string | null;
  quantity: unknown;
  /** In cents (minor units) of `currency`. */
  price: unknown;
  currency: unknown;
  test: boolean;
  /** False once the sale was fully refunded or charged back (and the dispute not won). */
  paid: boolean;
}

export function cartESaleOrder(sale: CartESale): NormalizedOrder {
  const currency = currencyOf(sale.currency);
  return {
    externalOrderId: sale.saleId,
    customer: { email: sale.email, name: sale.fullName },
    currency,
    lines: [{ sku: sale.permalink, quantity: quantityOf(sale.quantity, 'quantity'), amount: minorAmount(sale.price, currency) }],
    paid: sale.paid,
    test: sale.test,
  };
}

/** Resources whose ping is read; any other (cancellation, dispute_won, subscription_*) is ignored. */
const READ_RESOURCES = new Set(['sale', 'refund', 'dispute']);

/** A refund or dispute ping, or null for a sale. */
function revocationOf(form: URLSearchParams, resource: string | null): ParseResult | null {
  const refunded = field(form, 'refunded') === 'true';
  // `disputed` stays true once the seller has won the dispute: that is no new dispute.
  const disputed = field(form, 'disputed') === 'true' && field(form, 'dispute_won') !== 'true';
  let event: 'refund' | 'dispute';
  if (resource === 'refund' || (resource !== 'dispute' && refunded)) event = 'refund';
  else if (resource === 'dispute' || disputed) event = 'dispute';
  else return null;

  return {
    kind: 'revocations',
    revocations: [
      {
        event,
        order: { externalOrderId: requireField(form, 'sale_id') },
        scope: event === 'refund' && !refunded ? partialRefund() : { kind: 'order' },
      },
    ],
  };
}

export const cartE: PlatformAdapter<'cart-e'> = {
  platform: 'cart-e',
  contentTypes: ['application/x-www-form-urlencoded'],
  secretField: { field: 'secret', label: 'Shared secret (the ?secret= of the URL)' },
  routing: { kind: 'per-organisation' },
  setupNote: 'append ?secret=<your secret> to this URL where cart E asks for it: cart E sends the secret in the query string',

  // The URL's ?secret= stands for the signature header: without it, the header is missing.
  verify(request, secrets) {
    const secret = configured(secrets.secret);
    const sent = request.query?.secret;
    if (typeof sent !== 'string' || sent === '') return 'signature header missing';
    if (secret === undefined) return 'signature mismatch';
    return matched(safeEqual(sent, secret));
  },

  parse(request) {
    const form = formBody(request);
    const resource = field(form, 'resource_name');
    if (resource !== null && !READ_RESOURCES.has(resource)) {
      return { kind: 'ignored', reason: `resource ${resource} is not a sale, refund or dispute` };
    }
    const revocation = revocationOf(form, resource);
    if (revocation !== null) return revocation;

    const order = cartESaleOrder({
      saleId: requireField(form, 'sale_id'),
      email: field(form, 'email'),
      fullName: field(form, 'full_name'),
      permalink: field(form, 'permalink') ?? field(form, 'short_product_id'),
      quantity: field(form, 'quantity'),
      price: form.get('price'),
      currency: form.get('currency'),
      test: field(form, 'test') === 'true',
      // A refunded or disputed sale's ping was read as a revocation above.
      paid: true,
    });
    return { kind: 'orders', orders: [order] };
  },
};
