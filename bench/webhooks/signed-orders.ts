/**
 * Distinct, validly signed order deliveries for the webhook benchmarks: the shared sample of each
 * platform with a fresh order id per delivery, signed as the platform signs it (test helpers).
 */
import type { Platform } from '../../src/domain/platforms';
import { signFor } from '../../test/fixtures/platforms';
import { contentTypeOf, orderBody, SECRETS, webhookPath } from '../../test/helpers/webhooks';

export interface SignedOrder {
  /** Path and query, e.g. `/webhooks/<org>/cart-e?secret=...`. */
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** storefront-a and plugin-b send numeric ids; the others strings. */
function orderId(platform: Platform, n: number): string {
  return platform === 'storefront-a' || platform === 'plugin-b' ? String(1_000_000_000_000 + n) : `bench-${n}`;
}

/**
 * The storefront-a sample with its second line item cut out (bytes edited, then signed): one
 * product per order, as the launch-day figures are counted.
 */
function firstLineOnly(body: Buffer): Buffer {
  const text = body.toString('utf8');
  const items = text.indexOf('"line_items"');
  const cut = /\n {4}\},\n {4}\{[\s\S]*?\n {4}\}\n {2}\]/y;
  cut.lastIndex = text.indexOf('\n    },\n    {', items);
  const match = cut.exec(text);
  if (!match) throw new Error('signedOrders: the sample has no second line item to cut');
  return Buffer.from(`${text.slice(0, match.index)}\n    }\n  ]${text.slice(match.index + match[0].length)}`, 'utf8');
}

/**
 * `count` deliveries of distinct orders numbered from `first`. payments-c signatures hold 300 s.
 * `oneLine` keeps only the first line item (storefront-a).
 */
export function signedOrders(platform: Platform, orgId: string, first: number, count: number, options: { oneLine?: boolean } = {}): SignedOrder[] {
  const orders: SignedOrder[] = [];
  for (let n = first; n < first + count; n += 1) {
    let body = orderBody(platform, orgId, orderId(platform, n));
    if (options.oneLine) {
      if (platform !== 'storefront-a') throw new Error('signedOrders: oneLine is for storefront-a');
      body = firstLineOnly(body);
    }
    const signed = signFor(platform, body, SECRETS[platform]);
    const query = new URLSearchParams(signed.query).toString();
    orders.push({
      path: `${webhookPath(platform, orgId)}${query ? `?${query}` : ''}`,
      headers: { 'content-type': contentTypeOf(platform), ...signed.headers },
      body,
    });
  }
  return orders;
}
