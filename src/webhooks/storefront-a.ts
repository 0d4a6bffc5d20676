/**
 * storefront-a (Shopify-style order webhook, `orders/paid`). Signature: base64 HMAC-SHA256 of the raw
 * body keyed by the store's signing secret, header `X-StorefrontA-Hmac-Sha256` (alias
 * `X-Shopify-Hmac-Sha256`).
 */
import type { NormalizedLine, PlatformAdapter } from './adapter';
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
} from './fields';
import { configured, verifyBase64Hmac } from './signature';

export const STOREFRONT_A_HEADERS = ['x-storefronta-hmac-sha256', 'x-shopify-hmac-sha256'];

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
    const order = jsonObjectBody(request);
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
      kind: 'orders',
      orders: [
        {
          externalOrderId,
          customer: {
            email: firstText(order.email, customer?.email),
            name: joinName(customer?.first_name, customer?.last_name) ?? text(billing?.name),
          },
          currency,
          lines,
          paid: order.financial_status === 'paid',
          test: order.test === true,
        },
      ],
    };
  },
};
