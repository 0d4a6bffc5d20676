import { fromMinorUnits, minorDigits, normaliseAmount, normaliseCurrency } from '../../../src/domain/money';

describe('money as decimal strings', () => {
  test.each([
    ['19.99', 'USD', '19.99'],
    ['29', 'USD', '29.00'],
    ['29.0', 'EUR', '29.00'],
    ['007.50', 'USD', '7.50'],
    ['500', 'JPY', '500'],
    ['500.00', 'JPY', '500'],
    ['1.234', 'KWD', '1.234'],
    ['0', 'USD', '0.00'],
    ['999999999999999.99', 'USD', '999999999999999.99'],
  ])('%s %s → %s', (text, currency, expected) => {
    expect(normaliseAmount(text, currency)).toBe(expected);
  });

  test.each([['19.999', 'USD'], ['1.5', 'JPY'], ['-1', 'USD'], ['1e3', 'USD'], ['', 'USD'], ['abc', 'USD'], ['0.30000000000000004', 'USD'], ['1,50', 'EUR']])(
    '%s %s is refused, never rounded',
    (text, currency) => {
      expect(normaliseAmount(text, currency)).toBeNull();
    },
  );

  test('minor units', () => {
    expect(fromMinorUnits(2900, 'usd')).toBe('29.00');
    expect(fromMinorUnits('5', 'USD')).toBe('0.05');
    expect(fromMinorUnits('500', 'JPY')).toBe('500');
    expect(fromMinorUnits('1234', 'KWD')).toBe('1.234');
    expect(fromMinorUnits('-1', 'USD')).toBeNull();
    expect(fromMinorUnits('12.5', 'USD')).toBeNull();
  });

  test('currency codes', () => {
    expect(normaliseCurrency(' usd ')).toBe('USD');
    expect(normaliseCurrency('dollars')).toBeNull();
    expect(minorDigits('jpy')).toBe(0);
  });
});
