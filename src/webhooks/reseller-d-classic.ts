/**
 * reseller-d-classic (FastSpring Classic-style form notification). Security: md5(security_data +
 * private key), lower-case hex, from the headers `X-Security-Data` + `X-Security-Hash`, or else from
 * the form fields `security_data` + `security_hash`. The body itself is not covered by the hash.
 *
 * Items: every `item_<n>_product` field, in order of n, with `item_<n>_quantity` and
 * `item_<n>_subtotal` (line total).
 */
import type { NormalizedLine, PlatformAdapter, WebhookRequest } from './adapter';
import { currencyOf, decimalAmount, joinName, formBody, quantityOf } from './fields';
import { field, requireField } from './form';
import { configured, headerValue, matched, md5Hex, safeEqual } from './signature';

export const RESELLER_D_CLASSIC_HEADERS = { data: 'x-security-data', hash: 'x-security-hash' };

/** The (data, hash) pair: both from the headers, or else both from the form fields. */
function securityPair(request: WebhookRequest): { data: string; hash: string } | undefined {
  const data = headerValue(request.headers, RESELLER_D_CLASSIC_HEADERS.data);
  const hash = headerValue(request.headers, RESELLER_D_CLASSIC_HEADERS.hash);
  if (data !== undefined && hash !== undefined) return { data, hash };
  const form = formBody(request);
  const formData = form.get('security_data');
  const formHash = field(form, 'security_hash');
  if (formData !== null && formData !== '' && formHash !== null) return { data: formData, hash: formHash };
  return undefined;
}

function itemNumbers(form: URLSearchParams): number[] {
  const numbers = new Set<number>();
  for (const key of form.keys()) {
    const match = /^item_([1-9]\d{0,5})_product$/.exec(key);
    if (match) numbers.add(Number(match[1]));
  }
  return [...numbers].sort((a, b) => a - b);
}

export const resellerDClassic: PlatformAdapter<'reseller-d-classic'> = {
  platform: 'reseller-d-classic',
  contentTypes: ['application/x-www-form-urlencoded'],
  secretField: { field: 'privateKey', label: 'Private key' },
  routing: { kind: 'per-organisation' },
  setupNote: null,

  signedNonce: (request) => securityPair(request)?.data,

  verify(request, secrets) {
    const key = configured(secrets.privateKey) ?? configured(secrets.secret);
    const pair = securityPair(request);
    if (pair === undefined) return 'signature header missing';
    if (key === undefined) return 'signature mismatch';
    return matched(safeEqual(pair.hash.toLowerCase(), md5Hex(pair.data + key)));
  },

  parse(request) {
    const form = formBody(request);
    const externalOrderId = requireField(form, 'reference');
    const currency = currencyOf(form.get('currency'));

    const lines = itemNumbers(form).map((n): NormalizedLine => ({
      sku: field(form, `item_${n}_product`),
      quantity: quantityOf(field(form, `item_${n}_quantity`), `item_${n}_quantity`),
      amount: decimalAmount(form.get(`item_${n}_subtotal`), currency),
    }));

    return {
      kind: 'orders',
      orders: [
        {
          externalOrderId,
          customer: { email: field(form, 'email'), name: joinName(form.get('fname'), form.get('lname')) },
          currency,
          lines,
          paid: true,
          test: field(form, 'test') === 'true',
        },
      ],
    };
  },
};
