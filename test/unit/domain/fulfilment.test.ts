import { afterKey, firstStepOf, itemReportsOf, sentResult, WITHDRAWN, type RecordedPurchase } from '../../../src/domain/fulfilment';

const created: RecordedPurchase = { purchaseId: 'p1', customerId: 'c1', created: true, receiptStatus: 'pending' };

describe('firstStepOf: what a run does with the purchase it recorded', () => {
  test.each<[string, RecordedPurchase, boolean, ReturnType<typeof firstStepOf>]>([
    ['a new purchase sends its receipt', created, true, 'send'],
    ['a new purchase of a sale that asks for no receipt is fulfilled', created, false, { outcome: 'fulfilled', reason: null }],
    ['a purchase revoked before its order came is withdrawn', { ...created, revoked: true }, true, WITHDRAWN],
    ['a revoked purchase whose item was reported is a duplicate', { ...created, revoked: true, alreadyReported: true }, true, { outcome: 'duplicate', reason: null }],
    ['a purchase another run recorded is a duplicate', { ...created, created: false, receiptStatus: 'sent' }, true, { outcome: 'duplicate', reason: null }],
    ['a purchase whose receipt failed sends it again', { ...created, created: false, receiptStatus: 'failed' }, true, 'send'],
    ['a pool product settles its key first', { ...created, licensePool: true }, true, 'settle-key'],
  ])('%s', (_, recorded, sendReceipt, step) => {
    expect(firstStepOf(recorded, sendReceipt)).toEqual(step);
  });

  test('after its key, a pool product sends its receipt, or is fulfilled without one', () => {
    expect([afterKey(true), afterKey(false)]).toEqual(['send', { outcome: 'fulfilled', reason: null }]);
  });

  test('a receipt withdrawn on its way is revoked; one sent (or sent by a run of before revocations) is fulfilled', () => {
    expect([sentResult({ withdrawn: true }), sentResult({ withdrawn: false }), sentResult(undefined)])
      .toEqual([WITHDRAWN, { outcome: 'fulfilled', reason: null }, { outcome: 'fulfilled', reason: null }]);
  });
});

describe('itemReportsOf: the outcomes of a round\'s items', () => {
  const result = { outcome: 'fulfilled', reason: null } as const;

  test('the starter gets the result, the items that joined it are duplicates of its purchase', () => {
    expect(itemReportsOf(['i1', 'i2'], 'i1', result, created)).toEqual([
      { itemId: 'i1', outcome: 'fulfilled', reason: null, purchaseId: 'p1' },
      { itemId: 'i2', outcome: 'duplicate', reason: null, purchaseId: 'p1' },
    ]);
  });

  test('with no purchase recorded, every item is an error with the reason', () => {
    const failed = { outcome: 'error', reason: 'product not found' } as const;
    expect(itemReportsOf(['i1', 'i2'], 'i1', failed, undefined)).toEqual([
      { itemId: 'i1', outcome: 'error', reason: 'product not found', purchaseId: null },
      { itemId: 'i2', outcome: 'error', reason: 'product not found', purchaseId: null },
    ]);
  });
});
