/**
 * A platform's order-list API (decisions §15), beside its webhook adapter: reads one page of orders
 * changed since a time and maps each to the same NormalizedOrder its webhook gives, so a pulled order
 * goes through the same planning with the same business keys. Plain HTTP GET with the §13 address
 * rules (a name that resolves inward is refused at connection time unless `allowPrivate`).
 */
import http from 'node:http';
import https from 'node:https';
import type { z } from 'zod';
import { checkLiteralHost, publicOnlyLookup } from '../events/addresses';
import type { Platform } from '../domain/platforms';
import { WebhookParseError, type NormalizedOrder } from './adapter';
import { isObject, requireObject, type JsonObject } from './fields';
import { parseJson } from './json';

/** An order as a list gives it: mapped (or why it could not be), and when the platform last changed it. */
export interface ListedOrder {
  order: NormalizedOrder | { unreadable: string };
  /** ISO time; the run's high-water mark is the newest of these. */
  changedAt: string | null;
}

export type OrderListPage =
  | { kind: 'page'; orders: ListedOrder[]; nextCursor: string | null; slowDownMs: number }
  | { kind: 'throttled'; retryAfterMs: number }
  | { kind: 'refused'; reason: string };

export interface OrderListRequest<Credentials> {
  /** An origin, `https://host[:port]`. */
  origin: string;
  credentials: Credentials;
  /** ISO time: orders changed at or after it. */
  since: string;
  /** The platform's cursor of the page to read; null for the first. */
  cursor: string | null;
  allowPrivate: boolean;
}

/** One platform's order-list client: its credentials, its API's default origin, and how to read a page. */
export interface OrderListClient<Credentials extends Record<string, string> = Record<string, string>> {
  readonly platform: Platform;
  /** The credentials' fields in the settings' PUT body. */
  readonly credentials: z.ZodType<Credentials>;
  /** What the platform must grant (read orders only), for the README and the OpenAPI text. */
  readonly scope: string;
  /** How the Integrations page asks for the credentials: each field, its label, and whether it is a secret. */
  readonly credentialFields: ReadonlyArray<{ field: keyof Credentials & string; label: string; secret: boolean }>;
  /** The platform's public API for these credentials, or null when the seller must name it. */
  defaultOrigin(credentials: Credentials): string | null;
  fetchPage(request: OrderListRequest<Credentials>): Promise<OrderListPage>;
}

/** A failure that is neither throttling nor a refusal (5xx, unreadable answer): the activity retries it. */
export class OrderListError extends Error {
  override name = 'OrderListError';
}

export interface JsonAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

const REQUEST_TIMEOUT_MS = 30_000;
const MAX_ANSWER_BYTES = 20 * 1024 * 1024;

/** GET `url` with `headers`; the JSON body (big integer ids kept as digit strings) (undefined when the status is not 2xx or the body is empty). */
export function getJson(url: URL, headers: Record<string, string>, allowPrivate: boolean): Promise<JsonAnswer> {
  if (!allowPrivate) checkLiteralHost(url);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: 'GET',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      ...(allowPrivate ? {} : { lookup: publicOnlyLookup }),
      headers: { accept: 'application/json', 'user-agent': 'delivery-service-reconciliation/1', ...headers },
    }, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) req.destroy(new OrderListError('the order list answer is too large'));
        else chunks.push(chunk);
      });
      response.on('error', reject);
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        const text = Buffer.concat(chunks).toString('utf8');
        if (status < 200 || status >= 300 || text === '') return resolve({ status, headers: response.headers, body: undefined });
        try {
          resolve({ status, headers: response.headers, body: parseJson(text) });
        } catch {
          reject(new OrderListError(`the order list answered ${status} with a body that is not JSON`));
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The array `field` of a list's JSON answer; an answer without it is an error to retry. */
export function listedArray(body: unknown, field: string): unknown[] {
  if (!isObject(body)) throw new OrderListError('the order list is not a JSON object');
  const list = body[field];
  if (!Array.isArray(list)) throw new OrderListError(`the order list has no ${field} array`);
  return list;
}

/**
 * One order of a list, mapped by the adapter's own mapping (`map`), with its change time
 * (`changedAtOf`, an ISO time or null); one that cannot be read is kept as unreadable, not thrown.
 */
export function listedOrder(
  value: unknown, where: string, map: (order: JsonObject) => NormalizedOrder, changedAtOf: (order: JsonObject) => string | null,
): ListedOrder {
  const changedAt = isObject(value) ? changedAtOf(value) : null;
  try {
    return { order: map(requireObject(value, where)), changedAt };
  } catch (error) {
    if (error instanceof WebhookParseError) return { order: { unreadable: error.message }, changedAt };
    throw error;
  }
}

/** The `rel="next"` URL of a Link header, if any. */
export function nextLink(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (!value) return null;
  for (const part of value.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match) return match[1];
  }
  return null;
}

/** Retry-After in seconds (or an HTTP date) as a wait in ms; `fallbackMs` when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now: Date, fallbackMs: number): number {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return fallbackMs;
  const seconds = Number(text);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? fallbackMs : Math.max(0, at - now.getTime());
}

/** The answer to a page request that is not a page: throttled, refused, or an error to retry. */
export function notAPage(answer: JsonAnswer, now: Date): OrderListPage {
  if (answer.status === 429) return { kind: 'throttled', retryAfterMs: retryAfterMs(answer.headers['retry-after'], now, 2_000) };
  if (answer.status === 401 || answer.status === 403) {
    return { kind: 'refused', reason: `the platform refused the credentials (${answer.status === 401 ? '401 Unauthorized' : '403 Forbidden'})` };
  }
  throw new OrderListError(`the order list answered ${answer.status}`);
}
