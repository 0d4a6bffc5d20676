/**
 * Money as decimal strings, never JavaScript floats. Amounts are normalised to the currency's
 * minor-unit digits ("19.99", "29.00", "500" for JPY).
 */
const ZERO_DECIMAL = new Set([
  'BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV',
  'XAF', 'XOF', 'XPF',
]);
const THREE_DECIMAL = new Set(['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']);

export function minorDigits(currency: string): number {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return 0;
  if (THREE_DECIMAL.has(code)) return 3;
  return 2;
}

const CURRENCY_RE = /^[A-Za-z]{3}$/;
export function normaliseCurrency(currency: string): string | null {
  const trimmed = currency.trim();
  return CURRENCY_RE.test(trimmed) ? trimmed.toUpperCase() : null;
}

const DECIMAL_RE = /^(\d{1,15})(?:\.(\d{1,12}))?$/;

/**
 * Parses a non-negative decimal string and writes it with the currency's minor-unit digits.
 * Returns null when the text is not a plain decimal or has more precision than the currency allows
 * (beyond trailing zeros): rounding someone's money silently is never right.
 */
export function normaliseAmount(text: string, currency: string): string | null {
  const match = DECIMAL_RE.exec(text.trim());
  if (!match) return null;
  const whole = match[1].replace(/^0+(?=\d)/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  const digits = minorDigits(currency);
  if (fraction.length > digits) return null;
  return digits === 0 ? whole : `${whole}.${fraction.padEnd(digits, '0')}`;
}

/**
 * Minor units (integer cents, as sent by some platforms) to a decimal string. `digits`: the
 * platform's minor digits when they are not the currency's own; the amount is then written with the
 * currency's (null when it holds a fraction the currency has not).
 */
export function fromMinorUnits(minor: string | number | bigint, currency: string, digits = minorDigits(currency)): string | null {
  const text = String(minor).trim();
  if (!/^\d{1,18}$/.test(text)) return null;
  let decimal: string;
  if (digits === 0) decimal = text.replace(/^0+(?=\d)/, '');
  else {
    const padded = text.padStart(digits + 1, '0');
    decimal = `${padded.slice(0, -digits).replace(/^0+(?=\d)/, '')}.${padded.slice(-digits)}`;
  }
  return digits === minorDigits(currency) ? decimal : normaliseAmount(decimal, currency);
}

/**
 * Where payments-c's API counts minor units otherwise than ISO 4217 (Stripe's currencies page,
 * special cases): ISK stays two-decimal in its amounts (100 = 1 króna), MGA is zero-decimal.
 */
const PAYMENTS_C_DIGITS: Readonly<Record<string, number>> = { ISK: 2, MGA: 0 };

/** The minor-unit digits of payments-c's amounts in this currency. */
export function paymentsCMinorDigits(currency: string): number {
  return PAYMENTS_C_DIGITS[currency.toUpperCase()] ?? minorDigits(currency);
}
