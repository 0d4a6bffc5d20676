/**
 * plugin-b's order list (WooCommerce REST `GET /wp-json/wc/v3/orders`, decisions §15), beside its
 * webhook adapter. Its API is the shop's own WordPress site, so there is no default origin.
 *
 * - Auth: HTTP Basic with the REST API key, consumer key as user and consumer secret as password (the
 *   documented way over HTTPS; a read-only key is enough to list orders).
 * - Since: `modified_after` with `dates_are_gmt=true`. WordPress compares it strictly ("after") on
 *   whole seconds, so the request asks for one second earlier to include orders changed at `since`.
 * - Pages: by modification time (`orderby=modified&order=asc`, so that the high-water mark follows the
 *   pages read), 50 a request. Not by page number: an order modified while a run reads moves to the
 *   end, every later one moves up a place, and the first of the next page would slide onto the page
 *   already read, skipped for good (the mark passes it). So each next request asks page 1 again from
 *   the last order read's time (one second early, as above), and drops the orders of that second it
 *   has already read (their ids are in the cursor; one modified again since has a later time and is
 *   kept). A page that all falls in one second cannot move that time: then the next numbered page
 *   under the same `modified_after`, so a run always ends. `X-WP-TotalPages` (else `Link: <…>;
 *   rel="next"`) says whether more follow.
 * - WooCommerce itself sets no rate limit, but hosts and security plugins answer 429 with
 *   `Retry-After`, which is honoured.
 *
 * The answer is a bare JSON array of the same order resources the order webhook carries, each mapped
 * by the adapter's own `pluginBOrder`; `date_modified_gmt` (UTC without an offset) is its change time.
 */
import { z } from 'zod';
import { isObject, text } from './fields';
import { getJson, listedOrder, nextLink, notAPage, OrderListError, type ListedOrder, type OrderListClient, type OrderListPage } from './order-list';
import { pluginBOrder } from './plugin-b';

export const PLUGIN_B_API_PATH = '/wp-json/wc/v3';
const PAGE_SIZE = 50;

const CredentialsSchema = z.object({
  consumerKey: z.string().trim().min(4).max(200).regex(/^ck_\w+$/, 'a REST API consumer key, starting ck_')
    .describe('plugin-b: the REST API key\'s consumer key (ck_…), of a key with Read permission'),
  consumerSecret: z.string().trim().min(4).max(200).regex(/^cs_\w+$/, 'a REST API consumer secret, starting cs_')
    .describe('plugin-b: the REST API key\'s consumer secret (cs_…)'),
});
export type PluginBCredentials = z.infer<typeof CredentialsSchema>;

/** `date_modified_gmt` is UTC written without an offset ("2026-01-01T10:10:05"). */
export function gmtTime(value: unknown): string | null {
  const time = text(value);
  if (time === null) return null;
  const at = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/i.test(time) ? time : `${time}Z`);
  return Number.isNaN(at) ? null : new Date(at).toISOString();
}

/** An ISO time as WordPress reads a GMT date: whole seconds, no offset, one second earlier (its "after" is strict). */
function modifiedAfter(since: string): string {
  return new Date(Math.floor(Date.parse(since) / 1000) * 1000 - 1000).toISOString().slice(0, 19);
}

/**
 * Where the next request starts: its `modified_after` (WordPress's format), the numbered page under
 * it, and the ids of the orders already read whose change time is the second after it (at most a page).
 */
const CursorSchema = z.object({
  after: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/),
  page: z.number().int().min(1),
  seen: z.array(z.string()).max(PAGE_SIZE),
});
type Cursor = z.infer<typeof CursorSchema>;

/** The cursor a page activity carries (an opaque string to the workflow); null: the first page from `since`. */
function readCursor(cursor: string | null, since: string): Cursor {
  if (cursor === null) return { after: modifiedAfter(since), page: 1, seen: [] };
  // A run begun before paging by time carries a bare page number: it goes on by number.
  if (/^[1-9]\d{0,5}$/.test(cursor)) return { after: modifiedAfter(since), page: Number(cursor), seen: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(cursor);
  } catch {
    parsed = undefined;
  }
  const checked = CursorSchema.safeParse(parsed);
  if (!checked.success) throw new OrderListError(`not a plugin-b cursor: ${cursor}`);
  return checked.data;
}

