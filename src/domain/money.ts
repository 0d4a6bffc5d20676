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

/** Minor units (integer cents, as sent by some platforms) to a decimal string. */
export function fromMinorUnits(minor: string | number | bigint, currency: string): string | null {
  const text = String(minor).trim();
  if (!/^\d{1,18}$/.test(text)) return null;
  const digits = minorDigits(currency);
  if (digits === 0) return text.replace(/^0+(?=\d)/, '');
  const padded = text.padStart(digits + 1, '0');
  const whole = padded.slice(0, -digits).replace(/^0+(?=\d)/, '');
  return `${whole}.${padded.slice(-digits)}`;
}
