/** The front door's planning, apart from its reads and writes: plain values in, plain values out. */
import { lineDispatch } from '../../../src/domain/held-line';
import type { MatchedProduct } from '../../../src/domain/order-lines';
import type { NormalizedOrder, NormalizedRevocation } from '../../../src/webhooks/adapter';
import {
  planDeliveries,
  planIntake,
  planRevocations,
  skusOf,
  skusToLookUp,
  unreadable,
  unreadableRevocation,
} from '../../../src/webhooks/intake-plan';

const org = { orgId: '11111111-1111-4111-8111-111111111111', subscriptionExpiresOn: null };
const now = new Date('2026-11-27T00:00:00Z');
const matches = new Map<string, MatchedProduct>([
  ['ebook-pro', { productId: 'p-ebook', status: 'published', hasLiveVersion: true }],
  ['course', { productId: 'p-course', status: 'draft', hasLiveVersion: false }],
]);

function order(overrides: Partial<NormalizedOrder> = {}): NormalizedOrder {
  return {
    externalOrderId: 'A-1001',
    customer: { email: ' Buyer@Example.com ', name: 'Buyer' },
    currency: 'EUR',
    lines: [
      { sku: ' EBOOK-PRO ', quantity: 1, amount: '29.00' },
      { sku: 'mystery', quantity: 1, amount: null },
      { sku: 'course', quantity: 1, amount: '10.00' },
    ],
    paid: true,
    test: false,
    ...overrides,
  };
}

describe('planDeliveries (decisions §4: each line held, unmatched or to fulfil)', () => {
  test('an order is one entry: a matched SKU starts a fulfilment run, an unknown one is unmatched and keeps its held line, a draft is held', () => {
    const plan = planDeliveries(org, 'storefront-a', [order()], matches, now);
    expect(plan.entries).toHaveLength(1);
    const [entry] = plan.entries;
    expect(entry).toMatchObject({ kind: 'order', platform: 'storefront-a', externalOrderId: 'A-1001', eventId: null, test: false });
    const [fulfil, unmatched, held] = entry.items;
    expect(fulfil).toMatchObject({ sku: ' EBOOK-PRO ', productId: 'p-ebook', outcome: null, reason: null });
    expect(fulfil.workflowId).toEqual(expect.any(String));
    expect(unmatched).toMatchObject({
      sku: 'mystery', productId: null, outcome: 'unmatched', reason: 'unknown SKU', workflowId: null,
      // An unknown amount is zero in the order's currency, never guessed.
      heldLine: { customer: { email: 'buyer@example.com', name: 'Buyer' }, amount: '0.00', currency: 'EUR', test: false },
    });
    expect(held).toMatchObject({ sku: 'course', productId: 'p-course', outcome: 'held', reason: 'product is draft', workflowId: null, heldLine: undefined });

    expect(entry.workflowIds).toEqual([fulfil.workflowId]);
    expect(plan.dispatches).toEqual([{
      kind: 'fulfil-line', workflowId: fulfil.workflowId, orgId: org.orgId,
      payload: expect.objectContaining({
        orgId: org.orgId, source: 'storefront-a', externalOrderId: 'A-1001', productId: 'p-ebook',
        customer: { email: 'buyer@example.com', name: 'Buyer' }, amount: '29.00', currency: 'EUR', deliveryItemId: fulfil.id,
      }),
    }]);
  });

  test('a held line, once its SKU is mapped, starts the run the webhook would have started had the SKU been known (payments-c, with its payment)', () => {
    const paid = order({ paymentReference: 'pi_123', lines: [{ sku: 'mystery', quantity: 1, amount: '5.00' }] });
    const [held] = planDeliveries(org, 'payments-c', [paid], matches, now).entries[0].items;
    const mapped = new Map([...matches, ['mystery', { productId: 'p-mystery', status: 'published', hasLiveVersion: true } as const]]);
    const known = planDeliveries(org, 'payments-c', [paid], mapped, now);
    const [line] = known.entries[0].items;

    const replayed = lineDispatch({ orgId: org.orgId, platform: 'payments-c', externalOrderId: 'A-1001', itemId: line.id }, held.heldLine!, 'p-mystery');
    expect(replayed).toEqual(known.dispatches[0]);
    expect(replayed.payload).toMatchObject({ paymentReference: 'pi_123', amount: '5.00', paymentMethod: 'payments-c', sendReceipt: true });
  });

  test('an order whose lines all end in Error with nothing delivered raises one alert', () => {
    const plan = planDeliveries(org, 'storefront-a', [order({ customer: { email: null, name: null }, lines: [{ sku: 'ebook-pro', quantity: 1, amount: '29.00' }] })], matches, now);
    const [entry] = plan.entries;
    expect(entry.items).toMatchObject([{ outcome: 'error', reason: 'order has no customer email', workflowId: null }]);
    expect(plan.dispatches).toMatchObject([{ kind: 'order-alert', payload: { orgId: org.orgId, deliveryId: entry.id } }]);
    expect(entry.workflowIds).toEqual([plan.dispatches[0].workflowId]);
  });

  test('a lapsed subscription holds every line', () => {
    const plan = planDeliveries({ ...org, subscriptionExpiresOn: '2026-11-01' }, 'storefront-a', [order()], matches, now);
    expect(plan.entries[0].items.map((i) => i.reason)).toEqual(['subscription expired', 'subscription expired', 'subscription expired']);
    expect(plan.dispatches).toEqual([]);
  });
});

