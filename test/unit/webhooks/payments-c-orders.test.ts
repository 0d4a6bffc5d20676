import type { OrderListPage } from '../../../src/webhooks/order-list';
import { paymentsC } from '../../../src/webhooks/payments-c';
import { paymentsCOrders } from '../../../src/webhooks/payments-c-orders';
import { startPaymentsCSimulator, type SimulatedSession } from '../../helpers/simulators/payments-c';
import { onlyOrder, request } from './support';

const HOUR = 3_600_000;

function sessionsOf(count: number, newest: Date): SimulatedSession[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `cs_test_sim${String(i).padStart(6, '0')}`, email: `buyer-${i}@example.com`, created: new Date(newest.getTime() - (count - i) * 60_000),
  }));
}

const pageOf = (origin: string, secretKey: string, since: string, cursor: string | null) => paymentsCOrders.fetchPage({
  origin, credentials: { secretKey }, since, cursor, allowPrivate: true,
});

test('a session read from the list is the same normalised order its event gives, less the event\'s routing', async () => {
  const session = { id: 'cs_live_a1ExampleCheckoutSession0001payC', email: 'list@example.com', created: new Date(Date.now() - 60_000) };
  const sim = await startPaymentsCSimulator([session], { metadata: { org_id: '7d4c0f5e-0000-4000-8000-000000000001' } });
  try {
    const page = await pageOf(sim.origin, sim.secretKey, new Date(Date.now() - HOUR).toISOString(), null);
    const { orgId, ...fromEvent } = onlyOrder(paymentsC.parse(request(sim.eventBody(session))));
    expect(orgId).toBe('7d4c0f5e-0000-4000-8000-000000000001');
    expect(page).toEqual({
      kind: 'page', nextCursor: null, slowDownMs: 0,
      orders: [{ order: fromEvent, changedAt: new Date(Math.floor(session.created.getTime() / 1000) * 1000).toISOString() }],
    });
  } finally {
    await sim.close();
  }
});

test('pages by starting_after while has_more; expanded line items name the SKU; unpaid sessions are not paid', async () => {
  const newest = new Date();
  const sessions = sessionsOf(120, newest);
  sessions[7].sku = null;
  sessions[9].paymentStatus = 'unpaid';
  const sim = await startPaymentsCSimulator(sessions);
  try {
    const since = new Date(newest.getTime() - 3 * HOUR).toISOString();
    const seen = new Map<string, { paid: boolean; sku: string | null }>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: OrderListPage = await pageOf(sim.origin, sim.secretKey, since, cursor);
      if (page.kind !== 'page') throw new Error(`expected a page, got ${page.kind}`);
      pages += 1;
      for (const listed of page.orders) {
        if ('unreadable' in listed.order) throw new Error(listed.order.unreadable);
        seen.set(listed.order.externalOrderId, { paid: listed.order.paid, sku: listed.order.lines[0].sku });
      }
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect([...seen.keys()]).toEqual(sessions.map((s) => s.id).reverse());
    expect(seen.get(sessions[7].id)).toEqual({ paid: true, sku: 'ebook-pro' });
    expect(seen.get(sessions[9].id)?.paid).toBe(false);
  } finally {
    await sim.close();
  }
});

test('429 gives its Retry-After; a wrong key is a refusal; keys are sk_ or rk_', async () => {
  const sim = await startPaymentsCSimulator(sessionsOf(3, new Date()));
  try {
    const since = new Date(Date.now() - HOUR).toISOString();
    sim.throttleOnce(0, 2);
    expect(await pageOf(sim.origin, sim.secretKey, since, null)).toEqual({ kind: 'throttled', retryAfterMs: 2_000 });
    expect(await pageOf(sim.origin, 'rk_test_wrong', since, null)).toEqual({ kind: 'refused', reason: 'the platform refused the credentials (401 Unauthorized)' });
    expect(paymentsCOrders.defaultOrigin({ secretKey: 'x' })).toBe('https://api.stripe.com');
    expect(paymentsCOrders.credentials.safeParse({ secretKey: 'whsec_abc' }).success).toBe(false);
    expect(paymentsCOrders.credentials.safeParse({ secretKey: 'rk_live_abc123' }).success).toBe(true);
  } finally {
    await sim.close();
  }
});
