/**
 * Small crypto helpers shared by the platform adapters. Every comparison of a signature, hash or
 * shared secret goes through `safeEqual` (constant time once the lengths match).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { SignatureCheck } from '../domain/integration-health';
import type { WebhookRequest } from './adapter';

type Bytes = Buffer | string;

function toBuffer(value: Bytes): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
}

/** Constant-time equality; different lengths are unequal (the length itself is not secret). */
export function safeEqual(a: Bytes, b: Bytes): boolean {
  const left = toBuffer(a);
  const right = toBuffer(b);
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

export function hmacSha256(key: Bytes, data: Bytes | readonly Bytes[]): Buffer {
  // The key as given: a string is read as UTF-8 as Buffer.from would, and on Node 24 a Buffer key
  // costs five times as much (15 µs against 3: the key-object checks it goes through).
  const mac = createHmac('sha256', key);
  for (const part of Array.isArray(data) ? data : [data as Bytes]) mac.update(toBuffer(part));
  return mac.digest();
}

export function md5Hex(data: Bytes): string {
  return createHash('md5').update(toBuffer(data)).digest('hex');
}

/**
 * The first non-empty value among `names` (the spec's header name first, then the platform's own
 * alias). Names are matched case-insensitively; a repeated header (string[]) gives its first value.
 */
export function headerValue(headers: WebhookRequest['headers'], ...names: string[]): string | undefined {
  for (const name of names) {
    const wanted = name.toLowerCase();
    let value = headers[wanted];
    if (value === undefined) {
      const key = Object.keys(headers).find((k) => k.toLowerCase() === wanted);
      value = key === undefined ? undefined : headers[key];
    }
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string' && first.trim() !== '') return first.trim();
  }
  return undefined;
}

/** A configured secret, or undefined when it is missing or empty (which must never verify). */
export function configured(secret: string | null | undefined): string | undefined {
  return typeof secret === 'string' && secret !== '' ? secret : undefined;
}

/** The answer of a constant-time comparison, as a signature check names it. */
export function matched(equal: boolean): SignatureCheck {
  return equal ? 'verified' : 'signature mismatch';
}

/**
 * The check shared by storefront-a, plugin-b and reseller-d: a header carrying
 * base64(HMAC-SHA256(key, raw body)). The header text is compared as sent (strict base64). Without
 * a key nothing can match (the front door tries configured integrations only).
 */
export function verifyBase64Hmac(request: WebhookRequest, key: string | undefined, headerNames: string[]): SignatureCheck {
  const sent = headerValue(request.headers, ...headerNames);
  if (sent === undefined) return 'signature header missing';
  if (key === undefined) return 'signature mismatch';
  return matched(safeEqual(sent, hmacSha256(key, request.rawBody).toString('base64')));
}
