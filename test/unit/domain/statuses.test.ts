import { alertDue, deliveryStatusOf, type ItemOutcome } from '../../../src/domain/statuses';

describe('delivery entry status (decisions §5)', () => {
  test.each<[Array<ItemOutcome | null>, string]>([
    [[null], 'Pending'],
    [['fulfilled', null], 'Pending'],
    [['fulfilled'], 'Success'],
    [['duplicate'], 'Success'],
    [['fulfilled', 'held'], 'Success'],
    [['fulfilled', 'unmatched'], 'Success'],
    [['held'], 'held'],
    [['held', 'unmatched'], 'held'],
    [['unmatched'], 'Error'],
    [['unmatched', 'unmatched'], 'Error'],
    [['error'], 'Error'],
    [['fulfilled', 'error'], 'Error'],
    [['held', 'error'], 'Error'],
    [[], 'Error'],
    // Refund and dispute entries (decisions §9), and an order refunded before it arrived: no alert, final.
    [['revoked', 'already revoked'], 'Success'],
    [['not found'], 'Success'],
    [['kept'], 'Success'],
    [['revoked', null], 'Pending'],
    [['revoked', 'revoked'], 'Success'],
  ])('%j → %s', (outcomes, status) => {
    expect(deliveryStatusOf(outcomes)).toBe(status);
  });

  test('an alert is due only for Error entries with nothing delivered', () => {
    expect(alertDue(['unmatched'])).toBe(true);
    expect(alertDue(['error', 'held'])).toBe(true);
    expect(alertDue(['error', 'fulfilled'])).toBe(false);
    expect(alertDue(['error', 'duplicate'])).toBe(false);
    expect(alertDue(['held'])).toBe(false);
    expect(alertDue(['error', null])).toBe(false);
    expect(alertDue(['not found'])).toBe(false);
    expect(alertDue(['revoked'])).toBe(false);
  });
});
