/**
 * storefront-a (Shopify-style order webhook, `orders/paid`). Signature: base64 HMAC-SHA256 of the raw
 * body keyed by the store's signing secret, header `X-StorefrontA-Hmac-Sha256` (alias
 * `X-Shopify-Hmac-Sha256`).
 *
 * Refunds arrive on the same URL with topic `refunds/create` (header `X-StorefrontA-Topic`, alias
 * `X-Shopify-Topic`); the body is then the platform's Refund resource, not an order (decisions §9).
 */
import type { NormalizedLine, NormalizedOrder, ParseResult, PlatformAdapter } from './adapter';
import {
  currencyOf,
  decimalAmount,
  firstText,
  joinName,
  jsonObjectBody,
  multiplyAmount,
  objectAt,
  quantityOf,
  requireArray,
  requireId,
  requireObject,
  text,
  type JsonObject,
} from './fields';
import { partialRefund } from './revocation';
import { configured, headerValue, verifyBase64Hmac } from './signature';

export const STOREFRONT_A_HEADERS = ['x-storefronta-hmac-sha256', 'x-shopify-hmac-sha256'];
export const STOREFRONT_A_TOPIC_HEADERS = ['x-storefronta-topic', 'x-shopify-topic'];

/**
 * An Order resource as the platform's webhook and its Admin API's order list both give it (the same
 * object): the one mapping of both (src/webhooks/storefront-a-orders.ts reads the list).
 */
export function storefrontAOrder(order: JsonObject): NormalizedOrder {
  const externalOrderId = requireId(order.id, 'id');
  const currency = currencyOf(order.currency);
  const customer = objectAt(order.customer);
  const billing = objectAt(order.billing_address);

  const lines = requireArray(order.line_items, 'line_items').map((item, index): NormalizedLine => {
    const line = requireObject(item, `line_items[${index}]`);
    const quantity = quantityOf(line.quantity, `line_items[${index}].quantity`);
    const unit = decimalAmount(line.price, currency);
    return { sku: text(line.sku), quantity, amount: multiplyAmount(unit, quantity, currency) };
  });

  return {
    externalOrderId,
    customer: {
      email: firstText(order.email, customer?.email),
      name: joinName(customer?.first_name, customer?.last_name) ?? text(billing?.name),
    },
    currency,
    lines,
    paid: order.financial_status === 'paid',
    test: order.test === true,
  };
}

/**
 * A Refund resource: `order_id` names the order (big ids arrive as digit strings, see json.ts), each
 * `refund_line_items[].line_item` a refunded line. A refund without line items gives money back by
 * amount only (shipping, goodwill), so it revokes nothing.
 */
function parseRefund(refund: JsonObject): ParseResult {
  const externalOrderId = requireId(refund.order_id, 'order_id');
  const items = refund.refund_line_items === undefined || refund.refund_line_items === null
    ? []
    : requireArray(refund.refund_line_items, 'refund_line_items');
  const skus = items.map((item, index) => text(objectAt(requireObject(item, `refund_line_items[${index}]`).line_item)?.sku));
  return {
    kind: 'revocations',
    revocations: [
      {
        event: 'refund',
        order: { externalOrderId },
        scope: skus.length === 0 ? partialRefund() : { kind: 'lines', skus },
      },
    ],
  };
}

export const storefrontA: PlatformAdapter<'storefront-a'> = {
  platform: 'storefront-a',
  contentTypes: ['application/json'],
  secretField: { field: 'secret', label: 'Webhook signing secret' },
  routing: { kind: 'per-organisation' },
  setupNote: null,

  verify(request, secrets) {
    return verifyBase64Hmac(request, configured(secrets.secret), STOREFRONT_A_HEADERS);
  },

  parse(request) {
    const body = jsonObjectBody(request);
    // Any other topic (or none) is an order, as before refunds were read.
    const topic = headerValue(request.headers, ...STOREFRONT_A_TOPIC_HEADERS);
    return topic === 'refunds/create' ? parseRefund(body) : { kind: 'orders', orders: [storefrontAOrder(body)] };
  },
};