/** WordPress's reading of a `modified_after` without an offset (with `dates_are_gmt`), in ms. */
function afterMs(after: string): number {
  return Date.parse(`${after}Z`);
}

/** The whole second (ms) of an ISO change time, or null: WordPress compares whole seconds. */
function secondOf(changedAt: string | null): number | null {
  const at = changedAt === null ? NaN : Date.parse(changedAt);
  return Number.isNaN(at) ? null : Math.floor(at / 1000) * 1000;
}

interface PageOrder {
  /** The order's id as the list gives it (null when the entry has none). */
  id: string | null;
  listed: ListedOrder;
}

/**
 * The next request after a page of `orders` (its ids and change times) read under `cursor`: page 1
 * from the newest order's second, or, when the whole page is in `cursor.after`'s next second (the
 * time cannot move), the next numbered page under the same `modified_after`.
 */
function nextCursor(cursor: Cursor, orders: readonly PageOrder[]): Cursor {
  const seconds = orders.map((o) => secondOf(o.listed.changedAt)).filter((at): at is number => at !== null);
  const newest = seconds.length > 0 ? Math.max(...seconds) : null;
  if (newest !== null) {
    const after = modifiedAfter(new Date(newest).toISOString());
    if (afterMs(after) > afterMs(cursor.after)) {
      const seen = orders.flatMap((o) => (o.id !== null && secondOf(o.listed.changedAt) === newest ? [o.id] : []));
      return { after, page: 1, seen };
    }
  }
  return { ...cursor, page: cursor.page + 1 };
}

function hasNextPage(page: number, totalPages: string | string[] | undefined, link: string | string[] | undefined): boolean {
  const total = Number(Array.isArray(totalPages) ? totalPages[0] : totalPages);
  return totalPages !== undefined && Number.isSafeInteger(total) ? page < total : nextLink(link) !== null;
}

export const pluginBOrders: OrderListClient<PluginBCredentials> = {
  platform: 'plugin-b',
  credentials: CredentialsSchema,
  scope: 'a REST API key with Read permission (WooCommerce › Settings › Advanced › REST API)',
  credentialFields: [
    { field: 'consumerKey', label: 'Consumer key (ck_…, Read permission)', secret: false },
    { field: 'consumerSecret', label: 'Consumer secret (cs_…)', secret: true },
  ],
  defaultOrigin: () => null,

  async fetchPage({ origin, credentials, since, cursor, allowPrivate }): Promise<OrderListPage> {
    const at = readCursor(cursor, since);
    const url = new URL(`${PLUGIN_B_API_PATH}/orders`, origin);
    url.searchParams.set('modified_after', at.after);
    url.searchParams.set('dates_are_gmt', 'true');
    url.searchParams.set('orderby', 'modified');
    url.searchParams.set('order', 'asc');
    url.searchParams.set('per_page', String(PAGE_SIZE));
    url.searchParams.set('page', String(at.page));
    const basic = Buffer.from(`${credentials.consumerKey}:${credentials.consumerSecret}`).toString('base64');
    const answer = await getJson(url, { authorization: `Basic ${basic}` }, allowPrivate);
    if (answer.status !== 200) return notAPage(answer, new Date());
    if (!Array.isArray(answer.body)) throw new OrderListError('the order list is not a JSON array');
    const orders = answer.body.map((order, index): PageOrder => ({
      id: isObject(order) ? text(order.id) : null,
      listed: listedOrder(order, `[${index}]`, pluginBOrder, (o) => gmtTime(o.date_modified_gmt)),
    }));
    // Asked one second early, so the orders of that second the last page gave come again: dropped.
    const boundary = afterMs(at.after) + 1000;
    const fresh = orders.filter((o) => o.id === null || !at.seen.includes(o.id) || secondOf(o.listed.changedAt) !== boundary);
    // An empty page ends the list whatever its headers say.
    const more = orders.length > 0 && hasNextPage(at.page, answer.headers['x-wp-totalpages'], answer.headers.link);
    return {
      kind: 'page',
      orders: fresh.map((o) => o.listed),
      nextCursor: more ? JSON.stringify(nextCursor(at, orders)) : null,
      slowDownMs: 0,
    };
  },
};
