/**
 * What every platform's order-list client makes of an answer that is not a page (decisions §15):
 * 429 waits its Retry-After, 401 and 403 are a refusal of the credentials (the integration pauses),
 * anything else is an error the page's activity retries.
 */
import { notAPage, OrderListError, retryAfterMs } from '../../../src/webhooks/order-list';

const now = new Date('2026-11-29T10:00:00Z');
const answer = (status: number, headers: Record<string, string> = {}) => ({ status, headers, body: {} });

test('401 and 403 are refusals that name the status; the reason is what the dashboard shows', () => {
  expect(notAPage(answer(401), now)).toEqual({ kind: 'refused', reason: 'the platform refused the credentials (401 Unauthorized)' });
  // A token without the read scope (Shopify documents 403 for a scope it was not granted).
  expect(notAPage(answer(403), now)).toEqual({ kind: 'refused', reason: 'the platform refused the credentials (403 Forbidden)' });
});

test('429 waits its Retry-After, in seconds or as a date, and 2 s without one', () => {
  expect(notAPage(answer(429, { 'retry-after': '7' }), now)).toEqual({ kind: 'throttled', retryAfterMs: 7_000 });
  expect(notAPage(answer(429, { 'retry-after': 'Sun, 29 Nov 2026 10:00:30 GMT' }), now)).toEqual({ kind: 'throttled', retryAfterMs: 30_000 });
  expect(notAPage(answer(429), now)).toEqual({ kind: 'throttled', retryAfterMs: 2_000 });
  expect(retryAfterMs('soon', now, 2_000)).toBe(2_000);
});

test('any other status is an error for the activity to retry', () => {
  for (const status of [400, 404, 500, 502, 503]) {
    expect(() => notAPage(answer(status), now)).toThrow(OrderListError);
    expect(() => notAPage(answer(status), now)).toThrow(`the order list answered ${status}`);
  }
});
