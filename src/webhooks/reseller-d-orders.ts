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
 * - Ids, then orders: like FastSpring's other lists (`GET /subscriptions` answers
 *   `{nextPage, subscriptions: [id…]}`), a page names its orders by id; the orders themselves come
 *   from one `GET /orders/{id1},{id2},…` per page (several ids answer `{orders: […]}`, one id the bare
 *   order). A page that already carries order objects is taken as it is, without the lookup.
 * - `scope=all`: test orders too, as the webhook brings them (fulfilled and marked test).
 * - 429 with `Retry-After` is honoured; 401 refuses the credentials. FastSpring documents its rate
 *   limit as a 404: that stays an error the activity retries with its backoff (then the run ends and
 *   the next starts from the mark), not a throttle to wait out, since a wrong API address answers 404
 *   too and must not keep a run waiting for ever.
 *
 * Each order is the same object the `order.completed` webhook carries as `data`, mapped by the
 * adapter's own `resellerDOrder`; `changed` (milliseconds since the epoch) is its change time.
 */
import { z } from 'zod';
import { getJson, listedArray, listedOrder, notAPage, OrderListError, type JsonAnswer, type ListedOrder, type OrderListClient, type OrderListPage } from './order-list';
import { resellerDOrder } from './reseller-d';
import { isObject, type JsonObject } from './fields';

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

/** The orders of a lookup by ids, by id: an `{orders: […]}` answer's entries, or the bare order one id answers; entries that are errors are left out. */
function lookedUp(body: unknown): Map<string, JsonObject> {
  if (!isObject(body)) throw new OrderListError('the lookup of orders by id is not a JSON object');
  const entries = Array.isArray(body.orders) ? body.orders : [body];
  const byId = new Map<string, JsonObject>();
  for (const entry of entries) {
    if (isObject(entry) && entry.result !== 'error' && typeof entry.id === 'string') byId.set(entry.id, entry);
  }
  return byId;
}

/** A page's orders: its entries as they are when they are objects; ids looked up in one request. */
async function ordersOfPage(
  entries: unknown[], lookup: (ids: string[]) => Promise<JsonAnswer>,
): Promise<{ kind: 'orders'; orders: ListedOrder[] } | { kind: 'lookup-failed'; answer: JsonAnswer }> {
  const ids = entries.filter((entry): entry is string => typeof entry === 'string');
  let byId = new Map<string, JsonObject>();
  if (ids.length > 0) {
    const answer = await lookup(ids);
    if (answer.status !== 200) return { kind: 'lookup-failed', answer };
    byId = lookedUp(answer.body);
  }
  const orders = entries.map((entry, index): ListedOrder => {
    const where = `orders[${index}]`;
    if (typeof entry !== 'string') return listedOrder(entry, where, (o) => resellerDOrder(o, where), changedTime);
    const order = byId.get(entry);
    if (!order) return { order: { unreadable: `order ${entry}: the lookup by id did not return it` }, changedAt: null };
    return listedOrder(order, where, (o) => resellerDOrder(o, where), changedTime);
  });
  return { kind: 'orders', orders };
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
    const headers = { authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` };
    const answer = await getJson(url, headers, allowPrivate);
    if (answer.status !== 200) return notAPage(answer, now);
    const next = nextPageOf(answer.body as JsonObject, page);
    const read = await ordersOfPage(listedArray(answer.body, 'orders'), (ids) =>
      getJson(new URL(`/orders/${ids.map(encodeURIComponent).join(',')}`, origin), headers, allowPrivate));
    if (read.kind === 'lookup-failed') return notAPage(read.answer, now);
    return { kind: 'page', orders: read.orders, nextCursor: next === null ? null : `${next}@${end}`, slowDownMs: 0 };
  },
};
