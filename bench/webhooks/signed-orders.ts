/**
 * Distinct, validly signed order deliveries for the webhook benchmarks: the shared sample of each
 * platform with a fresh order id per delivery, signed as the platform signs it (test helpers).
 */
import type { Platform } from '../../src/domain/platforms';
import { signFor } from '../../test/helpers/webhook-signing';
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

/** `count` deliveries of distinct orders numbered from `first`. payments-c signatures hold 300 s. */
export function signedOrders(platform: Platform, orgId: string, first: number, count: number): SignedOrder[] {
  const orders: SignedOrder[] = [];
  for (let n = first; n < first + count; n += 1) {
    const body = orderBody(platform, orgId, orderId(platform, n));
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