describe('planRevocations (decisions §9)', () => {
  const byPayment: NormalizedRevocation = { event: 'refund', order: { paymentReference: 'pi_123' }, scope: { kind: 'order' }, eventId: 'evt_1' };

  test('a whole-order refund by payment reference is one item that a revoke run expands', () => {
    const plan = planRevocations(org.orgId, 'payments-c', [byPayment], matches);
    const [entry] = plan.entries;
    expect(entry).toMatchObject({ kind: 'refund', platform: 'payments-c', externalOrderId: 'pi_123', eventId: 'evt_1', test: false });
    expect(entry.items).toMatchObject([{ sku: null, productId: null, outcome: null, reason: null }]);
    expect(plan.dispatches).toEqual([{
      kind: 'revoke', workflowId: entry.items[0].workflowId, orgId: org.orgId,
      payload: { orgId: org.orgId, platform: 'payments-c', deliveryId: entry.id, refKind: 'payment', orderRef: 'pi_123', reason: 'refund' },
    }]);
    expect(entry.workflowIds).toEqual([entry.items[0].workflowId]);
  });

  test('a dispute of named lines is a chargeback; a partial refund by amount is kept at once', () => {
    const dispute: NormalizedRevocation = { event: 'dispute', order: { externalOrderId: 'A-1001' }, scope: { kind: 'lines', skus: ['Ebook-Pro', 'gone'] } };
    const partial: NormalizedRevocation = { event: 'refund', order: { externalOrderId: 'A-1001' }, scope: { kind: 'none', reason: 'partial refund by amount' } };
    const plan = planRevocations(org.orgId, 'reseller-d', [dispute, partial], matches);
    expect(plan.entries[0].items.map((i) => [i.sku, i.productId])).toEqual([['Ebook-Pro', 'p-ebook'], ['gone', null]]);
    expect(plan.entries[1]).toMatchObject({ kind: 'refund', workflowIds: [], items: [{ outcome: 'kept', reason: 'partial refund by amount', workflowId: null }] });
    expect(plan.dispatches).toMatchObject([{ kind: 'revoke', payload: { refKind: 'order', orderRef: 'A-1001', reason: 'chargeback' } }]);
  });

  test('planIntake puts the orders\' entries before the refunds\'', () => {
    const plan = planIntake(org, 'payments-c', [order()], [byPayment], matches, now);
    expect(plan.entries.map((e) => e.kind)).toEqual(['order', 'refund']);
    expect(plan.dispatches.map((d) => d.kind)).toEqual(['fulfil-line', 'revoke']);
  });
});

describe('what a delivery names, and whether it can be recorded', () => {
  test('SKUs are normalised and named once, from orders and from refunds of lines', () => {
    const parsed = { kind: 'mixed' as const, orders: [order()], revocations: [{ event: 'refund' as const, order: { externalOrderId: 'A-1' }, scope: { kind: 'lines' as const, skus: ['MYSTERY', null, 'other'] } }] };
    expect(skusOf(parsed)).toEqual(['ebook-pro', 'mystery', 'course', 'other']);
    expect(skusToLookUp({ ok: true, parsed })).toEqual(['ebook-pro', 'mystery', 'course', 'other']);
    expect(skusToLookUp({ ok: false, error: new Error('unreadable') })).toEqual([]);
    const many = { kind: 'orders' as const, orders: [order({ lines: Array.from({ length: 51 }, (_, i) => ({ sku: `s${i}`, quantity: 1, amount: null })) })] };
    expect(skusToLookUp({ ok: true, parsed: many })).toEqual([]);
  });

  test('absurd orders and refunds are refused with a reason', () => {
    expect(unreadable(order())).toBeNull();
    expect(unreadable(order({ externalOrderId: 'x'.repeat(201) }))).toBe('order id is too long');
    expect(unreadable(order({ lines: [{ sku: 'a', quantity: 1, amount: '1234567890123456.00' }] }))).toBe('a line amount is out of range');
    expect(unreadableRevocation({ event: 'refund', order: { paymentReference: 'p'.repeat(201) }, scope: { kind: 'order' } })).toBe('an id of the event is too long');
  });
});
