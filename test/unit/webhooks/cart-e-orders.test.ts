import { cartE } from '../../../src/webhooks/cart-e';
import { cartEOrders } from '../../../src/webhooks/cart-e-orders';
import type { OrderListPage } from '../../../src/webhooks/order-list';
import { startCartESimulator, type SimulatedSale } from '../../helpers/simulators/cart-e';
import { onlyOrder, request } from './support';

const HOUR = 3_600_000;

function salesOf(count: number, newest: Date): SimulatedSale[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `Sale${String(i).padStart(4, '0')}pQ2rT5vW8yZ1bC4==`, email: `buyer-${i}@example.com`, createdAt: new Date(newest.getTime() - (count - i) * 60_000),
  }));
}

const pageOf = (origin: string, accessToken: string, since: string, cursor: string | null) => cartEOrders.fetchPage({
  origin, credentials: { accessToken }, since, cursor, allowPrivate: true,
});

test('a sale read from the list is the same normalised order its ping gives; its change time is its creation', async () => {
  const sale = { id: 'Xk9pQ2rT5vW8yZ1bC4dF6g==', email: 'list@example.com', createdAt: new Date(Date.now() - 60_000) };
  const sim = await startCartESimulator([sale]);
  try {
    const page = await pageOf(sim.origin, sim.accessToken, new Date(Date.now() - HOUR).toISOString(), null);
    expect(page).toEqual({
      kind: 'page', nextCursor: null, slowDownMs: 0,
      orders: [{ order: onlyOrder(cartE.parse(request(sim.pingBody(sale)))), changedAt: sale.createdAt.toISOString() }],
    });
  } finally {
    await sim.close();
  }
});

test('pages of 10 by next_page_key under the same after filter; fully refunded sales are not paid', async () => {
  const newest = new Date();
  const sales = salesOf(25, newest);
  sales[3].refunded = true;
  const sim = await startCartESimulator(sales);
  try {
    const since = new Date(newest.getTime() - 2 * HOUR).toISOString();
    const seen: string[] = [];
    const paid: boolean[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: OrderListPage = await pageOf(sim.origin, sim.accessToken, since, cursor);
      if (page.kind !== 'page') throw new Error(`expected a page, got ${page.kind}`);
      pages += 1;
      for (const listed of page.orders) {
        if ('unreadable' in listed.order) throw new Error(listed.order.unreadable);
        seen.push(listed.order.externalOrderId);
        paid.push(listed.order.paid);
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(sales.map((s) => s.id).reverse());
    expect(paid.filter((p) => !p)).toHaveLength(1);
    expect(paid[seen.indexOf(sales[3].id)]).toBe(false);
  } finally {
    await sim.close();
  }
});

test('429 gives its Retry-After; 401 is a refusal', async () => {
  const sim = await startCartESimulator(salesOf(3, new Date()));
  try {
    const since = new Date(Date.now() - HOUR).toISOString();
    sim.throttleOnce(0, 2);
    expect(await pageOf(sim.origin, sim.accessToken, since, null)).toEqual({ kind: 'throttled', retryAfterMs: 2_000 });
    expect(await pageOf(sim.origin, 'wrong', since, null)).toEqual({ kind: 'refused', reason: 'the platform refused the credentials (401 Unauthorized)' });
    expect(cartEOrders.defaultOrigin({ accessToken: 'x' })).toBe('https://api.gumroad.com');
    expect(cartEOrders.credentials.safeParse({}).success).toBe(false);
  } finally {
    await sim.close();
  }
});
