/**
 * Reading helpers shared by the adapters: body decoding (JSON or form), tolerant field access, and
 * the few conversions every platform needs. Anything that cannot be read throws WebhookParseError,
 * so `parse` never throws another error type.
 */
import { fromMinorUnits, minorDigits, normaliseAmount, normaliseCurrency } from '../domain/money';
import { WebhookParseError, type WebhookRequest } from './adapter';
import { parseJson } from './json';

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body as UTF-8 text, without a leading byte-order mark. */
export function bodyText(request: WebhookRequest): string {
  const raw = Buffer.isBuffer(request.rawBody) ? request.rawBody : Buffer.alloc(0);
  return raw.toString('utf8').replace(/^\uFEFF/, '');
}

/** The body as a JSON object (big integer ids kept as digit strings). */
export function jsonObjectBody(request: WebhookRequest): JsonObject {
  let value: unknown;
  try {
    value = parseJson(bodyText(request));
  } catch {
    throw new WebhookParseError('body is not valid JSON');
  }
  if (!isObject(value)) throw new WebhookParseError('body is not a JSON object');
  return value;
}

/** The body as an application/x-www-form-urlencoded form (never throws; garbage gives odd keys). */
export function formBody(request: WebhookRequest): URLSearchParams {
  return new URLSearchParams(bodyText(request));
}

/** `value` when it is an object, else undefined. */
export function objectAt(value: unknown): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

/** A required object: absent or of another type is a parse error. */
export function requireObject(value: unknown, what: string): JsonObject {
  if (!isObject(value)) throw new WebhookParseError(`${what} is missing or not an object`);
  return value;
}

/** A required array: absent or of another type is a parse error. */
export function requireArray(value: unknown, what: string): unknown[] {
  if (!Array.isArray(value)) throw new WebhookParseError(`${what} is missing or not an array`);
  return value;
}

/** A trimmed non-empty string; numbers are written as JavaScript does (exact for safe integers). */
export function text(value: unknown): string | null {
  if (typeof value === 'string') {
    const trimmed = value.trim();
    return trimmed === '' ? null : trimmed;
  }
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** An order id: a non-empty string as sent, or an integer (big ones already arrive as digit strings). */
export function requireId(value: unknown, what: string): string {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new WebhookParseError(`${what} is not an integer or string id`);
  }
  const id = text(value);
  if (id === null) throw new WebhookParseError(`${what} is missing`);
  return id;
}

/** "first last" from whichever parts are present, or null. */
export function joinName(...parts: unknown[]): string | null {
  const present = parts.map(text).filter((p): p is string => p !== null);
  return present.length === 0 ? null : present.join(' ');
}

/** The first present text among the candidates. */
export function firstText(...candidates: unknown[]): string | null {
  for (const candidate of candidates) {
    const value = text(candidate);
    if (value !== null) return value;
  }
  return null;
}

/** An upper-case ISO code, or null when absent or not a three-letter code. */
export function currencyOf(value: unknown): string | null {
  return typeof value === 'string' ? normaliseCurrency(value) : null;
}

/** A line quantity: absent means 1; otherwise a non-negative integer (number or digit string). */
export function quantityOf(value: unknown, what: string): number {
  if (value === undefined || value === null || value === '') return 1;
  const n = typeof value === 'string' && /^\s*\d{1,9}\s*$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new WebhookParseError(`${what} is not a whole number`);
  }
  return n;
}

/**
 * A decimal amount in whole currency units, written with the currency's minor digits, or null when
 * unknown. A JSON number is read through its shortest round-trip text (`String(29)` is "29",
 * `String(19.99)` is "19.99"), which for any amount of up to 15 significant digits is exactly the
 * digits that were sent; no float arithmetic is done. Too much precision or exponent forms give null.
 */
export function decimalAmount(value: unknown, currency: string | null): string | null {
  if (currency === null) return null;
  const source = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : null) : text(value);
  return source === null ? null : normaliseAmount(source, currency);
}

/**
 * An amount in integer minor units (cents) as a decimal string, or null. `digitsOf`: how many minor
 * digits the platform counts in the currency, when not ISO 4217's.
 */
export function minorAmount(value: unknown, currency: string | null, digitsOf: (currency: string) => number = minorDigits): string | null {
  if (currency === null) return null;
  const source = typeof value === 'number' ? (Number.isSafeInteger(value) ? String(value) : null) : text(value);
  return source === null ? null : fromMinorUnits(source, currency, digitsOf(currency));
}

/** unit × quantity on integer minor units (BigInt), never floats. */
export function multiplyAmount(unit: string | null, quantity: number, currency: string | null): string | null {
  if (unit === null || currency === null) return null;
  if (quantity === 1) return unit;
  const minor = BigInt(unit.replace('.', '')) * BigInt(quantity);
  // fromMinorUnits keeps at most 18 digits; beyond that the amount is not plausible money.
  return fromMinorUnits(minor, currency) ?? null;
}
