import type { OrderListPage, OrderListRequest } from '../../../src/webhooks/order-list';
import { pluginB } from '../../../src/webhooks/plugin-b';
import { gmtTime, pluginBOrders, type PluginBCredentials } from '../../../src/webhooks/plugin-b-orders';
import { startPluginBSimulator, type PluginBSimulator, type SimulatedOrder } from '../../helpers/simulators/plugin-b';
import { request } from './support';

const MINUTE = 60_000;
let sim: PluginBSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function read(s: PluginBSimulator, since: Date, cursor: string | null, credentials?: PluginBCredentials): Promise<OrderListPage> {
  const ask: OrderListRequest<PluginBCredentials> = {
    origin: s.origin, credentials: credentials ?? { consumerKey: s.consumerKey, consumerSecret: s.consumerSecret },
    since: since.toISOString(), cursor, allowPrivate: true,
  };
  return pluginBOrders.fetchPage(ask);
}

test('an order read from the list is the same normalised order its webhook gives', async () => {
  const order: SimulatedOrder = { id: '48010001', email: 'list@example.com', updatedAt: new Date(Date.now() - MINUTE) };
  sim = await startPluginBSimulator([order]);
  const page = await read(sim, new Date(Date.now() - 3_600_000), null);
  const webhook = pluginB.parse(request(sim.orderJson(order)));
  expect(webhook.kind).toBe('orders');
  expect(page).toEqual({
    kind: 'page', nextCursor: null, slowDownMs: 0,
    orders: [{
      order: webhook.kind === 'orders' ? webhook.orders[0] : null,
      changedAt: new Date(Math.floor(order.updatedAt.getTime() / 1000) * 1000).toISOString(),
    }],
  });
  expect(page.kind === 'page' && page.orders[0].order).toMatchObject({ externalOrderId: '48010001', paid: true, customer: { email: 'list@example.com' } });
});

test('numbered pages of 50 by modification time, from one second before `since` (the API\'s "after" is strict), in UTC', async () => {
  const now = Date.now();
  const orders = Array.from({ length: 120 }, (_, i): SimulatedOrder => ({
    id: String(48_020_000 + i), email: `b${i}@example.com`, updatedAt: new Date(now - (120 - i) * MINUTE),
  }));
  sim = await startPluginBSimulator(orders);
  const seen: string[] = [];
  let cursor: string | null = null;
  const cursors: Array<string | null> = [];
  do {
    cursors.push(cursor);
    const page: OrderListPage = await read(sim, orders[0].updatedAt, cursor);
    if (page.kind !== 'page') throw new Error(page.kind);
    seen.push(...page.orders.map((o) => ('unreadable' in o.order ? 'unreadable' : o.order.externalOrderId)));
    cursor = page.nextCursor;
  } while (cursor !== null);
  expect(cursors).toEqual([null, '2', '3']);
  // Oldest first; the first order, changed exactly at `since` (to the second), is included.
  expect(seen).toEqual(orders.map((o) => o.id));

  const later = await read(sim, orders[100].updatedAt, null);
  expect(later.kind === 'page' && later.orders.map((o) => o.changedAt)).toEqual(
    orders.slice(100).map((o) => new Date(Math.floor(o.updatedAt.getTime() / 1000) * 1000).toISOString()),
  );
});

test('refunded and unpaid orders are read but not paid; refused credentials, 429 and Retry-After', async () => {
  const at = new Date(Date.now() - MINUTE);
  sim = await startPluginBSimulator([
    { id: '48030001', email: 'a@example.com', updatedAt: at, status: 'refunded' },
    { id: '48030002', email: 'b@example.com', updatedAt: at, status: 'pending' },
    { id: '48030003', email: 'c@example.com', updatedAt: at, status: 'completed' },
  ]);
  const page = await read(sim, new Date(at.getTime() - MINUTE), null);
  expect(page.kind === 'page' && page.orders.map((o) => !('unreadable' in o.order) && o.order.paid)).toEqual([false, false, true]);

  expect(await read(sim, at, null, { consumerKey: sim.consumerKey, consumerSecret: 'cs_wrong' }))
    .toEqual({ kind: 'refused', reason: 'the platform refused the credentials (401 Unauthorized)' });
  sim.throttleOnce(0, 2);
  expect(await read(sim, at, null)).toEqual({ kind: 'throttled', retryAfterMs: 2_000 });
  expect((await read(sim, at, null)).kind).toBe('page');
  sim.revokeToken();
  expect((await read(sim, at, null)).kind).toBe('refused');
});

test('date_modified_gmt is UTC without an offset', () => {
  expect(gmtTime('2026-01-01T10:10:05')).toBe('2026-01-01T10:10:05.000Z');
  expect(gmtTime('2026-01-01T10:10:05Z')).toBe('2026-01-01T10:10:05.000Z');
  expect(gmtTime(null)).toBeNull();
  expect(gmtTime('soon')).toBeNull();
});

test('credentials: a REST API key\'s consumer key and secret', () => {
  expect(pluginBOrders.credentials.safeParse({ consumerKey: 'ck_abc123', consumerSecret: 'cs_def456' }).success).toBe(true);
  expect(pluginBOrders.credentials.safeParse({ consumerKey: 'abc123', consumerSecret: 'cs_def456' }).success).toBe(false);
  expect(pluginBOrders.credentials.safeParse({ consumerKey: 'ck_abc123' }).success).toBe(false);
  expect(pluginBOrders.defaultOrigin({ consumerKey: 'ck_abc123', consumerSecret: 'cs_def456' })).toBeNull();
});
