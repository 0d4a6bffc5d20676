import { retryAfterMs } from '../../../src/webhooks/order-list';
import { storefrontA } from '../../../src/webhooks/storefront-a';
import { callLimitWaitMs, storefrontAOrders } from '../../../src/webhooks/storefront-a-orders';
import { startStorefrontASimulator } from '../../helpers/simulators/storefront-a';
import { request } from './support';

test('an order read from the list is the same normalised order its webhook gives', async () => {
  const order = { id: '5901000000777', email: 'list@example.com', updatedAt: new Date(Date.now() - 60_000) };
  const sim = await startStorefrontASimulator([order]);
  try {
    const page = await storefrontAOrders.fetchPage({
      origin: sim.origin, credentials: { shopDomain: 'example-store.myshopify.com', accessToken: sim.accessToken },
      since: new Date(Date.now() - 3_600_000).toISOString(), cursor: null, allowPrivate: true,
    });
    const webhook = storefrontA.parse(request(sim.orderJson(order), {}));
    expect(webhook.kind).toBe('orders');
    expect(page).toEqual({
      kind: 'page', nextCursor: null, slowDownMs: 0,
      orders: [{ order: webhook.kind === 'orders' ? webhook.orders[0] : null, changedAt: order.updatedAt.toISOString() }],
    });
    const refused = await storefrontAOrders.fetchPage({
      origin: sim.origin, credentials: { shopDomain: 'x', accessToken: 'wrong' }, since: new Date().toISOString(), cursor: null, allowPrivate: true,
    });
    expect(refused).toEqual({ kind: 'refused', reason: 'the platform refused the credentials (401 Unauthorized)' });
  } finally {
    await sim.close();
  }
});

test('near the top of the call-limit bucket the next page waits for it to drain (2 a second)', () => {
  expect(callLimitWaitMs('1/40')).toBe(0);
  expect(callLimitWaitMs('32/40')).toBe(0);
  expect(callLimitWaitMs('39/40')).toBe(3_500);
  expect(callLimitWaitMs(undefined)).toBe(0);
  expect(callLimitWaitMs('garbage')).toBe(0);
});

test('Retry-After in seconds or as an HTTP date', () => {
  const now = new Date('2026-11-27T10:00:00Z');
  expect(retryAfterMs('2', now, 9)).toBe(2_000);
  expect(retryAfterMs('2.0', now, 9)).toBe(2_000);
  expect(retryAfterMs('Fri, 27 Nov 2026 10:00:05 GMT', now, 9)).toBe(5_000);
  expect(retryAfterMs(undefined, now, 9)).toBe(9);
});
