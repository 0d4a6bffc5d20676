import { planLine, type MatchedProduct, type OrderFacts } from '../../../src/domain/order-lines';

const live: MatchedProduct = { productId: 'p1', status: 'published', hasLiveVersion: true };
const paid: OrderFacts = { paid: true, subscriptionExpired: false, hasCustomerEmail: true };

describe('planLine (decisions §4: held, unmatched, to fulfil)', () => {
  test('a live product of a paid order with an email is fulfilled', () => {
    expect(planLine('ebook-pro', live, paid)).toEqual({ kind: 'fulfil', productId: 'p1' });
  });

  test.each([
    ['no SKU', null, undefined, paid, 'unmatched', 'no SKU'],
    ['unknown SKU', 'x', undefined, paid, 'unmatched', 'unknown SKU'],
    ['draft', 'x', { ...live, status: 'draft' }, paid, 'held', 'product is draft'],
    ['archived', 'x', { ...live, status: 'archived' }, paid, 'held', 'product is archived'],
    ['published without a live version', 'x', { ...live, hasLiveVersion: false }, paid, 'held', 'product has no live version'],
    ['not paid', 'x', live, { ...paid, paid: false }, 'held', 'not paid'],
    ['subscription expired', 'x', live, { ...paid, subscriptionExpired: true }, 'held', 'subscription expired'],
    ['no customer email', 'x', live, { ...paid, hasCustomerEmail: false }, 'error', 'order has no customer email'],
  ] as const)('%s', (_name, sku, product, order, outcome, reason) => {
    expect(planLine(sku, product as MatchedProduct | undefined, order)).toMatchObject({ kind: 'final', outcome, reason });
  });

  test('order-wide holds come first: every line of an unpaid or lapsed order is held, known SKU or not', () => {
    expect(planLine('unknown', undefined, { ...paid, paid: false })).toMatchObject({ outcome: 'held', reason: 'not paid' });
    expect(planLine(null, undefined, { ...paid, paid: false, subscriptionExpired: true })).toMatchObject({ outcome: 'held', reason: 'subscription expired' });
  });

  test('a held line keeps the product it maps to; an unmatched one has none', () => {
    expect(planLine('x', { ...live, status: 'draft' }, paid)).toMatchObject({ productId: 'p1' });
    expect(planLine('x', undefined, paid)).toMatchObject({ productId: null });
  });

  test('a line of a product that cannot be delivered is held before a missing email makes it an error', () => {
    expect(planLine('x', { ...live, status: 'draft' }, { ...paid, hasCustomerEmail: false })).toMatchObject({ outcome: 'held' });
  });
});
