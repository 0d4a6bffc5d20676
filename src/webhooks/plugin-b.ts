/**
 * plugin-b (WooCommerce-style order webhook). Signature: base64 HMAC-SHA256 of the raw body, keyed by
 * the shared secret after `wp_specialchars_decode($secret, ENT_QUOTES)`, header
 * `X-PluginB-Webhook-Signature` (alias `X-WC-Webhook-Signature`). On activation the platform posts an
 * unsigned form body `webhook_id=<id>`, which must be answered 200 and recorded nowhere.
 *
 * Refunds have no topic of their own: the order webhook fires again (`order.updated`) with the
 * order's new status, and `refunded` or `cancelled` takes the whole order back (decisions §9).
 */
import type { NormalizedLine, NormalizedOrder, PlatformAdapter, WebhookRequest } from './adapter';
import {
  bodyText,
  currencyOf,
  decimalAmount,
  jsonObjectBody,
  joinName,
  objectAt,
  quantityOf,
  requireArray,
  requireId,
  requireObject,
  text,
  type JsonObject,
} from './fields';
import { configured, verifyBase64Hmac } from './signature';

export const PLUGIN_B_HEADERS = ['x-pluginb-webhook-signature', 'x-wc-webhook-signature'];

const PAID_STATUSES = new Set(['processing', 'completed']);
/**
 * Statuses that take the whole order back. Read whatever the topic header says: the payload is built
 * when the delivery runs, so its status is the order's current one.
 */
const REVOKED_STATUSES = new Set(['refunded', 'cancelled']);

const WP_ENTITIES: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"',
  '39': "'", '34': '"', '60': '<', '62': '>', '38': '&',
  x27: "'", x22: '"', x26: '&',
};

/**
 * WordPress `wp_specialchars_decode($text, ENT_QUOTES)`: one pass over the named entities
 * `&amp; &lt; &gt; &quot;` and the numeric forms of ' " < > & (`&#039;`, `&#x27;` ...), nothing else.
 */
export function wpSpecialcharsDecode(value: string): string {
  return value.replace(/&(amp|lt|gt|quot|#0*(39|34|60|62|38)|#[xX]0*(27|22|26));/g, (_m, name: string, dec?: string, hex?: string) =>
    WP_ENTITIES[dec ?? (hex !== undefined ? `x${hex}` : name)],
  );
}

/**
 * An order resource as the platform's webhook and its REST API's order list (`/wp-json/wc/v3/orders`)
 * both give it (the same object): the one mapping of both (src/webhooks/plugin-b-orders.ts reads the
 * list). A refunded or cancelled order is not paid here; the webhook reads it as a revocation first.
 */
export function pluginBOrder(order: JsonObject): NormalizedOrder {
  const externalOrderId = requireId(order.id, 'id');
  const currency = currencyOf(order.currency);
  const billing = objectAt(order.billing);

  const lines = requireArray(order.line_items, 'line_items').map((item, index): NormalizedLine => {
    const line = requireObject(item, `line_items[${index}]`);
    return {
      sku: text(line.sku),
      quantity: quantityOf(line.quantity, `line_items[${index}].quantity`),
      amount: decimalAmount(line.total, currency),
    };
  });

  return {
    externalOrderId,
    customer: {
      email: text(billing?.email),
      name: joinName(billing?.first_name, billing?.last_name),
    },
    currency,
    lines,
    paid: typeof order.status === 'string' && PAID_STATUSES.has(order.status),
    test: false,
  };
}

function isUnsignedPing(request: WebhookRequest): boolean {
  return /^webhook_id=\d+$/.test(bodyText(request).trim());
}

export const pluginB: PlatformAdapter<'plugin-b'> = {
  platform: 'plugin-b',
  contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
  secretField: { field: 'secret', label: 'Webhook secret' },
  routing: { kind: 'per-organisation' },
  setupNote: null,

  verify(request, secrets) {
    const secret = configured(secrets.secret);
    return verifyBase64Hmac(request, secret === undefined ? undefined : wpSpecialcharsDecode(secret), PLUGIN_B_HEADERS);
  },

  isUnsignedPing,

  parse(request) {
    if (isUnsignedPing(request)) return { kind: 'ignored', reason: 'activation ping' };
    const order = jsonObjectBody(request);
    const externalOrderId = requireId(order.id, 'id');
    if (typeof order.status === 'string' && REVOKED_STATUSES.has(order.status)) {
      return { kind: 'revocations', revocations: [{ event: 'refund', order: { externalOrderId }, scope: { kind: 'order' } }] };
    }
    return { kind: 'orders', orders: [pluginBOrder(order)] };
  },
};
