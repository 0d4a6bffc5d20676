import type { OrderListPage } from '../../../src/webhooks/order-list';
import { resellerD } from '../../../src/webhooks/reseller-d';
import { changedTime, RESELLER_D_ORIGIN, resellerDOrders, type ResellerDCredentials } from '../../../src/webhooks/reseller-d-orders';
import { startResellerDSimulator, type ResellerDSimulator, type SimulatedOrder } from '../../helpers/simulators/reseller-d';
import { request } from './support';

const MINUTE = 60_000;
let sim: ResellerDSimulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

function read(s: ResellerDSimulator, since: Date, cursor: string | null, credentials?: ResellerDCredentials): Promise<OrderListPage> {
  return resellerDOrders.fetchPage({
    origin: s.origin, credentials: credentials ?? { username: s.username, password: s.password }, since: since.toISOString(), cursor, allowPrivate: true,
  });
}

test('an order read from the list is the same normalised order its order.completed webhook gives', async () => {
  const order: SimulatedOrder = { id: 'rdListOrder0001', email: 'list@example.com', updatedAt: new Date(Date.now() - MINUTE) };
  sim = await startResellerDSimulator([order]);
  const page = await read(sim, new Date(Date.now() - 3_600_000), null);
  const webhook = resellerD.parse(request(sim.webhookJson(order)));
  expect(webhook.kind).toBe('orders');
  expect(page).toEqual({
    kind: 'page', nextCursor: null, slowDownMs: 0,
    orders: [{ order: webhook.kind === 'orders' ? webhook.orders[0] : null, changedAt: order.updatedAt.toISOString() }],
  });
  expect(page.kind === 'page' && page.orders[0].order).toMatchObject({ externalOrderId: 'rdListOrder0001', paid: true, test: false });
});

test('the list names the orders by id; each page is one lookup by those ids (GET /orders/{id1},{id2},…) in the list\'s order', async () => {
  const now = Date.now();
  const orders = Array.from({ length: 3 }, (_, i): SimulatedOrder => ({ id: `rdById${i}`, email: `id${i}@example.com`, updatedAt: new Date(now - (3 - i) * MINUTE) }));
  sim = await startResellerDSimulator(orders);
  const page = await read(sim, new Date(now - 30 * MINUTE), null);
  expect(page.kind === 'page' && page.orders.map((o) => ['unreadable' in o.order ? o.order.unreadable : o.order.externalOrderId, o.changedAt]))
    .toEqual(orders.map((o) => [o.id, o.updatedAt.toISOString()]));
  expect(sim.lookups).toEqual([orders.map((o) => o.id)]);
  expect(sim.requests.map((r) => [r.page, r.status])).toEqual([[0, 200], [-1, 200]]);
});

test('an order the lookup does not return is unreadable, the others are read; a list of order objects needs no lookup', async () => {
  const at = new Date(Date.now() - MINUTE);
  const orders: SimulatedOrder[] = [
    { id: 'rdGone000001', email: 'gone@example.com', updatedAt: at },
    { id: 'rdKept000001', email: 'kept@example.com', updatedAt: at },
  ];
  sim = await startResellerDSimulator(orders);
  sim.forget('rdGone000001');
  const page = await read(sim, at, null);
  expect(page.kind === 'page' && page.orders.map((o) => ('unreadable' in o.order ? o.order.unreadable : o.order.externalOrderId)))
    .toEqual(['order rdGone000001: the lookup by id did not return it', 'rdKept000001']);
  await sim.close();

  sim = await startResellerDSimulator(orders, { fullOrders: true });
  const full = await read(sim, at, null);
  expect(full.kind === 'page' && full.orders.map((o) => !('unreadable' in o.order) && o.order.externalOrderId)).toEqual(['rdGone000001', 'rdKept000001']);
  expect(sim.lookups).toEqual([]);
});

test('numbered pages by nextPage over whole days from the day before `since`; every page asks the same range', async () => {
  const now = Date.now();
  const orders = Array.from({ length: 120 }, (_, i): SimulatedOrder => ({ id: `rdPaged${String(i).padStart(4, '0')}`, email: `b${i}@example.com`, updatedAt: new Date(now - (120 - i) * MINUTE) }));
  sim = await startResellerDSimulator(orders);
  const seen: string[] = [];
  const cursors: Array<string | null> = [];
  let cursor: string | null = null;
  do {
    cursors.push(cursor);
    const page: OrderListPage = await read(sim, new Date(now - 30 * MINUTE), cursor);
    if (page.kind !== 'page') throw new Error(page.kind);
    seen.push(...page.orders.map((o) => ('unreadable' in o.order ? 'unreadable' : o.order.externalOrderId)));
    cursor = page.nextCursor;
  } while (cursor !== null);
  const end = new Date(now + 86_400_000).toISOString().slice(0, 10);
  expect(cursors).toEqual([null, `2@${end}`, `3@${end}`]);
  expect(seen).toEqual(orders.map((o) => o.id));
});

test('incomplete orders are read but not paid, test orders marked; refused credentials, 429 and Retry-After', async () => {
  const at = new Date(Date.now() - MINUTE);
  sim = await startResellerDSimulator([
    { id: 'rdPending0001', email: 'a@example.com', updatedAt: at, completed: false },
    { id: 'rdTest000001', email: 'b@example.com', updatedAt: at, live: false },
  ]);
  const page = await read(sim, at, null);
  expect(page.kind === 'page' && page.orders.map((o) => !('unreadable' in o.order) && [o.order.paid, o.order.test])).toEqual([[false, false], [true, true]]);
  expect(await read(sim, at, null, { username: sim.username, password: 'wrong' }))
    .toEqual({ kind: 'refused', reason: 'the platform refused the credentials (401 Unauthorized)' });
  sim.throttleOnce(0, 2);
  expect(await read(sim, at, null)).toEqual({ kind: 'throttled', retryAfterMs: 2_000 });
  expect((await read(sim, at, null)).kind).toBe('page');
});

test('changed is milliseconds since the epoch; the public API is the default origin', () => {
  expect(changedTime({ changed: 1767263399870 })).toBe('2026-01-01T10:29:59.870Z');
  expect(changedTime({ changed: '1767263399870' })).toBeNull();
  expect(changedTime({})).toBeNull();
  expect(resellerDOrders.defaultOrigin({ username: 'u', password: 'p' })).toBe(RESELLER_D_ORIGIN);
  expect(resellerDOrders.credentials.safeParse({ username: 'u' }).success).toBe(false);
});
