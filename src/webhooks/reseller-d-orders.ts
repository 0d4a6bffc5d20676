/**
 * reseller-d's order list (FastSpring-style `GET /orders`, decisions §15), beside its webhook adapter.
 * Its API is one public host, `https://api.fastspring.com`, with no path before `/orders`.
 *
 * - Auth: HTTP Basic with the store's API username and password.
 * - Since: `begin` and `end` are dates (`yyyy-mm-dd`), `begin` at least a day before `end`, filtering
 *   by transaction date. The run asks from the day before `since` (the API does not say in which time
 *   zone its days are) to the day after the first page was asked for, so whole days are re-read: the
 *   orders already received among them are `alreadyKnown`.
 * - Pages: numbered, `page` and `limit` (default 50); the answer's `nextPage` names the next one
 *   (null or absent on the last), else `more: true` means there is one after this. The cursor keeps
 *   the `end` of the first page so that every page asks the same range.
 * - `scope=all`: test orders too, as the webhook brings them (fulfilled and marked test).
 * - 429 with `Retry-After` is honoured; 401 refuses the credentials.
 *
 * Each order is the same object the `order.completed` webhook carries as `data`, mapped by the
 * adapter's own `resellerDOrder`; `changed` (milliseconds since the epoch) is its change time.
 */
import { z } from 'zod';
import { getJson, listedArray, listedOrder, notAPage, OrderListError, type OrderListClient, type OrderListPage } from './order-list';
import { resellerDOrder } from './reseller-d';
import type { JsonObject } from './fields';

export const RESELLER_D_ORIGIN = 'https://api.fastspring.com';
const PAGE_SIZE = 50;
const DAY_MS = 86_400_000;

const CredentialsSchema = z.object({
  username: z.string().trim().min(1).max(200).describe('reseller-d: the store\'s API username (Integrations › API Credentials)'),
  password: z.string().min(1).max(500).describe('reseller-d: the API password shown with that username'),
});
export type ResellerDCredentials = z.infer<typeof CredentialsSchema>;

/** A cursor: the page to read and the `end` date every page of the run asks. */
interface Cursor {
  page: number;
  end: string;
}

function dateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function readCursor(cursor: string | null, now: Date): Cursor {
  if (cursor === null) return { page: 1, end: dateOf(now.getTime() + DAY_MS) };
  const match = /^(\d+)@(\d{4}-\d{2}-\d{2})$/.exec(cursor);
  if (!match) throw new OrderListError(`not a reseller-d cursor: ${cursor}`);
  return { page: Number(match[1]), end: match[2] };
}

/** `changed` is milliseconds since the epoch. */
export function changedTime(order: JsonObject): string | null {
  const changed = order.changed;
  return typeof changed === 'number' && Number.isSafeInteger(changed) && changed > 0 ? new Date(changed).toISOString() : null;
}

/** The page after `page`: the answer's `nextPage`, else `more: true`, else none. */
function nextPageOf(body: JsonObject, page: number): number | null {
  const next = body.nextPage;
  if (typeof next === 'number' && Number.isSafeInteger(next) && next > page) return next;
  if (typeof next === 'string' && /^\d+$/.test(next) && Number(next) > page) return Number(next);
  return body.more === true ? page + 1 : null;
}

export const resellerDOrders: OrderListClient<ResellerDCredentials> = {
  platform: 'reseller-d',
  credentials: CredentialsSchema,
  scope: 'the store\'s API credentials (the platform has no read-only scope: keep them to this service)',
  credentialFields: [
    { field: 'username', label: 'API username', secret: false },
    { field: 'password', label: 'API password', secret: true },
  ],
  defaultOrigin: () => RESELLER_D_ORIGIN,

  async fetchPage({ origin, credentials, since, cursor, allowPrivate }): Promise<OrderListPage> {
    const now = new Date();
    const { page, end } = readCursor(cursor, now);
    const url = new URL('/orders', origin);
    url.searchParams.set('begin', dateOf(Date.parse(since) - DAY_MS));
    url.searchParams.set('end', end);
    url.searchParams.set('scope', 'all');
    url.searchParams.set('limit', String(PAGE_SIZE));
    url.searchParams.set('page', String(page));
    const basic = Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64');
    const answer = await getJson(url, { authorization: `Basic ${basic}` }, allowPrivate);
    if (answer.status !== 200) return notAPage(answer, now);
    const orders = listedArray(answer.body, 'orders');
    const next = nextPageOf(answer.body as JsonObject, page);
    return {
      kind: 'page',
      orders: orders.map((order, index) => listedOrder(order, `orders[${index}]`, (o) => resellerDOrder(o, `orders[${index}]`), changedTime)),
      nextCursor: next === null ? null : `${next}@${end}`,
      slowDownMs: 0,
    };
  },
};
