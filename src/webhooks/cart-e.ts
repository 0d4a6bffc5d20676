/**
 * cart-e (Gumroad Ping-style form-encoded sale ping, one product per ping). No signature: the webhook
 * URL carries the shared secret in its query parameter `secret`, compared in constant time.
 */
import type { PlatformAdapter } from './adapter';
import { currencyOf, formBody, minorAmount, quantityOf } from './fields';
import { field, requireField } from './form';
import { configured, safeEqual } from './signature';

export const cartE: PlatformAdapter<'cart-e'> = {
  platform: 'cart-e',
  contentTypes: ['application/x-www-form-urlencoded'],
  secretField: { field: 'secret', label: 'Shared secret (the ?secret= of the URL)' },
  routing: { kind: 'per-organisation' },
  setupNote: 'append ?secret=<your secret> to this URL where cart E asks for it: cart E sends the secret in the query string',

  verify(request, secrets) {
    const secret = configured(secrets.secret);
    const sent = request.query?.secret;
    if (secret === undefined || typeof sent !== 'string' || sent === '') return false;
    return safeEqual(sent, secret);
  },

  parse(request) {
    const form = formBody(request);
    const resource = field(form, 'resource_name');
    if (resource !== null && resource !== 'sale') return { kind: 'ignored', reason: `resource ${resource} is not a sale` };
    if (field(form, 'refunded') === 'true') return { kind: 'ignored', reason: 'refund ping, not a sale' };

    const externalOrderId = requireField(form, 'sale_id');
    const currency = currencyOf(form.get('currency'));
    return {
      kind: 'orders',
      orders: [
        {
          externalOrderId,
          customer: { email: field(form, 'email'), name: field(form, 'full_name') },
          currency,
          lines: [
            {
              sku: field(form, 'permalink') ?? field(form, 'short_product_id'),
              quantity: quantityOf(field(form, 'quantity'), 'quantity'),
              amount: minorAmount(form.get('price'), currency),
            },
          ],
          paid: true,
          test: field(form, 'test') === 'true',
        },
      ],
    };
  },
};
