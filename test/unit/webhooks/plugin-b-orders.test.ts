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

test('pages of 50 by modification time, from one second before `since` (the API\'s "after" is strict), in UTC; each next one from the last order\'s second', async () => {
  const now = Date.now();
  const orders = Array.from({ length: 120 }, (_, i): SimulatedOrder => ({
    id: String(48_020_000 + i), email: `b${i}@example.com`, updatedAt: new Date(now - (120 - i) * MINUTE),
  }));
  sim = await startPluginBSimulator(orders);
  const { ids: seen, cursors } = await walk(sim, orders[0].updatedAt);
  // Page 1 again from one second before the last order read, which comes again and is dropped.
  const wp = (order: SimulatedOrder) => new Date(Math.floor(order.updatedAt.getTime() / 1000) * 1000 - 1000).toISOString().slice(0, 19);
  expect(cursors.map((c) => (c === null ? null : JSON.parse(c)))).toEqual([
    null,
    { after: wp(orders[49]), page: 1, seen: [orders[49].id] },
    { after: wp(orders[98]), page: 1, seen: [orders[98].id] },
  ]);
  // Oldest first, each once; the first order, changed exactly at `since` (to the second), is included.
  expect(seen).toEqual(orders.map((o) => o.id));
  // A run begun before paging by time carries a page number: it goes on by number.
  const numbered = await read(sim, orders[0].updatedAt, '2');
  expect(numbered.kind === 'page' && numbered.orders.map((o) => !('unreadable' in o.order) && o.order.externalOrderId)).toEqual(orders.slice(50, 100).map((o) => o.id));

  const later = await read(sim, orders[100].updatedAt, null);
  expect(later.kind === 'page' && later.orders.map((o) => o.changedAt)).toEqual(
    orders.slice(100).map((o) => new Date(Math.floor(o.updatedAt.getTime() / 1000) * 1000).toISOString()),
  );
});

/** Reads every page as a run does, from `since`: the ids read, in order, and the cursors asked. */
async function walk(s: PluginBSimulator, since: Date): Promise<{ ids: string[]; cursors: Array<string | null> }> {
  const ids: string[] = [];
  const cursors: Array<string | null> = [];
  let cursor: string | null = null;
  do {
    cursors.push(cursor);
    const page: OrderListPage = await read(s, since, cursor);
    if (page.kind !== 'page') throw new Error(page.kind);
    ids.push(...page.orders.map((o) => ('unreadable' in o.order ? 'unreadable' : o.order.externalOrderId)));
    cursor = page.nextCursor;
    if (cursors.length > 100) throw new Error('the cursor does not move');
  } while (cursor !== null);
  return { ids, cursors };
}

test('an order modified after the first page is read moves to the end of the list: no order is skipped, only it is read twice', async () => {
  const now = Date.now();
  const orders = Array.from({ length: 120 }, (_, i): SimulatedOrder => ({
    id: String(48_040_000 + i), email: `m${i}@example.com`, updatedAt: new Date(now - (120 - i) * MINUTE),
  }));
  const s = await startPluginBSimulator(orders);
  sim = s;
  s.afterPage(0, () => s.touch(orders[10].id));
  const { ids } = await walk(s, orders[0].updatedAt);
  // Every order, oldest first, then the modified one at its new place.
  expect(ids).toEqual([...orders.map((o) => o.id), orders[10].id]);
});

test('a whole page modified in one second: the next numbered page under the same `modified_after`, so the run ends', async () => {
  const now = Math.floor(Date.now() / 1000) * 1000;
  const orders = Array.from({ length: 120 }, (_, i): SimulatedOrder => ({
    // Orders 20 to 89 share one second (a bulk edit): more than a page.
    id: String(48_050_000 + i), email: `s${i}@example.com`, updatedAt: new Date(now - (i >= 20 && i < 90 ? 95 : 120 - i) * MINUTE + (i % 7) * 100),
  }));
  sim = await startPluginBSimulator(orders);
  const { ids, cursors } = await walk(sim, new Date(now - 3 * 3_600_000));
  expect([...ids].sort()).toEqual(orders.map((o) => o.id).sort());
  expect(ids).toHaveLength(120);
  // Page 1 from the shared second less one, all of it in that second: then page 2 under the same time.
  const after = new Date(now - 95 * MINUTE - 1000).toISOString().slice(0, 19);
  expect(cursors.slice(1).map((c) => (c === null ? null : (JSON.parse(c) as { after: string; page: number }))))
    .toEqual([expect.objectContaining({ after, page: 1 }), expect.objectContaining({ after, page: 2 })]);
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
